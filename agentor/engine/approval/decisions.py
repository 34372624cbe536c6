"""A person's decisions on gated calls, recorded in a store: `approve` and `reject`.

They need no agent (a UI or a script may not have one): a decision is an `approval` event
appended to the run's log. It is taken under the run's lock (`LockingStore`), reading the log
again once the lock is held, so the first decision on a call wins and a second decider is told
who decided what and when (`AlreadyDecidedError`). The run then continues when resumed.

A store without a lock cannot give that guarantee: two deciders racing may both append a
decision, each told it succeeded, and a decision may land while a process runs the run. The
log still says one thing, since only the first decision after a request counts (a resume acts
on it, every reader shows it), but the later decider's decision is silently ignored.
"""

from __future__ import annotations

import getpass
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any

from agentor.engine.approval.pending import (
    APPROVED,
    REJECTED,
    TIMEOUT_BY,
    Decision,
    GatedTurn,
    PendingCall,
    approval_history,
    gated_turn,
)
from agentor.engine.events import APPROVAL, TOOL_CALL, Event
from agentor.engine.history import canonical_args
from agentor.engine.store.api import BatchStore, Store
from agentor.engine.store.holding import holding_briefly, load_run
from agentor.engine.store.run_ids import validate_run_id
from agentor.engine.tools import Tool
from agentor.errors import ToolArgumentsError


def _when(at: float | None) -> str:
    if at is None:
        return "at an unknown time"
    return time.strftime("at %Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


class ApprovalError(Exception):
    """A decision that cannot be recorded; nothing was written. `call_id` is None when the
    decision was for every pending call of the run."""

    def __init__(self, run_id: str, call_id: str | None, message: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.call_id = call_id


class AlreadyDecidedError(ApprovalError):
    """The call was decided before: `decision` ("approved" / "rejected"), `by`, `at` (seconds
    since the epoch), `note`, and the tool's `name`. The first decision on a call counts."""

    def __init__(self, run_id: str, decided: Decision, message: str | None = None) -> None:
        self.decision = decided.decision
        self.by = decided.by
        self.at = decided.at
        self.note = decided.note
        self.name = decided.name
        if message is None:
            note = f" ({decided.note})" if decided.note else ""
            message = (
                f"call {decided.call_id} ({decided.name}) of run {run_id} was already "
                f"{decided.decision} by {decided.by} {_when(decided.at)}{note}"
            )
        super().__init__(run_id, decided.call_id, message)


class ApprovalTimedOutError(AlreadyDecidedError):
    """The call's deadline passed before anyone decided: it counts as rejected (`by` is
    "timeout", `at` the deadline)."""

    def __init__(self, run_id: str, call: PendingCall) -> None:
        expired = Decision(
            call.call_id, call.name, call.turn, REJECTED, TIMEOUT_BY, "timed out", at=call.deadline
        )
        message = (
            f"call {call.call_id} ({call.name}) of run {run_id} timed out "
            f"{_when(call.deadline)}, undecided: it counts as rejected"
        )
        super().__init__(run_id, expired, message)


class NotRequestedError(ApprovalError, LookupError):
    """The call never asked for approval (no such call, or its tool is not gated), or the run
    has no call waiting for one (`call_id` None)."""


class InvalidArgsError(ApprovalError, ValueError):
    """Edited arguments that are not a JSON object, or do not fit the tool's parameters;
    `reason` says what is wrong."""

    def __init__(self, run_id: str, call_id: str | None, reason: str) -> None:
        super().__init__(run_id, call_id, f"edited arguments for call {call_id}: {reason}")
        self.reason = reason


def default_by() -> str:
    """Who decides when no one is named: `user@host` of this process."""
    try:
        user = getpass.getuser()
    except Exception:  # no login name in this environment (a bare container)
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def approve(
    store: Store,
    run_id: str,
    call_id: str | None = None,
    *,
    args: Mapping[str, Any] | None = None,
    by: str | None = None,
    note: str | None = None,
    tools: Iterable[Tool] = (),
) -> list[Decision]:
    """Approve a pending call of the run (`call_id` None: every pending call); the decisions
    recorded. `args` replaces the call's arguments (one call: name it, unless only one is
    pending); it is checked against the tool's parameters when `tools` holds the tool, else a
    bad edit reaches the model as the tool's error. `by` defaults to `user@host`.

    Raises `RunNotFoundError`, `RunLockedError` (a live process holds the run),
    `NotRequestedError`, `AlreadyDecidedError` (`ApprovalTimedOutError`), `InvalidArgsError`.
    """
    if args is not None and not isinstance(args, Mapping):
        raise InvalidArgsError(run_id, call_id, f"a JSON object is needed, not {_kind(args)}")
    edit = None if args is None else dict(args)
    return _decide(store, run_id, call_id, APPROVED, by, note, edit, tools)


def reject(
    store: Store, run_id: str, call_id: str | None = None, *, reason: str, by: str | None = None
) -> list[Decision]:
    """Reject a pending call of the run (`call_id` None: every pending call); the decisions
    recorded. The model gets the call's result as an error: "rejected by <by>: <reason>".
    Raises as `approve` does."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("reject needs a reason: the model is told it")
    return _decide(store, run_id, call_id, REJECTED, by, reason, None, ())


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _decide(
    store: Store,
    run_id: str,
    call_id: str | None,
    decision: str,
    by: str | None,
    note: str | None,
    args: dict[str, Any] | None,
    tools: Iterable[Tool],
) -> list[Decision]:
    validate_run_id(run_id)
    by = default_by() if by is None else by
    if not isinstance(by, str) or not by.strip():
        raise ValueError("by= names who decides; give a non-empty name or leave it out")
    if note is not None and not isinstance(note, str):
        raise TypeError(f"note must be a str, not {type(note).__name__}")
    load_run(store, run_id)  # an unknown run is refused before a lock could create its file
    with holding_briefly(store, run_id):
        events = load_run(store, run_id)  # again, under the lock: the first decision wins
        now = time.time()
        targets = _targets(run_id, events, call_id, now)
        edit = None
        if args is not None:
            if len(targets) != 1:
                raise InvalidArgsError(run_id, call_id, "name the one call the edit is for")
            edit = _checked_edit(run_id, targets[0], args, tools)
        made = [
            Event(
                APPROVAL,
                call_id=t.call_id,
                name=t.name,
                turn=t.turn,
                decision=decision,
                by=by,
                note=note,
                args=edit,
                ts=now,
            )
            for t in targets
        ]
        if isinstance(store, BatchStore):
            store.append_many(run_id, made)
        else:
            for event in made:
                store.append(run_id, event)
    return [d for d in map(Decision.of, made) if d is not None]


def _targets(
    run_id: str, events: list[Event], call_id: str | None, now: float
) -> list[PendingCall]:
    """The calls a decision is for; raises when there is none to decide."""
    turn = gated_turn(events)
    if call_id is None:
        if turn is not None and turn.pending(now):
            return turn.pending(now)
        raise _nothing_pending(run_id, turn, now)
    if turn is not None and call_id in turn.requests:
        decided = turn.decisions.get(call_id)
        if decided is not None:
            raise AlreadyDecidedError(run_id, decided)
        if call_id in turn.results:
            raise NotRequestedError(run_id, call_id, f"call {call_id} of run {run_id} is answered")
        call = PendingCall.of(turn.requests[call_id])
        if call.expired(now):
            raise ApprovalTimedOutError(run_id, call)
        return [call]
    # Not waiting now: decided in an earlier turn, or never asked.
    for request, decided in reversed(approval_history(events)):
        if request.call_id == call_id and decided is not None:
            raise AlreadyDecidedError(run_id, decided)
    raise NotRequestedError(run_id, call_id, _never_asked(run_id, events, call_id))


def _nothing_pending(run_id: str, turn: GatedTurn | None, now: float) -> ApprovalError:
    """Why no call is pending: decided already, timed out, or nothing was ever asked."""
    if turn is not None:
        for call_id in turn.requests:
            if call_id in turn.decisions:
                return AlreadyDecidedError(run_id, turn.decisions[call_id])
        for call in turn.expired(now):
            return ApprovalTimedOutError(run_id, call)
    return NotRequestedError(run_id, None, f"run {run_id} has no call waiting for approval")


def _never_asked(run_id: str, events: list[Event], call_id: str) -> str:
    call = next((e for e in events if e.type == TOOL_CALL and e.call_id == call_id), None)
    if call is None:
        return f"run {run_id} has no call {call_id}"
    return f"call {call_id} ({call.name}) of run {run_id} did not ask for approval"


def _checked_edit(
    run_id: str, call: PendingCall, args: dict[str, Any], tools: Iterable[Tool]
) -> dict[str, Any] | None:
    """The edit to record: checked against the tool when it is known; None when it changes
    nothing (an approval as requested)."""
    tool = next((t for t in tools if t.name == call.name), None)
    if tool is not None:
        try:
            tool.parse_args(args)
        except ToolArgumentsError as exc:
            raise InvalidArgsError(run_id, call.call_id, str(exc)) from None
    if canonical_args(args) == canonical_args(call.args):
        return None
    return args
