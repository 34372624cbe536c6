"""Human approval in the TUI: the approvals pane of a run awaiting approval, its keys (`a`, `A`,
`e`, `n`), the argument editor and the reason asked for a rejection, a run resumed live once
every call is decided, two TUIs deciding one call, a decision from the shell shown live, and
the news that a run has started waiting.

The runs are real: written by the engine (`tests.approvalkit.Travel`: a gated `book_hotel` and
an ungated `get_weather`, on a scripted model), decided by the engine's `approve`/`reject`.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.notifications import Notification
from textual.widgets import TextArea

from agentor import approve
from agentor.agents import AgentSet
from agentor.engine.events import APPROVAL, TOOL_RESULT, Event
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.file import FileStore
from tests.app_support import (
    NOW,
    SAMPLE_MANIFEST,
    SIZE,
    OneAgent,
    copy_samples,
    fixed_clock,
    notifications,
    priced,
    screen_text,
    terminal_output,
    toasts,
    wait_until,
    write_log,
)
from tests.approvalkit import TRAVEL_PROMPT, Travel
from tests.conftest import ROOT
from tests.test_app_literal import CLEAR, NASTY
from tui.app import RunsApp
from tui.text.notices import Note
from tui.widgets.args_editor import ArgsEditor
from tui.widgets.reason_screen import ReasonScreen

ROME = ("book_hotel", {"city": "Rome", "nights": 2})
MILAN = ("book_hotel", {"city": "Milan", "nights": 1})
WEATHER = ("get_weather", {"city": "Rome"})
AGENTOR = Path(sys.executable).parent / "agentor"


async def awaiting_run(runs: Path, *asks: tuple[str, dict[str, Any]]) -> tuple[Travel, str]:
    """A run of the travel agent paused at its gated calls (`asks`, else Rome and weather)."""
    travel = Travel(FileStore(runs))
    if asks:
        travel.asks = list(asks)
    result = await travel.agent.arun(TRAVEL_PROMPT)
    assert result.status == AWAITING_APPROVAL
    return travel, result.run_id


def approvals_in(runs: Path, run_id: str) -> list[Event]:
    return [e for e in FileStore(runs).load(run_id) if e.type == APPROVAL]


def tui(runs: Path, travel: Travel | None = None, by: str = "alice", watch: bool = False):
    agents = OneAgent(travel.agent) if travel is not None else OneAgent(None)
    return RunsApp(runs, agents=agents, watch=watch, clock=fixed_clock, by=by)


async def open_approvals(pilot: Any, app: RunsApp, run_id: str) -> None:
    """Select the run in the list and go into its approvals pane (enter)."""
    assert app.runs_screen.run_list.select(run_id)
    await pilot.pause()
    await pilot.press("enter")
    await wait_until(
        pilot, lambda: app.focused is app.runs_screen.approval_pane.call_list, what="focus"
    )


async def edit_to(pilot: Any, editor: ArgsEditor, text: str) -> str:
    """Replace the editor's text as typing would (each edit is checked); what it says then."""
    area = editor.query_one("#editor-text", TextArea)
    area.clear()
    area.insert(text)
    await pilot.pause()
    return str(editor.query_one("#editor-status").render())


# -- a, A: approve -------------------------------------------------------------------------------


async def test_a_approves_the_highlighted_call_and_without_an_agent_says_how_to_go_on(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    travel, run_id = await awaiting_run(runs, ROME, MILAN)
    app = tui(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        pane = screen_text(app)
        assert "Approval · run" in pane and "2 of 2 waiting" in pane
        assert "─ a approve · A all · e edit · n reject ─" in pane  # focused: its keys
        assert 'book_hotel(city="Rome", nights=2)' in pane and '"nights": 2' in pane
        footer = pane.splitlines()[-1]  # the footer names the pane's keys
        for key in ("a Approve", "A Approve all", "e Edit & approve", "n Reject"):
            assert key in footer
        await pilot.press("down", "a")  # Milan's call
        await wait_until(pilot, lambda: approvals_in(runs, run_id), what="the decision")
        (made,) = approvals_in(runs, run_id)
        assert (made.call_id, made.decision, made.by) == ("c1_1", "approved", "alice")
        told = await wait_until(
            pilot, lambda: [n for n in notifications(app) if "Approved" in n], what="notice"
        )
        assert "1 call still waits" in told[0]
        await wait_until(pilot, lambda: "1 of 2 waiting" in screen_text(app), what="redraw")
        assert "✓ book_hotel" in screen_text(app) and "approved by alice" in screen_text(app)

        await pilot.press("up", "a")  # Rome's: now every call is decided, and no agent here
        told = await wait_until(
            pilot, lambda: [n for n in notifications(app) if "Every call" in n], what="notice"
        )
        assert f"agentor resume {run_id} --agent SPEC" in told[0]
        assert "no --agent here serves this run" in told[0]
    assert travel.ran == []  # nothing ran: the run waits for a resume
    assert [e.call_id for e in approvals_in(runs, run_id)] == ["c1_1", "c1_0"]


async def test_capital_a_approves_every_call_and_an_agent_resumes_the_run_live(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    travel, run_id = await awaiting_run(runs, ROME, MILAN, WEATHER)
    app = tui(runs, travel)
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        await pilot.press("A")
        done = await wait_until(
            pilot, lambda: [n for n in notifications(app) if "completed" in n], what="the end"
        )
        assert "Booked 2 night(s) in Rome. | Booked 1 night(s) in Milan." in done[0]
        assert any("resuming the run here" in n for n in notifications(app))
        await wait_until(pilot, lambda: app.source.get(run_id).status == COMPLETED)
        assert app.runs_screen.approval_pane.display is False  # no call waits: the pane is gone
        assert app.focused is app.runs_screen.timeline  # where the resumed run's events came in
    assert [(e.call_id, e.by) for e in approvals_in(runs, run_id)] == [
        ("c1_0", "alice"),
        ("c1_1", "alice"),
    ]
    # Each gated call ran once, after its approval; the ungated one before the pause.
    assert travel.executed("book_hotel") == [("book_hotel", "Rome", 2), ("book_hotel", "Milan", 1)]
    assert travel.executed("get_weather") == [("get_weather", "Rome", 0)]


# -- e: edit, then approve -----------------------------------------------------------------------


async def test_e_shows_bad_edits_inline_never_saves_them_and_approves_a_good_one(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    travel, run_id = await awaiting_run(runs)
    app = tui(runs, travel)
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        await pilot.press("e")
        editor = await wait_until(pilot, lambda: isinstance(app.screen, ArgsEditor) and app.screen)
        assert "unchanged" in str(editor.query_one("#editor-status").render())

        said = await edit_to(pilot, editor, '{"city": "Rome", "nights": }')
        assert "not valid JSON: Expecting value (line 1, column 28)" in said
        await pilot.press("ctrl+s")  # refused: the editor stays, nothing is written
        assert app.screen is editor and approvals_in(runs, run_id) == []
        assert "must be a JSON object {...}, not an array" in await edit_to(pilot, editor, "[2]")
        said = await edit_to(pilot, editor, '{"city": "Rome", "nights": "many"}')
        assert "nights" in said and "valid integer" in said  # the tool's own check
        await pilot.press("ctrl+s")
        assert app.screen is editor and approvals_in(runs, run_id) == []

        said = await edit_to(pilot, editor, '{"city": "Rome", "nights": 3}')
        assert "✓ valid" in said
        await pilot.press("tab", *"one more", "ctrl+s")
        await wait_until(pilot, lambda: approvals_in(runs, run_id), what="the decision")
        await wait_until(pilot, lambda: app.source.get(run_id).status == COMPLETED)
        (made,) = approvals_in(runs, run_id)
        assert (made.args, made.note, made.by) == (
            {"city": "Rome", "nights": 3},
            "one more",
            "alice",
        )

        # The timeline's decision row shows the edit as a diff; its detail both argument sets.
        rows = screen_text(app)
        assert "✓ approved by alice · book_hotel · edited: nights: 2 → 3 · one mo" in rows
        timeline = app.runs_screen.timeline
        line = next(
            i for i in range(len(timeline.run_log)) if timeline.run_log.item(i).type == APPROVAL
        )
        timeline.move_cursor(line)
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert "Requested arguments" in detail and "Approved arguments (edited)" in detail
        assert '"nights": 2' in detail and '"nights": 3' in detail and "nights: 2 → 3" in detail
    assert travel.executed("book_hotel") == [("book_hotel", "Rome", 3)]
    result = next(
        e for e in FileStore(runs).load(run_id) if e.type == TOOL_RESULT and e.name == "book_hotel"
    )
    assert result.args == {"city": "Rome", "nights": 3}


async def test_without_an_agent_an_edit_is_checked_against_the_schema_the_run_recorded(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    _, run_id = await awaiting_run(runs)
    app = tui(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        await pilot.press("e")
        editor = await wait_until(pilot, lambda: isinstance(app.screen, ArgsEditor) and app.screen)
        said = await edit_to(pilot, editor, '{"city": "Rome", "nights": "many"}')
        assert "nights: must be an integer, not a string" in said
        assert 'missing required property "city"' in await edit_to(pilot, editor, '{"nights": 1}')
        await pilot.press("ctrl+s")
        assert app.screen is editor
        await pilot.press("escape")  # leaves without deciding
        await wait_until(pilot, lambda: app.screen is not editor)
    assert approvals_in(runs, run_id) == []


# -- n: reject, with a reason --------------------------------------------------------------------


async def test_n_asks_for_a_reason_and_the_model_is_told_it(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    travel, run_id = await awaiting_run(runs)
    app = tui(runs, travel)
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        await pilot.press("n")
        asking = await wait_until(
            pilot, lambda: isinstance(app.screen, ReasonScreen) and app.screen
        )
        await pilot.press("enter")  # no reason: refused, said so
        said = str(asking.query_one("#reason-status").render())
        assert "a reason is needed" in said and app.screen is asking
        assert approvals_in(runs, run_id) == []
        await pilot.press(*"too dear", "enter")
        await wait_until(pilot, lambda: app.source.get(run_id).status == COMPLETED)
        (made,) = approvals_in(runs, run_id)
        assert (made.decision, made.note, made.by) == ("rejected", "too dear", "alice")
        assert "✗ rejected by alice · book_hotel · too dear" in screen_text(app)
    assert travel.executed("book_hotel") == []
    answer = next(
        e for e in FileStore(runs).load(run_id) if e.type == TOOL_RESULT and e.name == "book_hotel"
    )
    assert answer.error == "rejected by alice: too dear"


# -- e and n elsewhere, r on a waiting run -------------------------------------------------------


async def test_in_the_timeline_e_and_n_keep_their_meaning_and_r_says_the_run_waits(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    travel, run_id = await awaiting_run(runs)
    asked = len(travel.model.requests)
    app = tui(runs, travel)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(run_id)
        await pilot.press("r")  # a resume would only pause again: refused, saying why
        told = await wait_until(
            pilot, lambda: [n for n in notifications(app) if "cannot go on" in n]
        )
        assert "book_hotel waits for approval" in told[0] and "enter: a approves" in told[0]
        await pilot.press("enter", "tab")  # the approvals, then the timeline
        assert app.focused is app.runs_screen.timeline
        await pilot.press("n", "e")
        await pilot.pause()
        assert not isinstance(app.screen, ArgsEditor | ReasonScreen)
        assert "no error below" in screen_text(app)  # `e` went to the next error
    assert len(travel.model.requests) == asked and approvals_in(runs, run_id) == []


# -- two TUIs, and the shell ---------------------------------------------------------------------


async def test_two_tuis_deciding_one_call_the_first_wins_and_the_second_is_told_who(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    _, run_id = await awaiting_run(runs)
    first, second = tui(runs, by="alice"), tui(runs, by="bob")
    async with first.run_test(size=SIZE) as one, second.run_test(size=SIZE) as two:
        await open_approvals(one, first, run_id)
        await open_approvals(two, second, run_id)  # both show the call waiting
        await one.press("a")
        await wait_until(one, lambda: approvals_in(runs, run_id), what="alice's decision")
        await two.press("n", *"no", "enter")  # bob, who has not seen it yet: refused
        told = await wait_until(
            two, lambda: [n for n in notifications(second) if "Not recorded" in n], what="refusal"
        )
        assert "call c1_0 (book_hotel) of run" in told[0]
        assert "was already approved by alice at" in told[0]
        # Bob's pane reads the run again: it shows who decided (no watch needed).
        await wait_until(two, lambda: "approved by alice" in screen_text(second), what="redraw")
    assert [(e.decision, e.by) for e in approvals_in(runs, run_id)] == [("approved", "alice")]


async def test_agentor_approve_from_a_shell_shows_live_in_the_tui(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    travel, run_id = await awaiting_run(runs)
    app = tui(runs, travel, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(run_id)
        await wait_until(pilot, lambda: app.watcher.armed, what="the watch")
        await wait_until(pilot, lambda: "1 of 1 waiting" in screen_text(app))
        done = await asyncio.to_thread(
            subprocess.run,
            [str(AGENTOR), "approve", run_id, "--by", "carol", "--dir", str(runs)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
        assert done.returncode == 0, done.stderr
        await wait_until(pilot, lambda: "approved by carol" in screen_text(app), what="live")
        shown = screen_text(app)
        assert "no call waits: r resumes it" in shown
        assert "✓ approved by carol · book_hotel" in shown  # the timeline's row
        # Decided elsewhere: this app leaves the run to whoever decided (no resume here).
        assert not app.resumer.running and travel.executed("book_hotel") == []


# -- the news ------------------------------------------------------------------------------------


async def test_a_run_that_starts_waiting_is_announced_once_with_the_bell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    _, old = await awaiting_run(runs)  # waiting before the app starts: counted, not announced
    app = tui(runs, watch=True)
    rings: list[int] = []
    monkeypatch.setattr(app, "bell", lambda: rings.append(1))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.watcher.armed, what="the watch")
        assert "Runs 1 · 1 awaiting approval" in screen_text(app)
        _, new = await awaiting_run(runs)
        told = await wait_until(
            pilot, lambda: [n for n in notifications(app) if "awaits approval" in n], what="news"
        )
        assert told == [
            f"Run {new[:8]} awaits approval of book_hotel: select it and press "
            "enter: a approves, e edits, n rejects."
        ]
        assert rings == [1]
        await wait_until(pilot, lambda: "Runs 2 · 2 awaiting approval" in screen_text(app))
        # The same pause changing again is no news: a decision recorded, still awaiting; a
        # line that is no event (the row is read again and says so).
        approve(FileStore(runs), new, by="dave")
        with (runs / f"{new}.jsonl").open("a") as log:
            log.write("not an event\n")
        await wait_until(pilot, lambda: app.source.get(new).error, what="the bad line")
        assert app.source.get(new).status == AWAITING_APPROVAL
        assert rings == [1] and len([n for n in notifications(app) if "awaits" in n]) == 1
        assert old not in " ".join(notifications(app))


async def test_a_run_that_pauses_while_the_fill_reads_it_is_announced(tmp_path: Path) -> None:
    """A fork here writes its run, each write followed by a refresh (`Forker.Progress`); the
    fill worker, in its thread, may read the run whole between a write and its refresh, the
    pause included: the news is told all the same."""
    _, run_id = await awaiting_run(tmp_path / "made")
    lines = (tmp_path / "made" / f"{run_id}.jsonl").read_bytes().splitlines(keepends=True)
    runs = tmp_path / "runs"
    runs.mkdir()
    app = tui(runs)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await priced(pilot)  # the fill at start is over
        log = runs / f"{run_id}.jsonl"
        log.write_bytes(b"".join(lines[:-1]))  # the run arrives, not waiting yet
        app.runs_screen.apply_changes(app.source.refresh([run_id]))  # as a fork's start does
        assert app.source.get(run_id).status != AWAITING_APPROVAL
        with log.open("ab") as f:
            f.write(lines[-1])  # it pauses ...
        assert app.source.fill() == [run_id]  # ... the fill reads that first ...
        app.watcher.refresh_run(run_id)  # ... then the refresh the write asked for
        told = await wait_until(
            pilot, lambda: [n for n in notifications(app) if "awaits approval" in n], what="news"
        )
        assert told[0].startswith(f"Run {run_id[:8]} awaits approval of book_hotel")


async def test_after_approve_resume_and_fork_a_few_short_notes_show_the_newest_of_each_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    travel, run_id = await awaiting_run(runs, ROME, MILAN, WEATHER)
    app = tui(runs, travel)
    # What the app asks of each toast's life is recorded; the toasts themselves stay up
    # (tests/conftest.py), so on a slow machine none leaves by its timer before the test looks:
    # what takes one down here is a newer note of its kind, or the few-at-most rule.
    asked = app.shown_notes.asked

    def shown(text: str) -> list[Notification]:
        """The notifications on screen (as toasts) whose text holds `text`."""
        on_screen = set(toasts(app))
        return [
            n
            for n in app._notifications
            if text in n.message and f"{n.title}\n{n.message}" in on_screen
        ]

    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_approvals(pilot, app, run_id)
        await pilot.press("a")
        [first] = await wait_until(pilot, lambda: shown("1 call still waits"), what="a toast")
        await pilot.press("A")  # the rest: the run is resumed here and completes
        await wait_until(pilot, lambda: shown("Every call is decided"), what="the next")
        # The newer decision took the place of the older, which had time left to stay.
        assert not shown("1 call still waits") and first.time_left > 0
        await wait_until(pilot, lambda: shown(f"Run {run_id[:8]} completed"), what="the end")

        app.runs_screen.open_run(run_id)
        app.screen.set_focus(app.runs_screen.timeline)
        app.runs_screen.timeline.move_cursor(1)  # the first generation: asked again, the fork waits
        await pilot.press("F")
        await wait_until(pilot, lambda: app.screen is not app.screen_stack[0], what="the form")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: shown("waits for approval."), what="the fork's end")
        await wait_until(pilot, lambda: shown("awaits approval of"), what="the news")
        # One note about the fork (its end took its start's place), and a few at most.
        assert len([t for t in toasts(app) if t.startswith("Fork\n")]) == 1
        assert len(toasts(app)) <= 3
        assert asked and all(t <= 10 for t in asked)


async def test_a_toast_taken_down_is_not_counted_on_screen_while_its_removal_is_pending(
    tmp_path: Path,
) -> None:
    """`toasts()`, what the notes tests count: Textual takes a toast down by pruning it, a
    message the toast handles later; until then it is in the DOM, but no longer displayed."""
    (tmp_path / "runs").mkdir()
    app = tui(tmp_path / "runs")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.tell_note(Note("Older", title="Fork", kind="fork"))
        await wait_until(pilot, lambda: toasts(app) == ["Fork\nOlder"], what="the first")
        app.tell_note(Note("Newer", title="Fork", kind="fork"))
        rack = app.screen.query_one("ToastRack")
        rack.show(app._notifications)  # what the app has queued, done now: the older leaves
        assert "Fork\nOlder" not in toasts(app)
        await wait_until(pilot, lambda: toasts(app) == ["Fork\nNewer"], what="the newer")


# -- make demo -----------------------------------------------------------------------------------


async def test_the_demo_approves_the_sample_booking_and_the_run_goes_on_offline(
    tmp_path: Path,
) -> None:
    """`make demo`: the samples, the weather agent of examples/weather.py on the offline model."""
    runs = copy_samples(tmp_path / "runs")
    run_id = SAMPLE_MANIFEST["awaiting_approval"]["run_id"]
    agents = AgentSet.load([f"{ROOT / 'examples' / 'weather.py'}:agent"])
    app = RunsApp(runs, agents=agents, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        assert "1 awaiting approval" in screen_text(app)
        await open_approvals(pilot, app, run_id)
        assert 'book_hotel(city="Rome", nights=2)' in screen_text(app)
        await pilot.press("e")
        editor = await wait_until(pilot, lambda: isinstance(app.screen, ArgsEditor) and app.screen)
        await edit_to(pilot, editor, '{"city": "Rome", "nights": 3}')
        await pilot.press("ctrl+s")
        done = await wait_until(
            pilot, lambda: [n for n in notifications(app) if "completed" in n], what="the end"
        )
        assert "Booked a room in Rome for 3 nights." in done[0]
        assert "The weather in Rome is sunny" in done[0]
        await wait_until(pilot, lambda: app.source.get(run_id).status == COMPLETED)


# -- deadlines and text from logs ----------------------------------------------------------------


def crafted_gated_run(runs: Path, name: str, args: Any, deadline: float | None) -> str:
    """A run paused at one gated call, written line by line (fixed times, any name and args)."""
    run_id = "crafted-gated"
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    user = [{"role": "user", "content": "go"}]
    write_log(
        runs,
        run_id,
        [
            {"type": "run_start", "agent": "Travel Agent", "ts": NOW - 600, "messages": user},
            {"type": "generation", "turn": 1, "calls": [call], "messages": user, "ts": NOW - 599},
            {"type": "tool_call", "turn": 1, "name": name, "call_id": "c1", "args": args},
            {
                "type": "approval_request",
                "turn": 1,
                "name": name,
                "call_id": "c1",
                "args": args,
                "deadline": deadline,
                "ts": NOW - 599,
            },
            {"type": "run_end", "status": "awaiting_approval", "ts": NOW - 599},
        ],
    )
    return run_id


async def test_a_call_past_its_deadline_shows_it_counts_as_rejected_and_is_not_decided(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    run_id = crafted_gated_run(runs, "book_hotel", {"city": "Rome"}, deadline=NOW - 60)
    app = tui(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        shown = screen_text(app)
        assert '✗ book_hotel(city="Rome")  timed out at 11:59:00: counts as rejected' in shown
        assert "no call waits: no --agent here serves it" in shown  # r would say so too
        await pilot.press("a")
        told = await wait_until(pilot, lambda: [n for n in notifications(app) if "does not" in n])
        assert told == [
            "book_hotel (c1) does not wait for a decision: its deadline passed: it counts as "
            "rejected."
        ]
    assert approvals_in(runs, run_id) == []


async def test_a_gated_calls_name_and_arguments_are_shown_literally(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    run_id = crafted_gated_run(runs, f"tool{CLEAR}", {"city": NASTY}, deadline=None)
    app = tui(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        shown = screen_text(app)
        assert 'tool␛[2J(city="[bold red]x[/] \\u001b[2J' in shown  # JSON keeps them escaped
        assert "tool␛[2J  c1" in shown  # the name beside the arguments
        await pilot.press("e")  # the editor: escapes written as JSON escapes, inert
        editor = await wait_until(pilot, lambda: isinstance(app.screen, ArgsEditor) and app.screen)
        text = editor.query_one("#editor-text", TextArea).text
        assert "\\u001b]52;c;Zm9v\\u0007" in text and "\x1b" not in text
        out = terminal_output(app)
        assert not any(raw in out for raw in ("\x1b[2J", "\x1b]52", "\x07"))


async def test_a_deadline_passing_while_the_tui_is_open_shows_at_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    run_id = crafted_gated_run(runs, "book_hotel", {"city": "Rome"}, deadline=NOW + 30)
    now = [NOW]
    app = RunsApp(runs, agents=OneAgent(None), watch=True, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        assert "waiting · asked 11:50:01 (9m ago) · deadline 12:00:30 (in 30s)" in screen_text(app)
        now[0] = NOW + 31  # the clock passes the deadline: the next tick shows it
        await wait_until(pilot, lambda: "timed out at 12:00:30" in screen_text(app), what="tick")
        assert "no call waits: no --agent here serves it" in screen_text(app)
