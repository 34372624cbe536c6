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
import json
import socket
import time
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from agentor.engine.approval.pending import (
    APPROVED,
    REJECTED,
    Decision,
    GatedTurn,
    PendingCall,
    approval_history,
    gated_turn,
)
from agentor.engine.argschema import check_schema, tool_parameters
from agentor.engine.events import APPROVAL, APPROVAL_REQUEST, RUN_START, TOOL_CALL, Event
from agentor.engine.history import canonical_args
from agentor.engine.store.api import BatchStore, Store
from agentor.engine.store.holding import holding_briefly, load_run, readable_lines
from agentor.engine.store.run_ids import validate_run_id
from agentor.errors import (
    AlreadyDecidedError,
    ApprovalError,
    ApprovalTimedOutError,
    InvalidArgsError,
    InvalidResultError,
    NotRequestedError,
    ToolArgumentsError,
)


class CheckingTool(Protocol):
    """What a decision asks of a tool to check edited arguments (`engine.tools.Tool` is one)."""

    name: str

    def parse_args(self, args: Any) -> Any: ...


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
    tools: Iterable[CheckingTool] = (),
    result: Any = None,
) -> list[Decision]:
    """Approve a pending call of the run (`call_id` None: every pending call); the decisions
    recorded. `args` replaces the call's arguments (one call: name it, unless only one is
    pending); it is checked against the tool's parameters when `tools` holds the tool, else
    against the parameters the run recorded as offered to the model (`check_schema`). `by`
    defaults to `user@host`.

    `result` (any JSON value but null) is for a call a crash interrupted while it ran
    (`PendingCall.interrupted`): the result it had, recorded as the tool's result when the run
    is resumed; the tool is not run again.

    Raises `RunNotFoundError`, `UnreadableRunError` (the entry is no log: a directory, a
    symlink, a FIFO, a file without one event), `RunLockedError` (a live process holds the run),
    `NotRequestedError`, `AlreadyDecidedError` (`ApprovalTimedOutError`), `InvalidArgsError`,
    `InvalidResultError`.
    """
    if args is not None and not isinstance(args, Mapping):
        raise InvalidArgsError(run_id, call_id, f"a JSON object is needed, not {_kind(args)}")
    if result is not None:
        _check_result(run_id, call_id, result, args)
    edit = None if args is None else dict(args)
    return _decide(store, run_id, call_id, APPROVED, by, note, edit, tools, result)


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


def _check_result(run_id: str, call_id: str | None, result: Any, args: object) -> None:
    if args is not None:
        raise InvalidResultError(
            run_id, call_id, "give either args (run it again so) or result (it ran), not both"
        )
    try:
        json.dumps(result, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidResultError(run_id, call_id, f"a JSON value is needed: {exc}") from None


def _decide(
    store: Store,
    run_id: str,
    call_id: str | None,
    decision: str,
    by: str | None,
    note: str | None,
    args: dict[str, Any] | None,
    tools: Iterable[CheckingTool],
    result: Any = None,
) -> list[Decision]:
    validate_run_id(run_id)
    by = default_by() if by is None else by
    if not isinstance(by, str) or not by.strip():
        raise ValueError("by= names who decides; give a non-empty name or leave it out")
    if note is not None and not isinstance(note, str):
        raise TypeError(f"note must be a str, not {type(note).__name__}")
    # An unknown run, or an entry that is no log (a directory, a symlink, a FIFO, no event),
    # is refused before a lock could create its file; read without a warning about bad lines,
    # which the read under the lock gives.
    readable_lines(store, run_id)
    with holding_briefly(store, run_id):
        events = load_run(store, run_id)  # again, under the lock: the first decision wins
        now = time.time()
        targets = _targets(run_id, events, call_id, now)
        edit = None
        if args is not None:
            if len(targets) != 1:
                raise InvalidArgsError(run_id, call_id, "name the one call the edit is for")
            edit = _checked_edit(run_id, targets[0], args, tools, events)
        if result is not None:
            _check_given(run_id, targets)
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
                result=result,
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
    if turn is not None and call_id in turn.started:
        raise _interrupted_unasked(run_id, call_id)
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


def _check_given(run_id: str, targets: list[PendingCall]) -> None:
    """A result is given for one call, which ran: one a crash interrupted."""
    if len(targets) != 1:
        raise InvalidResultError(run_id, None, "name the one call the result is for")
    call = targets[0]
    if not call.interrupted:
        raise InvalidResultError(
            run_id,
            call.call_id,
            f"{call.name} did not run: only a call interrupted while running can be given "
            "the result it had",
        )


def _interrupted_unasked(run_id: str, call_id: str) -> NotRequestedError:
    """A call a crash interrupted, not asked about yet: a resume records the question."""
    return NotRequestedError(
        run_id,
        call_id,
        f"call {call_id} of run {run_id} was interrupted while running: resume the run, "
        "then decide what it did",
    )


def _nothing_pending(run_id: str, turn: GatedTurn | None, now: float) -> ApprovalError:
    """Why no call is pending: decided already, timed out, interrupted and not asked about
    yet, or nothing was ever asked."""
    if turn is not None:
        for call_id in turn.started:
            return _interrupted_unasked(run_id, call_id)
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
    run_id: str,
    call: PendingCall,
    args: dict[str, Any],
    tools: Iterable[CheckingTool],
    events: list[Event],
) -> dict[str, Any] | None:
    """The edit to record: checked against the tool when it is known, else against the
    parameters the run recorded as offered to the model (as the TUI's editor checks it); None
    when it changes nothing (an approval as requested)."""
    tool = next((t for t in tools if t.name == call.name), None)
    if tool is not None:
        try:
            tool.parse_args(args)
        except ToolArgumentsError as exc:
            raise InvalidArgsError(run_id, call.call_id, str(exc)) from None
    else:
        why = check_schema(args, _recorded_parameters(events, call))
        if why is not None:
            raise InvalidArgsError(run_id, call.call_id, why)
    if canonical_args(args) == canonical_args(call.args):
        return None
    return args


def _recorded_parameters(events: list[Event], call: PendingCall) -> dict[str, Any] | None:
    """The parameters of the call's tool as the segment that asked for approval offered them
    (its `run_start`'s `tools`), or None when the run recorded none."""
    asked = max(
        (
            i
            for i, e in enumerate(events)
            if e.type == APPROVAL_REQUEST and e.call_id == call.call_id
        ),
        default=len(events),
    )
    start = next((e for e in reversed(events[:asked]) if e.type == RUN_START), None)
    return tool_parameters(start, call.name) if start is not None else None
