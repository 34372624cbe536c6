"""What a replay answers tool calls from: the tool results of the run it replays, and how each of
a replay's tool results was answered.

A replay (`Agentor.replay`) asks a model the recorded conversation again. Which recorded result
answers a call is its `match`:

- "strict" (the default): a call equal to a recorded one (the same tool, the same arguments as
  JSON values) gets its recorded result. Equal calls are served in the order they were
  recorded; once they are used up, the last of them answers again (a model that asks twice for
  what the parent asked once gets the same answer, not an error).
- "fifo": a call gets the next recorded result of its tool, in recorded order, whatever its
  arguments. Arguments other than the recorded call's are *drift*: the served result keeps the
  recorded call's arguments in `drift`. Once a tool's recorded results are used up, its calls
  are novel.

A served result is marked `replayed_from` the recorded call's id, and nothing runs. A call with
no recorded answer ("novel") follows `novel`: it is answered with an error result ("error",
the default: nothing runs), the replay ends there, `diverged`, its run_end naming the call
("stop": nothing runs), or the agent runs it, its gates and approval rules included ("run").
The result of a novel call is marked `novel: true`.

The recording travels in the replay's `fork` event, with its `match` and `novel`, so a replay
resumed after a crash serves and refuses as it began, with its parent deleted or not.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.events import GENERATION, TOOL_RESULT, Event
from agentor.engine.fork_mark import MATCH_FIFO, MATCH_STRICT, NOVEL_RUN, NOVEL_STOP, replay_mark
from agentor.engine.history import canonical_args

# What a replay keeps of each recorded result (in the `fork` event's `recording`).
RECORDED_FIELDS = ("call_id", "name", "args", "result", "error")
# Fields of a replay's tool_result: the recorded call's arguments, when they were not the
# call's (fifo); and that the call had no recorded answer.
DRIFT = "drift"
NOVEL_FIELD = "novel"
# How a tool result was answered (`answered`).
SERVED = "served"  # from a record (a replay's recording, or a result recorded before a crash)
EXECUTED = "executed"  # by the agent: its tool ran (or its own rules answered it)
REFUSED = "refused"  # a replay's novel call, answered with an error: nothing ran
GIVEN = "given"  # a person gave the result an interrupted call had: nothing ran
REFUSAL_PREFIX = "not in the recording: "
ARGS_SHOWN = 300  # characters of a call's arguments a divergence's error quotes


@dataclass
class Recording:
    """The recorded results a replay serves, by tool and arguments ("strict") or by tool
    ("fifo"), and what it does with a call they lack."""

    source: str | None
    novel: str
    match: str = MATCH_STRICT
    results: dict[Hashable, list[Event]] = field(default_factory=dict)
    served: dict[Hashable, int] = field(default_factory=dict)

    @property
    def runs_novel(self) -> bool:
        return self.novel == NOVEL_RUN

    @property
    def stops_at_novel(self) -> bool:
        return self.novel == NOVEL_STOP

    def key(self, name: str, args_key: str) -> Hashable:
        """What calls answered by the same recorded results share."""
        return name if self.match == MATCH_FIFO else (name, args_key)

    def add(self, event: Event) -> None:
        """A recorded result, after those added before it."""
        key = self.key(event.name or "", canonical_args(event.args))
        self.results.setdefault(key, []).append(event)

    def answer(self, name: str, args_key: str) -> Event | None:
        """The recorded result to serve for this call, or None: it is novel."""
        key = self.key(name, args_key)
        found = self.results.get(key)
        if not found:
            return None
        n = self.served.get(key, 0)
        if n >= len(found) and self.match == MATCH_FIFO:
            return None
        self.served[key] = n + 1
        return found[min(n, len(found) - 1)]

    def refusal(self, name: str) -> str:
        """The error a novel call is answered with when novel calls do not run."""
        source = f"run {self.source}" if self.source else "the recorded run"
        if self.match == MATCH_FIFO:
            made = len(self.results.get(name, ()))
            if made:
                calls = "call" if made == 1 else "calls"
                return f"{REFUSAL_PREFIX}{source} made {made} {name} {calls}, all served already"
            return f"{REFUSAL_PREFIX}{source} made no {name} call"
        return f"{REFUSAL_PREFIX}{source} made no {name} call with these arguments"

    def divergence(self, name: str, args: Any) -> str:
        """The error of a replay that stopped at this novel call (`novel="stop"`)."""
        shown = json.dumps(args, ensure_ascii=False, default=str)
        if len(shown) > ARGS_SHOWN:
            shown = shown[: ARGS_SHOWN - 1] + "…"
        why = self.refusal(name).removeprefix(REFUSAL_PREFIX)
        return f"{name} {shown} has no recorded answer ({why})"


def drift_of(recorded: Event, args_key: str) -> dict[str, Any]:
    """The `drift` field of a result served from `recorded` to a call with these arguments:
    the recorded call's arguments when they differ (empty when they do not). A result served
    again from a record of the replay's own (a turn a crash cut off) keeps the drift it had."""
    if DRIFT in recorded.extra:
        return {DRIFT: recorded.extra[DRIFT]}
    args = recorded.args if recorded.args is not None else {}
    return {} if canonical_args(args) == args_key else {DRIFT: args}


def answered(event: Event) -> str:
    """How a tool result was answered: SERVED, EXECUTED, REFUSED or GIVEN."""
    if event.replayed_from is not None:
        return SERVED
    if event.by is not None:
        return GIVEN
    error = event.error
    if error is not None and (
        event.extra.get(NOVEL_FIELD) is True or error.startswith(REFUSAL_PREFIX)
    ):
        return REFUSED
    return EXECUTED


def marked_answer(event: Event) -> str | None:
    """How a tool result was answered, for a view to mark: SERVED, REFUSED, or EXECUTED for a
    replay's call with no recorded answer that ran; None for the plain way (its own agent ran
    it, or a person gave the result, which the result says)."""
    how = answered(event)
    if how in (SERVED, REFUSED):
        return how
    if how == EXECUTED and event.extra.get(NOVEL_FIELD) is True:
        return EXECUTED
    return None


def recorded_results(events: Sequence[Event]) -> list[dict[str, Any]]:
    """The tool results of a run, as a replay's `fork` event keeps them (RECORDED_FIELDS)."""
    out = []
    for e in events:
        if e.type == TOOL_RESULT and e.name:
            d = e.to_dict()
            out.append({k: d[k] for k in RECORDED_FIELDS if k in d})
    return out


def recording_of(events: Sequence[Event]) -> Recording | None:
    """The recording a replay's log holds, with the calls it has served so far counted (a
    resumed replay goes on where it was); None for a run that is no replay."""
    mark = replay_mark(events)
    if mark is None:
        return None
    rec = Recording(mark.forked_from, mark.novel, mark.match)
    for d in mark.recording:
        try:
            rec.add(Event.from_dict({**d, "type": TOOL_RESULT}))
        except ValueError:
            continue
    _count_served(rec, events[mark.index + 1 :])
    return rec


def _count_served(rec: Recording, own: Sequence[Event]) -> None:
    """Count what the replay's own events served from the recording. A turn asked again (a
    resume rewound it) counts once: by the results of its last generation, which a result
    the cut-off attempt served answers again from its own record, not from the recording."""
    last_of_turn = {e.turn: i for i, e in enumerate(own) if e.type == GENERATION}
    current: int | None = None
    for i, e in enumerate(own):
        if e.type == GENERATION:
            current = i
        elif e.type == TOOL_RESULT and e.replayed_from is not None and current is not None:
            if last_of_turn.get(own[current].turn) != current:
                continue  # an attempt at the turn that a resume asked again
            key = rec.key(e.name or "", canonical_args(e.args))
            if key in rec.results:
                rec.served[key] = rec.served.get(key, 0) + 1
