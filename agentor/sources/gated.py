"""The gated calls of one run, read from its `RunEvents` (the lines the timeline shows): which
calls of its latest turn asked for a person's approval, what was decided on each, and the
parameters its tool was offered with.

The engine answers the same questions with pure functions over a run's events
(`agentor.engine.approval.pending`); a run may hold 100,000 events and the timeline reads its lines
lazily, so only the lines that matter are read here: those after the latest generation (a gated
turn's requests, decisions and results all follow the generation that asked), read back from
the end, at most LOOKBACK of them. Decisions are counted as the engine counts them: the first
one after a request for its call id (`approval_history`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from agentor.engine.approval.pending import Decision, PendingCall, approval_history
from agentor.engine.argschema import tool_parameters
from agentor.engine.events import APPROVAL, APPROVAL_REQUEST, GENERATION, TOOL_RESULT, Event
from agentor.sources.logfile import line_of_type
from agentor.sources.source import RunEvents, RunSource

LOOKBACK = 5_000  # lines read back from the end at most, or from a decision to its request
_GENERATION_AT = line_of_type(GENERATION)


@dataclass(frozen=True)
class GatedCall:
    """A call of the latest turn that asked for approval: the request (`call`), the decision
    that counts (None: undecided), whether its result is recorded, its tool's parameters as
    offered to the model (a JSON schema; None when the run did not record them), the line of
    its `approval_request`."""

    call: PendingCall
    decision: Decision | None
    answered: bool
    parameters: dict[str, Any] | None
    line: int

    def waiting(self, now: float) -> bool:
        """Whether a person can still decide it (undecided, unanswered, deadline not past)."""
        return self.decision is None and not self.answered and not self.call.expired(now)


def gated_calls(log: RunEvents) -> list[GatedCall]:
    """The gated calls of the run's latest turn, in the order they were asked ([] if none)."""
    tail: list[tuple[int, Event]] = []
    end = len(log)
    for i in range(end - 1, max(-1, end - 1 - LOOKBACK), -1):
        if _GENERATION_AT.match(log.raw(i)):
            break  # told by its first bytes: a generation (its request) may be long to decode
        item = log.item(i)
        if not isinstance(item, Event):
            continue  # an unreadable line
        if item.type == GENERATION:
            break
        tail.append((i, item))
    tail.reverse()
    events = [e for _, e in tail]
    requests = [(i, e) for i, e in tail if e.type == APPROVAL_REQUEST and e.call_id]
    if not requests:
        return []
    answered = {e.call_id for e in events if e.type == TOOL_RESULT}
    # One history entry per request with a call id, in order: they pair up.
    history = approval_history(events)
    # A call asked about again (a crash interrupted it once approved) shows its latest request.
    latest = {e.call_id: i for i, e in requests}
    return [
        GatedCall(call, decided, e.call_id in answered, parameters_of(log, i, call.name), i)
        for (i, e), (call, decided) in zip(requests, history, strict=True)
        if latest[e.call_id] == i
    ]


def parameters_of(log: RunEvents, index: int, name: str) -> dict[str, Any] | None:
    """The parameters schema of tool `name` as offered by the segment line `index` is in (its
    `run_start` records the tools it offered), or None."""
    k = bisect_right(log.segment_starts, index) - 1
    start = log.item(log.segment_starts[k]) if k >= 0 else None
    return tool_parameters(start, name) if isinstance(start, Event) else None


def request_of(log: RunEvents, index: int) -> Event | None:
    """The `approval_request` an `approval` at line `index` decides (the latest one before it
    for its call id), or None."""
    decided = log.item(index)
    if not isinstance(decided, Event) or not decided.call_id:
        return None
    for i in range(index - 1, max(-1, index - 1 - LOOKBACK), -1):
        item = log.item(i)
        if not isinstance(item, Event) or item.type != APPROVAL_REQUEST:
            continue
        if item.call_id == decided.call_id:  # the latest request for it
            return item
    return None


def decision_of(log: RunEvents, index: int) -> Decision | None:
    """The decision that counts for the `approval_request` at line `index` (the first after it,
    before the call is asked again), or None while it has none."""
    request = log.item(index)
    if not isinstance(request, Event) or not request.call_id:
        return None
    for i in range(index + 1, min(len(log), index + 1 + LOOKBACK)):
        item = log.item(i)
        if not isinstance(item, Event) or item.call_id != request.call_id:
            continue
        if item.type == APPROVAL_REQUEST:
            return None  # asked again: what follows decides the new request
        if item.type == APPROVAL and (decided := Decision.of(item)) is not None:
            return decided
    return None


def waiting_calls(source: RunSource, run_id: str, now: float) -> list[GatedCall]:
    """The calls of a run that a person can still decide ([] when it cannot be read)."""
    try:
        log = source.open(run_id)
    except (OSError, KeyError, ValueError):
        return []
    try:
        return [g for g in gated_calls(log) if g.waiting(now)]
    finally:
        log.close()
