"""What one timeline row says about an event: `get_weather(city="London")`, the result or the
error, a generation's tool requests or text with its tokens, the end status. One function a type
of event, each given the row's `Text` to write into and what the row knows besides the event
(`Row`); tui.text.event_views says which is whose.

Every `Text` here is assembled from plain strings passed through `literal_line`, never from
markup, so nothing in a log can style or control the terminal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from agentor.engine.approval.pending import APPROVED, Decision
from agentor.engine.events import Event
from agentor.engine.fork.recording import DRIFT, SERVED, marked_answer
from agentor.engine.history import call_parts, first_user_text
from agentor.engine.mcp_record import record_notes
from agentor.engine.statuses import FAILED
from agentor.fleet.claims import marker_words
from agentor.literal import literal_line
from tui.text.arg_edit import args_diff
from tui.text.fork_text import fork_words
from tui.text.formatting import clock_time, token_count
from tui.text.styles import (
    ANSWER_STYLES,
    AWAITING_STYLE,
    DECISION_STYLES,
    ERROR_STYLE,
    FALLBACK_STYLE,
    FORK_STYLE,
    STATUS_STYLES,
)

LINE_LIMIT = 160
# A decision's mark: approved, or any other (a rejection).
DECISION_MARKS = {APPROVED: "✓"}
REJECTED_MARK = "✗"


@dataclass(frozen=True)
class Row:
    """What a timeline row knows besides its event: `segment` numbers the run_start rows;
    `request` is the `approval_request` an `approval` decides (its edit is shown as a diff);
    `cost`, what a generation cost ("$0.0021", "–" unknown); `fork`, the `fork` event just
    before a run_start (the start of a fork's own first segment)."""

    segment: int = 1
    request: Event | None = None
    cost: str = ""
    fork: Event | None = None


def decision_mark(decided: Decision) -> tuple[str, str]:
    """A decision's mark and its style: `✓` green, `✗` red."""
    return (
        DECISION_MARKS.get(decided.decision, REJECTED_MARK),
        DECISION_STYLES.get(decided.decision, ERROR_STYLE),
    )


def time_of_day(t: float | None) -> str:
    """`14:02:11`: a time of day (UTC), as the detail's full times write it."""
    return clock_time(t)[11:19] if t is not None else "-"


def compact_json(value: Any) -> str:
    """`value` as one line of JSON; anything JSON cannot hold is written as its `str`."""
    return json.dumps(value, ensure_ascii=False, default=str)


def value_line(value: Any, limit: int = LINE_LIMIT) -> str:
    """A value on one line: strings as they are, anything else as compact JSON."""
    return literal_line(value if isinstance(value, str) else compact_json(value), limit)


def call_line(name: str | None, args: Any, limit: int = LINE_LIMIT) -> str:
    """`get_weather(city="London")`: a tool call as it reads in code."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            pass
    if isinstance(args, dict):
        inner = ", ".join(f"{k}={compact_json(v)}" for k, v in args.items())
    elif args is None:
        inner = ""
    else:
        inner = compact_json(args)
    return literal_line(f"{name or '?'}({inner})", limit)


def content_text(content: Any) -> str:
    """A message's content as text: a string, text parts joined, anything else as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        texts = [p.get("text") if isinstance(p, dict) else p for p in content]
        strings = [t for t in texts if isinstance(t, str)]
        if len(strings) == len(texts):
            return "\n".join(strings)
    return compact_json(content)


def _tokens(e: Event) -> str:
    if e.usage is None:
        return ""
    return f"{token_count(e.usage.input_tokens)}→{token_count(e.usage.output_tokens)} tok"


def generation_row(out: Text, e: Event, row: Row) -> None:
    """A generation: the calls it asks for, or its text; its tokens and what it cost."""
    cost = row.cost
    if e.calls:
        names = [call_line(n, a) for _, n, a in (call_parts(c) for c in e.calls)]
        out.append("→ " + ", ".join(names))
    elif e.text is not None:
        out.append(value_line(e.text), "italic")
    else:
        out.append("(no text)", "dim")
    if tokens := _tokens(e):
        out.append(f"  {tokens}", "dim")
    if cost:
        out.append(f" · {cost}", "dim")
    if e.note is not None and e.model:  # a fallback model answered (agentor.engine.fallback)
        out.append(f" · by {literal_line(e.model, 40)} (fallback)", FALLBACK_STYLE)


def request_line(e: Event) -> Text:
    """The timeline line of an `approval_request`: the call, and its deadline if it has one;
    for a call a crash interrupted, why it waits and when it started."""
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(call_line(e.name, e.args))
    _via(out, e)
    if e.reason:
        out.append(f" · {literal_line(e.reason, 80)}", AWAITING_STYLE)
        out.append(f" · started {time_of_day(e.started_at)}", "dim")
    else:
        out.append(" · waits for a person", "dim")
    if e.deadline is not None:
        out.append(f" · deadline {time_of_day(e.deadline)}", "dim")
    return out


def _via(out: Text, e: Event) -> None:
    """` @files`: the MCP server a call's tool came from, if one did."""
    if e.server:
        out.append(f" @{literal_line(e.server, 40)}", "dim")


def ran_where(e: Event) -> str:
    """`process 4242 on build-7`: where a started call ran."""
    return f"process {e.pid if e.pid is not None else '?'} on {literal_line(e.host or '?', 60)}"


def approval_line(e: Event, request: Event | None) -> Text:
    """The timeline line of an `approval`: who decided what, an edit as what it changed."""
    out = Text(no_wrap=True, overflow="ellipsis")
    decided = Decision.of(e)
    if decided is None:
        out.append(f"(not a decision: {literal_line(str(e.decision), 40)})", "dim")
        return out
    mark, style = decision_mark(decided)
    out.append(mark + " ", style)
    out.append(f"{decided.decision} by {literal_line(decided.by, 60)}", style)
    out.append(f" · {literal_line(decided.name or '?', 40)}")
    if decided.edited:
        asked = request.args if request is not None else None
        changes = args_diff(asked, decided.args) if request is not None else []
        shown = "; ".join(changes) if changes else call_line(decided.name, decided.args)
        out.append(" · edited: ", "dim")
        out.append(literal_line(shown, LINE_LIMIT))
    if decided.given:
        out.append(" · gave the result it had: ", "dim")
        out.append(value_line(decided.result))
    if decided.note:
        out.append(f" · {literal_line(decided.note, LINE_LIMIT)}", "italic")
    return out


def run_start_row(out: Text, e: Event, row: Row) -> None:
    """A segment's start: the agent and model and prompt (a resume: its number; a fork's
    first segment: where it was forked from), and what its MCP servers warn of."""
    segment, fork = row.segment, row.fork
    if fork is not None and segment > 1:
        out.append(f"{fork_words(fork)} · segment {segment}", f"bold {FORK_STYLE}")
    elif segment > 1:
        out.append(f"▶ resumed · segment {segment}", "bold green")
    else:
        out.append(literal_line(e.agent or "?", 40), "bold")
        out.append(f" · {literal_line(e.model or '?', 40)}", "dim")
    for note in record_notes(e.mcp):  # before the prompt: it must not be cut off
        out.append(f" · ⚠ {literal_line(note, LINE_LIMIT)}", AWAITING_STYLE)
    prompt = first_user_text(e.messages) if segment <= 1 else None
    if prompt:
        out.append(" · ")
        out.append(literal_line(prompt, LINE_LIMIT))


def tool_result_row(out: Text, e: Event, row: Row) -> None:
    """A tool's result or error; answered from a record, or given by a person."""
    out.append(literal_line(e.name or "?", 40))
    _via(out, e)
    out.append_text(answer_mark(marked_answer(e), DRIFT in e.extra))
    if e.by:
        out.append(f" (given by {literal_line(e.by, 60)}: not run)", "dim")
    if e.error is not None:
        out.append(" ✗ ", ERROR_STYLE)
        out.append(literal_line(e.error, LINE_LIMIT), ERROR_STYLE)
    else:
        out.append(" → ", "dim")
        out.append(value_line(e.result))


def answer_mark(answer: str | None, drift: bool = False, lead: str = " · ") -> Text:
    """How a tool result was answered (`marked_answer`), when not the plain way: `served`
    from a record (`, other arguments`: `drift`, a fifo replay served it the result of a call
    with other arguments), `executed` (a replay's call with no recorded answer, run) or
    `refused` (one answered with an error: nothing ran); after `lead`. Empty else."""
    out = Text()
    if answer is not None:
        out.append(f"{lead}{answer}", ANSWER_STYLES[answer])
    if answer == SERVED and drift:
        out.append(", other arguments", ANSWER_STYLES[DRIFT])
    return out


def invalid_output_row(out: Text, e: Event, row: Row) -> None:
    """A final answer that is not the structured output asked for: its error, in red."""
    error = literal_line(e.error or "invalid answer", LINE_LIMIT)
    out.append_text(Text.assemble(("✗ ", ERROR_STYLE), (error, ERROR_STYLE)))


def tool_disabled_row(out: Text, e: Event, row: Row) -> None:
    """A tool withdrawn after repeated failures: its name, and why."""
    out.append_text(
        Text.assemble(
            (literal_line(e.name or "?", 40), "bold"),
            (f" {literal_line(e.note or 'withdrawn', 80)}", FALLBACK_STYLE),
        )
    )


def call_row(out: Text, e: Event, row: Row) -> None:
    """A tool call: `get_weather(city="London")`, and the MCP server of its tool."""
    out.append(call_line(e.name, e.args))
    _via(out, e)


def tool_start_row(out: Text, e: Event, row: Row) -> None:
    """A call about to run that asks a person after a crash: the call, and where it ran."""
    call_row(out, e, row)
    out.append(f" · started in {ran_where(e)}", "dim")


def message_row(out: Text, e: Event, row: Row) -> None:
    out.append(value_line(e.text or ""), "italic")


def run_end_row(out: Text, e: Event, row: Row) -> None:
    """A segment's end: its status, and its error or its answer."""
    status = e.status or FAILED
    out.append(literal_line(status, 20), STATUS_STYLES.get(status, "bold"))
    if e.error:
        out.append(" · ")
        out.append(literal_line(e.error, LINE_LIMIT), ERROR_STYLE)
    elif e.text:
        out.append(" · ")
        out.append(value_line(e.text))


def approval_request_row(out: Text, e: Event, row: Row) -> None:
    out.append_text(request_line(e))


def approval_row(out: Text, e: Event, row: Row) -> None:
    out.append_text(approval_line(e, row.request))


def fork_row(out: Text, e: Event, row: Row) -> None:
    out.append(f"forked from {literal_line(e.forked_from or '?', 64)}", FORK_STYLE)


def claim_row(out: Text, e: Event, row: Row) -> None:
    """A worker of a fleet took the run."""
    out.append(marker_words(e), "")


def release_row(out: Text, e: Event, row: Row) -> None:
    """A worker of a fleet let the run go unfinished."""
    out.append(marker_words(e), "dim")


def fields_row(out: Text, e: Event, row: Row) -> None:
    """The fields of an event of a type this version does not know."""
    keys = ", ".join(e.extra) or "no fields"
    out.append(f"({literal_line(keys, 80)})", "dim")
