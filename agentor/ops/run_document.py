"""A run as a document: what an export says, before it is Markdown or HTML.

`build` walks a run's events once and returns blocks: the summary (agent, model, status, time,
turns, tool calls, tokens, cost), the prompt, each segment and turn with its tool calls
(arguments, results, errors), approvals, and the end. The renderers (agentor.ops.run_export) only
lay the blocks out. Every piece of text from the log is kept apart from the document's own
words (`Code` spans, `Body` blocks), so a renderer can set it where it is inert.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from agentor.engine.approval.pending import APPROVED, REJECTED
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
from agentor.engine.fork.recording import DRIFT, EXECUTED, marked_answer
from agentor.engine.fork_mark import ForkMark
from agentor.engine.history import segments, summarize
from agentor.engine.statuses import DIVERGED
from agentor.ops.pricing import RunCost, format_cost, generation_costs


@dataclass(frozen=True)
class Code:
    """Text from the log, inline (an id, a tool's name, a model)."""

    text: str


Span = str | Code  # a str is the document's own words


@dataclass(frozen=True)
class Heading:
    level: int  # 1 the run, 2 a section, 3 a turn
    spans: tuple[Span, ...]


@dataclass(frozen=True)
class Facts:
    items: tuple[tuple[str, tuple[Span, ...]], ...]


@dataclass(frozen=True)
class Body:
    """A block of text from the log: `kind` "text" or "json"; `tone` "error" for errors."""

    label: tuple[Span, ...]
    text: str
    kind: str = "text"
    tone: str = ""


Block = Heading | Facts | Body


def build(run_id: str, events: Sequence[Event], bad_lines: int = 0) -> list[Block]:
    summary = summarize(run_id, events, bad_lines)
    costs = generation_costs(events)
    out: list[Block] = [Heading(1, ("Run ", Code(run_id))), _facts(summary, costs)]
    out += _prompt(events)
    parts = segments(events)
    for number, segment in enumerate(parts, 1):
        if len(parts) > 1:
            out.append(Heading(2, (f"Segment {number}", *_segment_note(segment))))
        out += _segment(segment, events, costs)
    return out


def _facts(summary: Any, costs: dict[int, Decimal | None]) -> Facts:
    u = summary.usage
    items: list[tuple[str, tuple[Span, ...]]] = [
        ("Agent", (Code(summary.agent or "?"),)),
        ("Model", (Code(summary.model or "?"),)),
        ("Status", (Code(summary.status),)),
        ("Started", (_when(summary.started_at),)),
        ("Took", (_seconds(summary.active_time()),)),
        ("Turns", (str(summary.turns),)),
        ("Tool calls", (str(summary.tool_calls),)),
        ("Tokens", (f"{u.total_tokens:,} ({u.input_tokens:,} in, {u.output_tokens:,} out)",)),
        ("Cost", (_cost_words(RunCost.of(costs.values())),)),
    ]
    if summary.segments > 1:
        items.append(("Segments", (f"{summary.segments} (resumed after a stop)",)))
    if summary.bad_lines:
        items.append(("Unreadable lines", (f"{summary.bad_lines} (skipped)",)))
    return Facts(tuple(items))


def _cost_words(cost: RunCost) -> str:
    shown = format_cost(cost)
    if cost.total is None:
        return f"{shown} (no price known for this model)" if cost.unpriced else shown
    if not cost.complete:
        return f"{shown} ({cost.unpriced} generation(s) without a known price)"
    return shown


def _prompt(events: Sequence[Event]) -> list[Block]:
    start = next((e for e in events if e.type == RUN_START and e.messages), None)
    if start is None:
        return []
    out: list[Block] = [Heading(2, ("Prompt",))]
    for m in start.messages or []:
        out.append(Body((Code(str(m.get("role", "?"))),), _content(m.get("content"))))
    return out


def _segment_note(segment: Sequence[Event]) -> tuple[Span, ...]:
    first = segment[0]
    if first.type != RUN_START:
        return ()
    who: tuple[Span, ...] = (" by ", Code(first.agent)) if first.agent else ()
    return (f" · started {_when(first.started_at or first.ts)}", *who)


@dataclass
class _Walk:
    """Where the walk through a segment is: what a step's section needs of the steps before."""

    costs: dict[int, Decimal | None]
    index: int = 0  # the step's index in the whole run
    answered: str | None = None  # the text of the latest answer shown


def _segment(
    segment: Sequence[Event], events: Sequence[Event], costs: dict[int, Decimal | None]
) -> list[Block]:
    out: list[Block] = []
    walk = _Walk(costs)
    base = _index_of(events, segment[0])
    for offset, e in enumerate(segment):
        walk.index = base + offset
        out += SECTIONS.get(e.type, _raw)(e, walk)
    return out


def _index_of(events: Sequence[Event], event: Event) -> int:
    for i, e in enumerate(events):
        if e is event:
            return i
    return 0


def _generation(e: Event, walk: _Walk) -> list[Block]:
    walk.answered = e.text if not e.calls else None
    cost = walk.costs.get(walk.index)
    u = e.usage
    tokens = f"{u.total_tokens:,} tokens" if u is not None else "no usage recorded"
    spans: tuple[Span, ...] = (f"Turn {e.turn if e.turn is not None else '?'}",)
    if e.model:
        spans += (" · ", Code(e.model))
    out: list[Block] = [Heading(3, (*spans, f" · {tokens} · {format_cost(cost)}"))]
    if e.text:
        out.append(Body(("Model said" if e.calls else "Answer",), e.text))
    return out


def _tool_step(e: Event) -> Block:
    name = Code(e.name or "?")
    call = (" (", Code(e.call_id), ")") if e.call_id else ()
    if e.type == TOOL_CALL:
        return Body(("Tool call ", name, *call), _json(e.args), "json")
    if e.type == TOOL_RESULT:
        if e.error is not None:
            return Body(("Error from ", name, *call), e.error, tone="error")
        text = e.result if isinstance(e.result, str) else _json(e.result)
        kind = "text" if isinstance(e.result, str) else "json"
        return Body(("Result of ", name, *call, *_answer_note(e)), text, kind)
    return Body(("Approval requested for ", name, *call), _json(e.args), "json")


def _approval(e: Event, walk: _Walk) -> list[Block]:
    """A person's decision: what it was, by whom, its note (an approval's) or reason (a
    rejection's), the arguments an edit gave the call, the result a person gave it."""
    call = (" (", Code(e.call_id), ")") if e.call_id else ()
    decision = e.decision or "?"
    label: tuple[Span, ...] = ("Approval: ", Code(decision), *call)
    if e.name:
        label += (" for ", Code(e.name))
    if e.by:
        label += (" by ", Code(e.by))
    if e.note:
        word = " · reason" if decision == REJECTED else " · note"
        out: list[Block] = [Body((*label, word), e.note)]
    else:
        out = [Body(label, _unsaid(e, decision))]
    if e.args is not None:
        out.append(Body(("Edited arguments", *call), _json(e.args), "json"))
    if e.result is not None:
        text = e.result if isinstance(e.result, str) else _json(e.result)
        kind = "text" if isinstance(e.result, str) else "json"
        out.append(Body(("Result given", *call, " (the tool not run)"), text, kind))
    return out


def _unsaid(e: Event, decision: str) -> str:
    """What a decision with no note amounts to, in the document's words."""
    if decision == REJECTED:
        return "rejected: no reason given"
    if decision != APPROVED:
        return decision
    if e.result is not None:
        return "approved, giving the result the call had"
    return "approved with edited arguments" if e.args is not None else "approved as requested"


def _answer_note(e: Event) -> tuple[Span, ...]:
    """How a result was answered, when not run the plain way: given by a person (the result an
    interrupted call had), from a record (with the recorded call's arguments, when a fifo
    replay served it to others), or run as a replay's call with no recorded answer."""
    if e.by:
        return (" (given by ", Code(e.by), ", not run)")
    if e.replayed_from:
        if DRIFT in e.extra:
            recorded = json.dumps(e.extra[DRIFT], ensure_ascii=False, default=str)
            return (
                " (answered from the record of ",
                Code(e.replayed_from),
                ", recorded with the arguments ",
                Code(recorded),
                ")",
            )
        return (" (answered from the record of ", Code(e.replayed_from), ")")
    if marked_answer(e) == EXECUTED:
        return (" (executed: the replay's recording has no answer for it)",)
    return ()


def _fork_facts(e: Event) -> Facts:
    """Where a fork came from; a replay's matching, novel calls and experiment."""
    items: list[tuple[str, tuple[Span, ...]]] = [("Forked from", (Code(e.forked_from or "?"),))]
    mark = ForkMark.of(0, e)
    if mark.replay is not None:
        said = f"match {mark.match}, novel calls {mark.novel}"
        items.append(("Replay", (said,)))
        if mark.experiment:
            items.append(("Experiment", (Code(mark.experiment),)))
    return Facts(tuple(items))


def _end(e: Event, walk: _Walk) -> list[Block]:
    """The end of a segment; its text only when the turn before did not already show it."""
    answered = walk.answered
    status = e.status or "failed"
    out: list[Block] = [Heading(2, ("Ended: ", Code(status)))]
    if e.error and status == DIVERGED:  # a replay stopped at a call with no recorded answer
        out.append(Body(("Stopped at",), e.error))
    elif e.error:
        out.append(Body(("Error",), e.error, tone="error"))
    if e.text and e.text != answered:
        out.append(Body(("Final answer",), e.text))
    return out


def _fork(e: Event, walk: _Walk) -> list[Block]:
    return [_fork_facts(e)]


def _step(e: Event, walk: _Walk) -> list[Block]:
    return [_tool_step(e)]


def _nothing(e: Event, walk: _Walk) -> list[Block]:
    """No section: a run_start is the segment's heading and the prompt; a message repeats the
    answer the run_end shows."""
    return []


def _raw(e: Event, walk: _Walk) -> list[Block]:
    """An event as its JSON (a type with no section of its own, or one this version does not
    know)."""
    return [Body(("Event ", Code(e.type)), _json(e.to_dict()), "json")]


# What each type a log holds (agentor.engine.events.LOGGED_TYPES) adds to its segment.
SECTIONS: dict[str, Callable[[Event, _Walk], list[Block]]] = {
    RUN_START: _nothing,
    GENERATION: _generation,
    TOOL_CALL: _step,
    TOOL_START: _raw,
    TOOL_RESULT: _step,
    MESSAGE: _nothing,
    RUN_END: _end,
    FORK: _fork,
    APPROVAL_REQUEST: _step,
    APPROVAL: _approval,
    CLAIM: _raw,
    RELEASE: _raw,
    INVALID_OUTPUT: _raw,
    TOOL_DISABLED: _raw,
}


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        parts = [p for p in content if isinstance(p, dict)]
        texts = [t for p in parts if isinstance(t := p.get("text"), str)]
        if len(texts) == len(parts):
            return "\n".join(texts)
    return _json(content)


def _json(value: Any) -> str:
    """`value` as indented JSON text; a value holding NaN or odd types still shows."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _when(t: float | None) -> str:
    if t is None or not math.isfinite(t):
        return "?"
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (ValueError, OverflowError, OSError):
        return "?"


def _seconds(s: float | None) -> str:
    if s is None or not math.isfinite(s):
        return "?"
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"
