"""Pure functions over a run's events: which calls wait for a person, and what was decided.

No I/O: the engine resumes from `gated_turn`, and a UI (or a script) reads the same answers
from the events it shows. A gated call leaves three kinds of events in a log:

    approval_request  {call_id, name, args, turn, deadline?}   saved with the generation
    approval          {call_id, name, turn, decision, by, note, args?, result?}   a decision
    tool_result       the call's answer: run (approved) or an error (rejected)

A call a crash interrupted while it ran (agentor.engine.interrupted) is asked about the same way:
its request carries `reason`, `started_at`, `host` and `pid`; an approval may then give the
`result` it had instead of running it again.

A decision belongs to the latest request for its call id (call ids repeat across turns: many
servers number calls per request) and the first decision after that request is the one that
counts; `approve`/`reject` (agentor.engine.approval.decisions) never write a second one.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.events import (
    APPROVAL,
    APPROVAL_REQUEST,
    GENERATION,
    TOOL_RESULT,
    TOOL_START,
    Event,
)
from agentor.engine.history import ResumePoint, call_parts, resume_point
from agentor.engine.interrupted import OUTCOME_UNKNOWN

APPROVED = "approved"
REJECTED = "rejected"
DECISIONS = (APPROVED, REJECTED)
# Who "decided" a call whose deadline passed before anyone did (recorded by the resume).
TIMEOUT_BY = "timeout"


@dataclass(frozen=True)
class PendingCall:
    """A gated call waiting for a decision. `requested_at` and `deadline` are seconds since
    the epoch (`deadline` None: it waits for good). For a call a crash interrupted while it
    ran, `reason` says so and `started_at`, `host`, `pid` say when and where it ran; `server`
    names the MCP server of its tool."""

    call_id: str
    name: str
    args: Any
    turn: int | None
    requested_at: float | None
    deadline: float | None = None
    reason: str | None = None
    started_at: float | None = None
    host: str | None = None
    pid: int | None = None
    server: str | None = None

    @property
    def interrupted(self) -> bool:
        """Whether it ran, and a crash hid what it did (it may be given its result)."""
        return self.reason == OUTCOME_UNKNOWN

    def expired(self, now: float | None = None) -> bool:
        """Whether its deadline has passed: it counts as rejected ("timed out")."""
        if self.deadline is None:
            return False
        return (time.time() if now is None else now) >= self.deadline

    def timed_out(self) -> Decision:
        """The decision its passed deadline stands for: rejected by "timeout" at the deadline."""
        return Decision(
            self.call_id, self.name, self.turn, REJECTED, TIMEOUT_BY, "timed out", at=self.deadline
        )

    @classmethod
    def of(cls, request: Event) -> PendingCall:
        return cls(
            call_id=request.call_id or "",
            name=request.name or "",
            args=request.args,
            turn=request.turn,
            requested_at=request.ts,
            deadline=request.deadline,
            reason=request.reason,
            started_at=request.started_at,
            host=request.host,
            pid=request.pid,
            server=request.server,
        )


@dataclass(frozen=True)
class Decision:
    """A decision on a requested call. `args` holds the approver's edit (None: as requested);
    `result`, the result an interrupted call had, given instead of running it again (None:
    none given); `at` is when it was recorded."""

    call_id: str
    name: str
    turn: int | None
    decision: str
    by: str
    note: str | None = None
    args: Any = None
    at: float | None = None
    result: Any = None

    @property
    def approved(self) -> bool:
        return self.decision == APPROVED

    @property
    def edited(self) -> bool:
        return self.args is not None

    @property
    def given(self) -> bool:
        """Whether it gives the call's result (recorded as such, the tool not run)."""
        return self.approved and self.result is not None

    def rejection(self) -> str:
        """The tool error a rejected call answers the model with."""
        return f"rejected by {self.by}: {self.note or 'no reason given'}"

    @classmethod
    def of(cls, event: Event) -> Decision | None:
        """The decision an `approval` event records; None for a malformed one."""
        if event.type != APPROVAL or event.decision not in DECISIONS or not event.call_id:
            return None
        return cls(
            call_id=event.call_id,
            name=event.name or "",
            turn=event.turn,
            decision=event.decision,
            by=event.by or "someone",
            note=event.note,
            args=event.args,
            at=event.ts,
            result=event.result,
        )


@dataclass
class GatedTurn:
    """The run's latest generation, when some of its calls asked for approval and not all of
    its calls are answered, or when a call started there has no result (a crash interrupted
    it): a resume finishes this turn (it never asks the model it again). Each map is keyed by
    call id; `requests` holds the latest request for each call, `decisions` the first decision
    after it, `started` the `tool_start` of each call interrupted since."""

    index: int
    generation: Event
    requests: dict[str, Event] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    results: dict[str, Event] = field(default_factory=dict)
    started: dict[str, Event] = field(default_factory=dict)

    def call_ids(self) -> list[str]:
        return [call_parts(c)[0] for c in self.generation.calls or []]

    def pending(self, now: float | None = None) -> list[PendingCall]:
        """Requested calls with neither a decision nor a result, in the order asked; with
        `now`, those whose deadline has passed are left out (they count as rejected). A call
        interrupted since its request waits for a resume to ask about it again, not yet for
        a decision."""
        out = []
        for call_id, request in self.requests.items():
            if call_id in self.decisions or call_id in self.results or call_id in self.started:
                continue
            call = PendingCall.of(request)
            if now is None or not call.expired(now):
                out.append(call)
        return out

    def expired(self, now: float) -> list[PendingCall]:
        """Requested calls, neither decided nor answered, whose deadline has passed."""
        return [c for c in self.pending() if c.expired(now)]


def gated_turn(events: Sequence[Event]) -> GatedTurn | None:
    """The turn waiting for (or just given) decisions, if the log ends in one (see GatedTurn)."""
    # The generation `resume_point` would continue from: the last one whose request is known.
    index = next(
        (
            i
            for i in range(len(events) - 1, -1, -1)
            if events[i].type == GENERATION and events[i].messages is not None
        ),
        None,
    )
    if index is None or not events[index].calls:
        return None
    turn = GatedTurn(index, events[index])
    for e in events[index + 1 :]:
        if e.type == GENERATION:
            break
        if not e.call_id:
            continue
        if e.type == APPROVAL_REQUEST:  # a call asked about again starts afresh
            turn.requests[e.call_id] = e
            turn.decisions.pop(e.call_id, None)
            turn.started.pop(e.call_id, None)
        elif e.type == APPROVAL and e.call_id in turn.requests:
            decision = Decision.of(e)
            if decision is not None:
                turn.decisions.setdefault(e.call_id, decision)
        elif e.type == TOOL_START:
            turn.started[e.call_id] = e
        elif e.type == TOOL_RESULT:
            turn.results[e.call_id] = e
            turn.started.pop(e.call_id, None)
    waits = turn.requests or turn.started
    if not waits or all(cid in turn.results for cid in turn.call_ids()):
        return None
    return turn


def pending_calls(events: Sequence[Event], now: float | None = None) -> list[PendingCall]:
    """The calls of the run that wait for a decision (`GatedTurn.pending`); [] if none."""
    turn = gated_turn(events)
    return [] if turn is None else turn.pending(now)


def approval_history(events: Sequence[Event]) -> list[tuple[PendingCall, Decision | None]]:
    """Every approval request in the log, in order, with the decision that counts for it (the
    first one after it for its call id), or None while undecided. For a timeline or an audit."""
    out: list[tuple[PendingCall, Decision | None]] = []
    open_at: dict[str, int] = {}
    for e in events:
        if e.type == APPROVAL_REQUEST and e.call_id:
            open_at[e.call_id] = len(out)
            out.append((PendingCall.of(e), None))
        elif e.type == APPROVAL and e.call_id in open_at:
            i = open_at[e.call_id]
            decision = Decision.of(e)
            if out[i][1] is None and decision is not None:
                out[i] = (out[i][0], decision)
    return out


def timeout_event(call: PendingCall) -> Event:
    """The `approval` a resume records for a call whose deadline passed undecided."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(call.deadline or 0))
    return Event(
        APPROVAL,
        call_id=call.call_id,
        name=call.name,
        turn=call.turn,
        decision=REJECTED,
        by=TIMEOUT_BY,
        note=f"timed out: no decision by {when}",
    )


def gated_point(events: Sequence[Event], turn: GatedTurn) -> ResumePoint:
    """Where a resume of a gated turn picks up: that generation's request, its turn, answered
    in place (not rewound). Its calls' recorded results answer their own calls, so they are
    not kept to answer equal calls of later turns too."""
    point = resume_point(events)
    own = {id(e) for e in turn.results.values()}
    gen = turn.generation
    assert gen.messages is not None
    return dataclasses.replace(
        point,
        messages=list(gen.messages),
        turn=gen.turn or 0,
        final_text=None,
        rewound=False,
        recorded=[r for r in point.recorded if id(r.event) not in own],
    )
