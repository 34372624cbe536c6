"""What the screen says about gated calls: a row of the approvals pane, the highlighted call's
arguments beside it, and the timeline lines of `approval_request` and `approval` events.

Every `Text` here is assembled from plain strings passed through `literal`/`literal_line`,
never from markup, so nothing in a log can style or control the terminal.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from agentor.engine.approval.pending import TIMEOUT_BY, Decision, PendingCall
from agentor.engine.events import Event
from agentor.literal import literal_line
from agentor.sources.gated import GatedCall
from tui.text.arg_edit import args_diff
from tui.text.detail import DetailText, append_value, heading
from tui.text.formatting import relative_time
from tui.text.styles import AWAITING_STYLE, ERROR_STYLE
from tui.text.timeline_line import (
    LINE_LIMIT,
    REJECTED_MARK,
    call_line,
    decision_mark,
    time_of_day,
    value_line,
)

WAITING_MARK = "●"
# A call a crash interrupted while it ran: what it did is for a person to say.
INTERRUPTED_MARK = "⚠"
INTERRUPTED_HINT = "a run again · g give its result · n it failed"
RESULT_TITLE = "Give the result it had"
RESULT_PLACEHOLDER = "the result it returned (recorded as such; it is not run again)"
NO_RESULT = "a result is needed: the model gets it as the tool's answer"


def deadline_words(call_deadline: float | None, now: float) -> str:
    """`deadline 15:02:11 (in 57m)`, `no deadline`."""
    if call_deadline is None:
        return "no deadline"
    return f"deadline {time_of_day(call_deadline)} ({relative_time(call_deadline, now)})"


def asked_words(requested_at: float | None, now: float) -> str:
    """`14:02:11 (3m ago)`."""
    return f"{time_of_day(requested_at)} ({relative_time(requested_at, now)})"


def decision_words(decided: Decision) -> str:
    """`approved by alice at 14:05:11, edited · "one is enough"`, `rejected by bob: too dear`."""
    words = f"{decided.decision} by {literal_line(decided.by, 60)} at {time_of_day(decided.at)}"
    if decided.given:
        words += f", gave the result it had: {value_line(decided.result, 80)}"
    if decided.approved:
        if decided.edited:
            words += ", edited"
        if decided.note:
            words += f" · {literal_line(decided.note, 200)}"
    elif decided.by != TIMEOUT_BY or decided.note:
        words += f": {literal_line(decided.note or 'no reason given', 200)}"
    return words


def pane_row(gated: GatedCall, now: float) -> Text:
    """One gated call in the approvals pane: its state, the call, when and until when."""
    call, decided = gated.call, gated.decision
    out = Text(no_wrap=True, overflow="ellipsis")
    if decided is not None:
        mark, style = decision_mark(decided)
        out.append(mark + " ", style)
    elif call.expired(now):
        out.append(REJECTED_MARK + " ", ERROR_STYLE)
    elif call.interrupted:
        out.append(INTERRUPTED_MARK + " ", AWAITING_STYLE)
    else:
        out.append(WAITING_MARK + " ", AWAITING_STYLE)
    out.append(call_line(call.name, call.args, LINE_LIMIT), "bold")
    if decided is not None:
        out.append("  " + decision_words(decided), _decision_style(decided))
    elif call.expired(now):
        out.append(f"  timed out at {time_of_day(call.deadline)}: counts as rejected", ERROR_STYLE)
    elif gated.answered:
        out.append("  answered", "dim")
    elif call.interrupted:
        out.append(f"  {literal_line(call.reason or '', 80)}", AWAITING_STYLE)
        out.append(f" · {started_words(call, now)}", "dim")
    else:
        when = asked_words(call.requested_at, now)
        out.append(f"  waiting · asked {when} · {deadline_words(call.deadline, now)}", "dim")
    return out


def started_words(call: PendingCall, now: float) -> str:
    """`started 14:02:11 (3m ago) in process 4242 on build-7`: where an interrupted call ran."""
    where = f"process {call.pid if call.pid is not None else '?'} on {call.host or '?'}"
    return literal_line(f"started {asked_words(call.started_at, now)} in {where}", 200)


def _decision_style(decided: Decision) -> str:
    return decision_mark(decided)[1]


def call_detail(gated: GatedCall, now: float) -> DetailText:
    """The highlighted call beside the list: its fields, its arguments as pretty JSON, and
    an edit's arguments with what it changed."""
    call, decided = gated.call, gated.decision
    out = DetailText()
    out.append(literal_line(call.name, 80), "bold")
    out.append(f"  {literal_line(call.call_id, 80)}", "dim")
    out.append("\n")
    rows = [
        ("turn", str(call.turn) if call.turn is not None else "-", ""),
        ("asked", asked_words(call.requested_at, now), ""),
        ("deadline", deadline_words(call.deadline, now).removeprefix("deadline "), ""),
    ]
    if call.server:
        rows.insert(1, ("server", literal_line(call.server, 80), ""))
    if call.interrupted:
        rows[1:1] = [
            ("why", literal_line(call.reason or "", 80), AWAITING_STYLE),
            ("ran", started_words(call, now).removeprefix("started "), ""),
        ]
        if gated.waiting(now):  # decided (or timed out): there is nothing left to choose
            rows.insert(3, ("choose", INTERRUPTED_HINT, "dim"))
    if decided is not None:
        rows.append(("decision", decision_words(decided), _decision_style(decided)))
    out.fields(rows)
    _arguments(out, call.args, decided)
    return out


def _arguments(out: DetailText, asked: Any, decided: Decision | None) -> None:
    """The requested arguments; for an edit, the approved ones and the change between them."""
    edited = decided is not None and decided.edited
    heading(out, "Requested arguments" if edited else "Arguments")
    append_value(out, asked)
    if decided is not None and decided.edited:
        heading(out, "Approved arguments (edited)")
        append_value(out, decided.args)
        heading(out, "Changes")
        for line in args_diff(asked, decided.args) or ["none"]:
            out.block(Text(literal_line(line, 400)))


def request_sections(out: DetailText, e: Event, decided: Decision | None, now: float) -> None:
    """An `approval_request`'s detail beyond its fields: its arguments, and its decision."""
    heading(out, "Decision")
    if decided is not None:
        out.block(Text(decision_words(decided), _decision_style(decided)))
    elif e.deadline is not None and now >= e.deadline:
        out.block(Text("none, and the deadline passed: it counts as rejected", ERROR_STYLE))
    else:
        out.block(Text("none yet: a, e or n in the approvals pane, or agentor approve", "dim"))
    _arguments(out, e.args, decided)


def approval_sections(out: DetailText, e: Event, request: Event | None) -> None:
    """An `approval`'s detail beyond its fields: the arguments asked for and those approved."""
    decided = Decision.of(e)
    if request is None:
        heading(out, "Requested arguments")
        out.block(Text("(the request is not in the log's last lines)", "dim"))
        if decided is not None and decided.edited:
            heading(out, "Approved arguments (edited)")
            append_value(out, decided.args)
        return
    _arguments(out, request.args, decided)
    if decided is not None and decided.approved and not decided.edited:
        out.block(Text("approved as requested", "dim"))
