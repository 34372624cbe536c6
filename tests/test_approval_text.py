"""What the TUI says about approval, as pure functions: the run list's word, colour, title and
"needs attention" order for a run awaiting approval; the editor's text and its checks; the
timeline's rows for requests and decisions."""

from __future__ import annotations

import json

from agentor.engine.argschema import check_schema
from agentor.engine.events import Event
from agentor.engine.history import RunSummary
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED, FAILED, INTERRUPTED, RUNNING
from agentor.sources.runrow import RunRow
from tui.text import notices
from tui.text.arg_edit import args_diff, editor_text, parse_edit
from tui.text.event_views import timeline_line
from tui.text.run_filter import RunFilter, list_title
from tui.text.run_line import run_line
from tui.text.styles import AWAITING_STYLE, STATUS_STYLES

HOTEL = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "nights": {"type": "integer"},
        "board": {"enum": ["room", "breakfast"]},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["city", "nights"],
    "additionalProperties": False,
}


def row(run_id: str, status: str, started: float) -> RunRow:
    summary = RunSummary(run_id=run_id, status=status, started_at=started, first_prompt="hi")
    return RunRow(run_id, summary, status=status, complete=True)


# -- the run list --------------------------------------------------------------------------------


def test_a_run_awaiting_approval_is_pink_counted_first_and_first_in_needs_attention() -> None:
    rows = [
        row("r5", RUNNING, 5),
        row("r4", INTERRUPTED, 4),
        row("r3", AWAITING_APPROVAL, 3),
        row("r2", FAILED, 2),
        row("r1", AWAITING_APPROVAL, 1),
        row("r0", COMPLETED, 0),
    ]
    assert list_title(rows, 40) == (
        "Runs 6 of 40 · 2 awaiting approval · 1 running · 1 interrupted · 1 failed"
    )
    # A narrow pane: shorter words, then the source's last part, then none, then abbreviations.
    label = "~/src/agentor-tui/runs"
    assert list_title(rows, 40, label=label, room=89) == f"{label} · " + (
        "Runs 6 of 40 · 2 awaiting · 1 running · 1 interrupted · 1 failed"
    )
    assert list_title(rows, 40, label=label, room=73) == (
        "…/runs · Runs 6 of 40 · 2 awaiting · 1 running · 1 interrupted · 1 failed"
    )
    assert list_title(rows, 40, label=label, room=64) == (
        "Runs 6 of 40 · 2 awaiting · 1 running · 1 interrupted · 1 failed"
    )
    assert list_title(rows, 40, label=label, room=63) == (
        "Runs 6 of 40 · 2 await. · 1 running · 1 intr. · 1 failed"
    )
    attention = RunFilter(status=1)  # `s` once: needs attention
    assert [r.run_id for r in attention.apply(rows)] == ["r3", "r1", "r4", "r2"]
    assert attention.describe() == "status: needs attention"

    line = run_line(rows[2], now=10)
    assert line.plain.split()[0] == "awaiting"  # after the pin column, blank: not pinned
    assert STATUS_STYLES[AWAITING_APPROVAL] == AWAITING_STYLE
    at = line.plain.index("awaiting")
    assert [s.style for s in line.spans if s.start == at] == [AWAITING_STYLE]


def test_a_resume_that_ends_awaiting_approval_leaves_the_news_to_the_announcement() -> None:
    assert notices.finished("r1", AWAITING_APPROVAL, None, None) is None
    note = notices.awaiting("0123456789abcdef0123456789abcdef", ["book_hotel", "book_hotel"])
    assert note.bell and note.severity == "warning"
    assert note.text.startswith("Run 01234567 awaits approval of book_hotel (2 calls): ")


def test_the_news_of_calls_a_crash_interrupted_names_the_keys_that_decide_them() -> None:
    """Every waiting call interrupted: a runs it again, g gives its result, n says it failed
    (no `e`); some of them: the usual keys, and `g` for those."""
    every = notices.awaiting("r1", ["send"], ["send"]).text
    assert every == (
        "Run r1 awaits a decision on send, interrupted while running: select it and press "
        "enter: a runs it again, g gives the result it had, n tells the model it failed."
    )
    some = notices.waits_for_approval("r1", ["send", "book_hotel"], ["send"]).text
    assert some == (
        "Run r1 cannot go on yet: send and book_hotel (send interrupted while running) waits "
        "for approval; select it and press enter: a approves, e edits, n rejects; g gives a "
        "call that was interrupted the result it had."
    )


# -- the editor ----------------------------------------------------------------------------------


def test_the_editor_shows_text_that_could_steer_a_terminal_as_json_escapes() -> None:
    args = {"city": "Zürich\u202e\x1b[2J\x9b", "nights": 2}
    text = editor_text(args)
    assert "Zürich" in text  # readable text stays as it is
    assert "\\u202e" in text and "\\u001b" in text and "\\u009b" in text
    assert not any(c in text for c in "\u202e\x1b\x9b")
    assert json.loads(text) == args  # the same arguments, approved unchanged


def test_an_edit_is_json_an_object_and_what_the_tool_takes() -> None:
    assert parse_edit('{"city": "Rome",}')[1] == (
        "not valid JSON: Expecting property name enclosed in double quotes (line 1, column 17)"
    )
    assert parse_edit('"Rome"')[1] == "the arguments must be a JSON object {...}, not a string"
    assert parse_edit('{"city": "Rome"}') == ({"city": "Rome"}, None)

    def check(args: dict) -> str | None:
        return check_schema(args, HOTEL)

    assert check({"city": "Rome", "nights": 2}) is None
    assert check({"city": "Rome", "nights": 2.0, "note": None}) is None
    assert check({"city": "Rome"}) == 'missing required property "nights"'
    assert check({"city": "Rome", "nights": 1, "pets": 2}) == (
        'unknown property "pets" (the tool takes city, nights, board, note)'
    )
    assert check({"city": "Rome", "nights": True}) == "nights: must be an integer, not a boolean"
    assert check({"city": "Rome", "nights": 1.5}) == "nights: must be an integer, not a number"
    assert check({"city": "Rome", "nights": 1, "note": 3}) == (
        "note: must be a string or null, not an integer"
    )
    assert check({"city": "Rome", "nights": 1, "board": "full"}) == (
        'board: must be one of "room", "breakfast"'
    )
    assert check_schema({"anything": 1}, None) is None  # no schema recorded: nothing to check


def test_an_edit_is_shown_as_what_it_changed() -> None:
    before = {"city": "Rome", "nights": 2, "note": "x"}
    after = {"city": "Rome", "nights": 3, "board": "breakfast"}
    assert args_diff(before, after) == ["nights: 2 → 3", '- note: "x"', '+ board: "breakfast"']
    assert args_diff({"n": 1}, {"n": 1.0}) == ["n: 1 → 1.0"]  # another JSON type is a change
    assert args_diff([1], {"a": 1}) == ['[1] → {"a": 1}']


# -- the timeline --------------------------------------------------------------------------------


def test_the_timeline_rows_of_a_request_and_its_decisions() -> None:
    request = Event(
        "approval_request",
        call_id="c1",
        name="book_hotel",
        args={"city": "Rome", "nights": 2},
        deadline=1796040000.0 + 3600,
    )
    assert timeline_line(request).plain == (
        'book_hotel(city="Rome", nights=2) · waits for a person · deadline 13:00:00'
    )
    edited = Event(
        "approval",
        call_id="c1",
        name="book_hotel",
        decision="approved",
        by="alice",
        note="one more",
        args={"city": "Rome", "nights": 3},
    )
    assert timeline_line(edited, request=request).plain == (
        "✓ approved by alice · book_hotel · edited: nights: 2 → 3 · one more"
    )
    rejected = Event(
        "approval", call_id="c1", name="book_hotel", decision="rejected", by="bob", note="no"
    )
    assert timeline_line(rejected, request=request).plain == "✗ rejected by bob · book_hotel · no"
    # A name from the log is shown literally, never obeyed.
    odd = Event("approval", call_id="c1", name="x", decision="approved", by="\x1b[31mmallory")
    assert timeline_line(odd).plain == "✓ approved by ␛[31mmallory · x"
