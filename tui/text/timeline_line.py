"""What one timeline row says about an event: `get_weather(city="London")`, the result or the
error, a generation's tool requests or text with its tokens, the end status.

Every `Text` here is assembled from plain strings passed through `literal_line`, never from
markup, so nothing in a log can style or control the terminal.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from agentor.engine.approval.pending import APPROVED, Decision
from agentor.engine.events import (
    APPROVAL,
    APPROVAL_REQUEST,
    CLAIM,
    FORK,
    GENERATION,
    INVALID_OUTPUT,
    MESSAGE,
    RELEASE,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_DISABLED,
    TOOL_RESULT,
    TOOL_START,
    Event,
)
from agentor.engine.fork.recording import DRIFT, SERVED, marked_answer
from agentor.engine.history import call_parts, first_user_text
from agentor.engine.log.format import BadLine
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
# How the timeline's type column (11 cells) writes a type whose name does not fit it.
TYPE_LABELS = {APPROVAL_REQUEST: "approval?", INVALID_OUTPUT: "invalid", TOOL_DISABLED: "withdrawn"}
# A decision's mark: approved, or any other (a rejection).
DECISION_MARKS = {APPROVED: "✓"}
REJECTED_MARK = "✗"


def type_label(kind: str) -> str:
    return TYPE_LABELS.get(kind) or literal_line(kind, 20)


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


def _generation(out: Text, e: Event, cost: str) -> None:
    """A generation: the calls it asks for, or its text; its tokens and what it cost."""
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
    if e.note is not None and e.model:  # a fallback model answered (engine/fallback.py)
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


def _run_start(out: Text, e: Event, segment: int, fork: Event | None = None) -> None:
    """A segment's start: the agent and model and prompt (a resume: its number; a fork's
    first segment, `fork`: where it was forked from), and what its MCP servers warn of."""
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


def _tool_result(out: Text, e: Event) -> None:
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


def follow_up_line(e: Event) -> Text:
    """An invalid structured answer (its error, in red) or a tool withdrawn (its name)."""
    if e.type == INVALID_OUTPUT:
        error = literal_line(e.error or "invalid answer", LINE_LIMIT)
        return Text.assemble(("✗ ", ERROR_STYLE), (error, ERROR_STYLE))
    return Text.assemble(
        (literal_line(e.name or "?", 40), "bold"),
        (f" {literal_line(e.note or 'withdrawn', 80)}", FALLBACK_STYLE),
    )


def timeline_line(
    item: Event | BadLine,
    segment: int = 1,
    request: Event | None = None,
    cost: str = "",
    fork: Event | None = None,
) -> Text:
    """What one timeline row says about an event; `segment` numbers the run_start rows;
    `request` is the `approval_request` an `approval` decides (its edit is shown as a diff);
    `cost`, what a generation cost ("$0.0021", "–" unknown); `fork`, the `fork` event just
    before a run_start (the start of a fork's own first segment)."""
    if isinstance(item, BadLine):
        return Text(f"unreadable line {item.lineno}: {literal_line(item.reason)}", "dim")
    e = item
    out = Text(no_wrap=True, overflow="ellipsis")
    if e.type == RUN_START:
        _run_start(out, e, segment, fork)
    elif e.type == GENERATION:
        _generation(out, e, cost)
    elif e.type in (TOOL_CALL, TOOL_START):
        out.append(call_line(e.name, e.args))
        _via(out, e)
        if e.type == TOOL_START:
            out.append(f" · started in {ran_where(e)}", "dim")
    elif e.type == TOOL_RESULT:
        _tool_result(out, e)
    elif e.type == MESSAGE:
        out.append(value_line(e.text or ""), "italic")
    elif e.type == RUN_END:
        status = e.status or FAILED
        out.append(literal_line(status, 20), STATUS_STYLES.get(status, "bold"))
        if e.error:
            out.append(" · ")
            out.append(literal_line(e.error, LINE_LIMIT), ERROR_STYLE)
        elif e.text:
            out.append(" · ")
            out.append(value_line(e.text))
    elif e.type == APPROVAL_REQUEST:
        out.append_text(request_line(e))
    elif e.type == APPROVAL:
        out.append_text(approval_line(e, request))
    elif e.type == FORK:
        out.append(f"forked from {literal_line(e.forked_from or '?', 64)}", "magenta")
    elif e.type in (CLAIM, RELEASE):  # a worker of a fleet took the run, or let it go
        out.append(marker_words(e), "dim" if e.type == RELEASE else "")
    elif e.type in (INVALID_OUTPUT, TOOL_DISABLED):
        out.append_text(follow_up_line(e))
    else:
        keys = ", ".join(e.extra) or "no fields"
        out.append(f"({literal_line(keys, 80)})", "dim")
    return out
