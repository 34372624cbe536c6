"""Planning a fork from its parent's lines: what it copies, its `fork` event, and the events its
own segment opens with. Pure: agentor.forking reads the parent and runs the plan.

Where a fork starts (`at`, a line of the parent's log as the TUI numbers it, from 1):

- a `tool_result`, with a new `result`: the fork keeps everything before that line, answers
  that call with the new result and the generation's other calls with the results the parent
  recorded for them (wherever they are in its log, before its next generation), and goes on
  from there: the model sees the new result. Nothing recorded runs again.
- a `generation`: the fork keeps everything before it and asks the model again (another model,
  and a user message added, when given).
- the first `run_start`: the agent from the start, with a new prompt when given (a later
  segment's `run_start` is forked as the generation after it would be).
- no line: the whole run (upstream's fork): continued with a new user message when given,
  else finished on the fork (a run that needs nothing is copied as it is).

Copied events are the parent's, byte for byte, except what only described the parent's
processes: a fleet's `claim` and `release` markers, and a segment's `run_start` with no step
after it (the fork opens its own segment there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.approval.pending import gated_turn
from agentor.engine.events import CLAIM, GENERATION, RELEASE, RUN_START, TOOL_RESULT, Event
from agentor.engine.fork_mark import CALL_ID, INPUT, MODEL, NAME, PROMPT, RESULT, fork_event
from agentor.engine.history import call_parts
from agentor.engine.log.format import BadLine

Line = Event | BadLine
FORKABLE = (RUN_START, GENERATION, TOOL_RESULT)
WHAT_FORKS = "a fork starts at a run_start, a generation or a tool_result line"


@dataclass
class ForkPlan:
    """A fork's first write: `before` (the copied events, then the `fork` event) and `after`
    (what its segment opens with, after its `run_start`: a tool_result fork's results)."""

    before: list[Event]
    after: list[Event] = field(default_factory=list)

    @property
    def events(self) -> list[Event]:
        """The fork's log as planned, without the run_start its segment will have."""
        return [*self.before, *self.after]


def plan_fork(
    parent: str,
    lines: Sequence[Line],
    now: float,
    *,
    at: int | None = None,
    result: Any = None,
    added: list[dict[str, Any]] | None = None,
    prompt: list[dict[str, Any]] | None = None,
    model: str | None = None,
    replay: dict[str, Any] | None = None,
) -> ForkPlan:
    """The plan of a fork of `parent` (see the module). `added`: the user messages `input=`
    makes after a conversation; `prompt`: the messages it makes to start one; `model`: the
    name of the model the fork runs with, when another one was asked for; `replay`: what
    makes it a replay (agentor.engine.fork_mark). `ValueError` (and
    `TypeError` for an `at` that is no line number) saying what can be forked."""
    edit: dict[str, Any] = {MODEL: model} if model else {}
    if at is None:
        if result is not None:
            raise ValueError("result= replaces a tool result: give at=, the line of a tool_result")
        copied = copy_lines(lines)
        if added:
            _refuse_unanswered(parent, copied)
            edit[INPUT] = added
        return ForkPlan([*copied, fork_event(parent, now, None, edit)])
    item = forked_line(parent, lines, at)
    if item.type == TOOL_RESULT:
        return _at_result(parent, lines, at, item, result, added, edit, now)
    if result is not None:
        raise ValueError(
            f"result= replaces a tool result; line {at} of run {parent} is a {item.type}"
        )
    copied = copy_lines(lines[: at - 1])
    if item.type == RUN_START and not any(e.type == RUN_START for e in copied):
        edit[PROMPT] = prompt or item.messages or []
    elif added:
        edit[INPUT] = added
    return ForkPlan([*copied, fork_event(parent, now, at, edit, replay)])


def forked_line(parent: str, lines: Sequence[Line], at: int) -> Event:
    """The event on line `at` of the parent, if a fork can start there."""
    if isinstance(at, bool) or not isinstance(at, int):
        raise TypeError(f"at= is a line number of run {parent} (an int), not {at!r}")
    if not 1 <= at <= len(lines):
        n = len(lines)
        raise ValueError(f"run {parent} has {n} line{'s' * (n != 1)}: there is no line {at}")
    item = lines[at - 1]
    if isinstance(item, BadLine):
        raise ValueError(f"line {at} of run {parent} is unreadable ({item.reason}); {WHAT_FORKS}")
    if item.type not in FORKABLE:
        raise ValueError(f"line {at} of run {parent} is a {item.type}; {WHAT_FORKS}")
    return item


def copy_lines(lines: Sequence[Line]) -> list[Event]:
    """The events a fork copies from these lines of its parent (see the module)."""
    copied = [e for e in lines if isinstance(e, Event) and e.type not in (CLAIM, RELEASE)]
    starts = [i for i, e in enumerate(copied) if e.type == RUN_START]
    if len(starts) > 1 and starts[-1] == len(copied) - 1:
        copied.pop()  # an empty segment: the fork's own run_start follows
    return copied


def _at_result(
    parent: str,
    lines: Sequence[Line],
    at: int,
    item: Event,
    result: Any,
    added: list[dict[str, Any]] | None,
    edit: dict[str, Any],
    now: float,
) -> ForkPlan:
    if result is None:
        raise ValueError(
            f"line {at} of run {parent} is a tool_result: give result=, the value to use instead"
        )
    if added:
        raise ValueError("input= cannot go with result=: fork at the generation after it instead")
    copied = copy_lines(lines[: at - 1])
    gen = next((i for i in range(len(copied) - 1, -1, -1) if copied[i].type == GENERATION), None)
    asked = [call_parts(c)[0] for c in copied[gen].calls or []] if gen is not None else []
    if item.call_id not in asked:
        raise ValueError(
            f"line {at} of run {parent} answers no call of the generation before it: "
            "there is no turn to continue"
        )
    assert gen is not None
    edited = _result(item, now, result, None)
    edit.update({CALL_ID: item.call_id, NAME: item.name, RESULT: result})
    answered = {e.call_id for e in copied[gen + 1 :] if e.type == TOOL_RESULT}
    kept: dict[str, Event] = {}
    for e in lines[at:]:
        if isinstance(e, BadLine):
            continue
        if e.type == GENERATION:
            break  # the parent's next turn: what it recorded from here on is not this turn's
        cid = e.call_id
        if e.type == TOOL_RESULT and cid in asked and cid not in (item.call_id, *answered, *kept):
            kept[cid] = _result(e, now, e.result, e.error, replayed_from=cid)
    mark = fork_event(parent, now, at, edit)
    return ForkPlan([*copied, mark], [edited, *kept.values()])


def _result(
    recorded: Event, now: float, result: Any, error: str | None, replayed_from: str | None = None
) -> Event:
    """A tool result of the fork's own segment for a recorded call (nothing runs):
    `replayed_from` the call whose recorded result it repeats."""
    return Event(
        TOOL_RESULT,
        name=recorded.name,
        args=recorded.args,
        call_id=recorded.call_id,
        turn=recorded.turn,
        result=result,
        error=error,
        started_at=now,
        ended_at=now,
        ts=now,
        replayed_from=replayed_from,
    )


def _refuse_unanswered(parent: str, copied: list[Event]) -> None:
    """A message cannot follow calls that wait for a decision: the request would be invalid."""
    turn = gated_turn(copied)
    if turn is None:
        return
    waiting = ", ".join(f"{p.call_id} ({p.name})" for p in turn.pending()) or "decided, not run"
    raise ValueError(
        f"run {parent} waits for approval of calls of its last turn: {waiting}; fork it "
        "without input= (the fork waits for its own decisions), or at an earlier line"
    )
