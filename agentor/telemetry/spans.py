"""A run's log as OpenTelemetry GenAI spans: `RunSpans` is fed the lines of one run in order
and hands back each span once the log has closed it. Pure: no I/O, no OpenTelemetry import
(`agentor.telemetry.otel` turns the records into SDK spans). `agentor export --format otlp`,
`agentor trace` and in-process tracing all use it, so each gives the same spans for a log.

Spans come from recorded events and their recorded times only (`started_at`, `ended_at`, `ts`);
each is named by the line that opened it (agentor.telemetry.ids), so its ids never change:

    invoke_agent {agent}   a segment: its run_start's start to its run_end (a resume is another
                           segment of the same trace, linked to the one before)
    chat {model}           a generation: its started_at to its ended_at (upstream Agentor writes
                           no times on one: from the step before it to the step after it)
    execute_tool {tool}    a tool call (opened by its tool_call, else by its tool_result): its
                           result's started_at to its ended_at, under the segment that ran it
    await_approval {tool}  an approval_request until the decision (who decided, when)

When a span closes: a chat span at once; a tool span at its result; a wait at its decision; a
segment at its run_end, or when the next run_start shows that its writer died (it ends at its
last step, `error.type` "interrupted", with the calls it left unanswered). `interrupted()` says
the same of the last segment when the caller knows its writer is gone (nobody holds the run).
A call waiting for a person's decision stays open across segments until its result.

A fork's log begins with a copy of its parent's events: they make no span here (they are the
parent's spans, in the parent's trace). The fork's first segment links to the parent's span at
the fork point (the call's tool span for a replaced result, else the span line `at` opened, or
the parent's last segment for a whole-run fork), and the session of every span is the first
run of the lineage, so a backend groups a run with its forks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import agentor.telemetry.attributes as attrs
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
    Usage,
)
from agentor.engine.fork_mark import CALL_ID, ForkMark
from agentor.engine.log.format import BadLine

INVOKE_AGENT = "invoke_agent"
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"
AWAIT_APPROVAL = "await_approval"
INTERRUPTED = "interrupted"  # error.type of a segment, or a call, whose writer died


@dataclass
class SpanRecord:
    """One span, as the log says it: ids come from (`run_id`, `line`), the parent's from
    (`run_id`, `parent_line`); `links` name other spans as (run id, line)."""

    run_id: str
    line: int
    operation: str
    name: str
    start: float
    end: float
    parent_line: int | None
    attributes: dict[str, Any]
    links: tuple[tuple[str, int], ...] = ()
    error: str | None = None  # error.type: the span's status is ERROR, with `message`
    message: str | None = None


@dataclass
class Segment:
    """The open segment: what its invoke_agent span needs when it closes."""

    line: int
    start_event: Event
    number: int  # 1 for the run's (or the fork's) first segment
    start: float | None
    last: float | None = None
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    links: tuple[tuple[str, int], ...] = ()


@dataclass
class Call:
    """A tool call without its result yet."""

    line: int
    event: Event
    gated: bool = False  # a person's decision was asked for: it waits across segments


class RunSpans:
    """The spans of one run, built line by line (see the module). Feed every line once, in
    order, with `feed`; each call returns the spans that line closed."""

    def __init__(self, run_id: str, *, content: bool = False) -> None:
        self.run_id = run_id
        self.content = content
        self.session = run_id  # the first run of the lineage (a fork's root)
        self.lines = 0  # lines fed
        self.segment: Segment | None = None
        self.calls: dict[str, Call] = {}
        self.waits: dict[str, tuple[int, Event, int]] = {}  # call id -> (line, request, segment)
        self._untimed: list[SpanRecord] = []  # chat spans waiting for the next time to end
        self._copying = False  # lines of a fork's copy of its parent: no spans
        self._call_lines: dict[str, int] = {}  # every tool_call's line, copies included
        self._last_start: int | None = None  # the latest run_start's line, copies included
        self._segments = 0
        self._fork_link: tuple[str, int] | None = None
        self._model: str | None = None  # the segment's model, for generations naming none
        self._previous_segment: int | None = None

    # -- feeding ---------------------------------------------------------------------------------

    def feed(self, items: Iterable[tuple[int, Event | BadLine]]) -> list[SpanRecord]:
        """Lines (number, event or bad line) after those fed so far. Lines before the last
        `fork` event among them are taken as the fork's copy of its parent (a fork writes them
        in one batch)."""
        batch = list(items)
        last_fork = max(
            (i for i, (_, item) in enumerate(batch) if _is_type(item, FORK)), default=-1
        )
        out: list[SpanRecord] = []
        for i, (line, item) in enumerate(batch):
            if i < last_fork:
                self._copying = True
            out += self.add(line, item)
        return out

    def add(self, line: int, item: Event | BadLine) -> list[SpanRecord]:
        """One line; the spans it closed."""
        self.lines = max(self.lines, line)
        if not isinstance(item, Event):
            return []
        e = item
        if e.type == TOOL_CALL and e.call_id:
            self._call_lines[e.call_id] = line
        if e.type == FORK:
            self._forked(line, e)
            return []
        if e.type == RUN_START:
            self._last_start = line
            if e.run_id and e.run_id != self.run_id:
                self._copying = True  # a fork's copy of its parent's segment
        if self._copying:
            return []
        if e.type == RUN_START:  # the segment before ended with its own last step
            out = self._end_untimed(self.segment.last if self.segment else None)
        else:
            out = self._end_untimed(_first(e.started_at, e.ts, e.ended_at), wait=True)
        part = SPAN_PARTS.get(e.type, _OTHER)
        if self.segment is not None and part.work and e.type != RUN_START:
            t = _time(e)
            if t is not None and (self.segment.last is None or t > self.segment.last):
                self.segment.last = t
        if part.handler is not None:
            out += part.handler(self, line, e)
        return out

    def interrupted(self) -> list[SpanRecord]:
        """The writer of the last segment is gone (nobody holds the run): close what it left
        open, as the next run_start would."""
        out = self._end_untimed(self.segment.last if self.segment else None)
        if self.segment is not None:
            out += self._close_segment(None)
        return out

    @property
    def open_spans(self) -> int:
        """Spans begun and not closed: the segment, calls without results, waits."""
        return (self.segment is not None) + len(self.calls) + len(self.waits)

    @property
    def waiting(self) -> bool:
        """A call waits for a person's decision, or, decided, for the resume that runs it."""
        return bool(self.waits) or any(c.gated for c in self.calls.values())

    # -- one handler a type -----------------------------------------------------------------------

    def _run_start(self, line: int, e: Event) -> list[SpanRecord]:
        out: list[SpanRecord] = []
        if self.segment is not None:
            out += self._close_segment(None)
        self._segments += 1
        self._model = e.model
        links: tuple[tuple[str, int], ...] = ()
        if self._previous_segment is not None:
            links = ((self.run_id, self._previous_segment),)
        elif self._fork_link is not None:
            links = (self._fork_link,)
        start = _first(e.started_at, e.ts)
        self.segment = Segment(line, e, self._segments, start, start, links=links)
        return out

    def _generation(self, line: int, e: Event) -> list[SpanRecord]:
        seg = self.segment
        model = e.model or self._model
        cost = attrs.generation_cost(e, model)
        if seg is not None:
            if e.usage is not None:
                seg.usage = seg.usage + e.usage
            if cost is not None:
                seg.cost = (seg.cost or 0.0) + cost
        start, end = _first(e.started_at, e.ts), _first(e.ended_at, e.ts)
        record = SpanRecord(
            self.run_id,
            line,
            CHAT,
            f"{CHAT} {model or 'unknown'}",
            start if start is not None else (seg.last if seg and seg.last else 0.0),
            end if end is not None else 0.0,
            seg.line if seg else None,
            attrs.chat(self, e, self._model, cost),
        )
        if end is None:  # upstream writes no times on a generation: it ends at the next step
            self._untimed.append(record)
            return []
        return [record]

    def _tool_call(self, line: int, e: Event) -> list[SpanRecord]:
        if e.call_id:
            self.calls[e.call_id] = Call(line, e)
        return []

    def _tool_result(self, line: int, e: Event) -> list[SpanRecord]:
        call = self.calls.pop(e.call_id, None) if e.call_id else None
        opened = call.line if call is not None else line
        start = _first(e.started_at, call.event.ts if call else None, e.ts)
        end = _first(e.ended_at, e.ts, start)
        seg = self.segment
        return [
            SpanRecord(
                self.run_id,
                opened,
                EXECUTE_TOOL,
                f"{EXECUTE_TOOL} {e.name or 'unknown'}",
                _or(start, end),
                _or(end, start),
                seg.line if seg else None,
                attrs.tool(self, e, call.event if call else None),
                error=attrs.error_type(e.error) if e.error else None,
                message=attrs.tool_error_message(e.error, self.content) if e.error else None,
            )
        ]

    def _approval_request(self, line: int, e: Event) -> list[SpanRecord]:
        if e.call_id:
            seg = self.segment.line if self.segment else line
            self.waits[e.call_id] = (line, e, seg)
            call = self.calls.get(e.call_id)
            if call is not None:
                call.gated = True
        return []

    def _approval(self, line: int, e: Event) -> list[SpanRecord]:
        wait = self.waits.pop(e.call_id, None) if e.call_id else None
        if wait is None:
            return []  # a decision on a request this log does not hold (a copy's): no wait
        opened, request, segment = wait
        start = _first(request.ts, request.started_at)
        end = _first(e.ts, e.ended_at, start)
        rejected = e.decision not in (None, "approved")
        return [
            SpanRecord(
                self.run_id,
                opened,
                AWAIT_APPROVAL,
                f"{AWAIT_APPROVAL} {request.name or e.name or 'unknown'}",
                _or(start, end),
                _or(end, start),
                segment,
                attrs.approval(self, request, e),
                error="rejected" if rejected else None,
                message=f"rejected by {e.by}" if rejected else None,
            )
        ]

    def _run_end(self, line: int, e: Event) -> list[SpanRecord]:
        if self.segment is None:
            return []
        return self._close_segment(e)

    # -- closing -----------------------------------------------------------------------------

    def _close_segment(self, end_event: Event | None) -> list[SpanRecord]:
        seg = self.segment
        assert seg is not None
        self.segment = None
        self._previous_segment = seg.line
        out: list[SpanRecord] = []
        end = seg.last
        if end_event is not None:
            end = _first(end_event.ended_at, end_event.ts, end)
        for call_id, call in list(self.calls.items()):
            if not call.gated:  # it will never get a result: its writer is gone
                del self.calls[call_id]
                out.append(self._unanswered(call, seg, end))
        error, message = attrs.segment_error(end_event)
        start = _or(seg.start, end)
        out.append(
            SpanRecord(
                self.run_id,
                seg.line,
                INVOKE_AGENT,
                f"{INVOKE_AGENT} {seg.start_event.agent or 'agent'}",
                start,
                max(_or(end, start), start),
                None,
                attrs.agent(self, seg, end_event),
                links=seg.links,
                error=error,
                message=message,
            )
        )
        return out

    def _unanswered(self, call: Call, seg: Segment, end: float | None) -> SpanRecord:
        start = _or(_first(call.event.ts), end)
        return SpanRecord(
            self.run_id,
            call.line,
            EXECUTE_TOOL,
            f"{EXECUTE_TOOL} {call.event.name or 'unknown'}",
            start,
            max(_or(end, start), start),
            seg.line,
            attrs.tool(self, None, call.event),
            error=INTERRUPTED,
            message="no result was recorded: the process running the call stopped",
        )

    def _end_untimed(self, t: float | None, wait: bool = False) -> list[SpanRecord]:
        """Chat spans without times end where the next step starts (`t`); with `wait`, a
        step without a time leaves them waiting for one that has one."""
        if not self._untimed or (wait and t is None):
            return []
        out = self._untimed
        self._untimed = []
        for record in out:
            record.end = max(t if t is not None else record.start, record.start)
        return out

    def _forked(self, line: int, e: Event) -> None:
        """This log is a fork: what came before was its parent's; its own spans start here."""
        mark = ForkMark.of(line - 1, e)
        parent = mark.forked_from
        if parent and self.session == self.run_id:
            self.session = parent  # the first fork event in the log names the lineage's root
        if parent:
            call_id = mark.edit.get(CALL_ID)
            target = self._call_lines.get(call_id) if isinstance(call_id, str) else None
            target = target or mark.at or self._last_start or 1
            self._fork_link = (parent, target)
        self._copying = False
        self.segment = None
        self.calls.clear()
        self.waits.clear()
        self._untimed = []
        self._segments = 0
        self._previous_segment = None


Handler = Callable[[RunSpans, int, Event], list[SpanRecord]]


@dataclass(frozen=True)
class SpanPart:
    """What a line of one type of event does to the spans: `handler` opens or closes the spans
    it names (None: no span of its own); `work`: a step of somebody's work on the segment,
    which stretches the segment's span to the step's time."""

    handler: Handler | None
    work: bool = True


# Each type a log holds (agentor.engine.events.LOGGED_TYPES); a type this version does not know
# is a step of work with no span of its own.
SPAN_PARTS: dict[str, SpanPart] = {
    RUN_START: SpanPart(RunSpans._run_start),  # it opens a segment: it stretches none
    GENERATION: SpanPart(RunSpans._generation),
    TOOL_CALL: SpanPart(RunSpans._tool_call),
    TOOL_START: SpanPart(None),  # its call's tool span is the tool_call's
    TOOL_RESULT: SpanPart(RunSpans._tool_result),
    MESSAGE: SpanPart(None),
    RUN_END: SpanPart(RunSpans._run_end),
    # A fork's own spans start at its line: `add` hands it to `_forked` before anything else.
    FORK: SpanPart(None, work=False),
    APPROVAL_REQUEST: SpanPart(RunSpans._approval_request),
    # A decision is a person's, between segments; a claim comes long after the crash before
    # it: neither stretches the segment.
    APPROVAL: SpanPart(RunSpans._approval, work=False),
    CLAIM: SpanPart(None, work=False),
    RELEASE: SpanPart(None, work=False),
    INVALID_OUTPUT: SpanPart(None),
    TOOL_DISABLED: SpanPart(None),
}
_OTHER = SpanPart(None)


def is_work(e: Event) -> bool:
    """Whether `e` is a step of somebody's work on its run (`SpanPart.work`)."""
    return SPAN_PARTS.get(e.type, _OTHER).work


def spans_of(
    run_id: str,
    lines: Iterable[Event | BadLine],
    *,
    writer_gone: bool = True,
    content: bool = False,
) -> tuple[list[SpanRecord], int]:
    """Every span of a whole log (line N is item N - 1), and how many are still open.
    `writer_gone`: nobody holds the run, so a last segment without a run_end was interrupted."""
    builder = RunSpans(run_id, content=content)
    spans = builder.feed(enumerate(lines, 1))
    if writer_gone and builder.segment is not None:
        spans += builder.interrupted()
    return spans, builder.open_spans


def _is_type(item: Event | BadLine, kind: str) -> bool:
    return isinstance(item, Event) and item.type == kind


def _first(*values: float | None) -> float | None:
    """The first value that is a time (a finite number)."""
    for v in values:
        if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
            return float(v)
    return None


def _time(e: Event) -> float | None:
    return _first(e.ended_at, e.ts, e.started_at)


def _or(value: float | None, other: float | None) -> float:
    if value is not None:
        return value
    return other if other is not None else 0.0
