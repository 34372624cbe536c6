"""What a replay answers tool calls from: the tool results of the run it replays.

A replay (`Agentor.replay`) asks another model the recorded conversation. When that model asks
for a call equal to a recorded one (the same tool, the same arguments as JSON values), the
recorded result is served, marked `replayed_from` the recorded call's id, and nothing runs; a
call the recording lacks ("novel") is answered with an error result (`novel="error"`, the
default: no side effects) or run (`novel="run"`).

Equal calls are served in the order they were recorded; once the recorded ones are used up,
the last of them answers again (a model that asks twice for what the parent asked once gets the
same answer, not an error). The recording travels in the replay's `fork` event, so a replay
resumed after a crash serves and refuses as it began, with its parent deleted or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.events import TOOL_RESULT, Event
from agentor.engine.fork_mark import NOVEL_RUN, replay_mark
from agentor.engine.history import canonical_args

# What a replay keeps of each recorded result (in the `fork` event's `recording`).
RECORDED_FIELDS = ("call_id", "name", "args", "result", "error")


@dataclass
class Recording:
    """The recorded results a replay serves, by (tool, arguments), and what it does with a
    call they lack."""

    source: str | None
    novel: str
    results: dict[tuple[str, str], list[Event]] = field(default_factory=dict)
    served: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def runs_novel(self) -> bool:
        return self.novel == NOVEL_RUN

    def answer(self, name: str, args_key: str) -> Event | None:
        """The recorded result to serve for this call, or None: it is novel."""
        found = self.results.get((name, args_key))
        if not found:
            return None
        n = self.served.get((name, args_key), 0)
        self.served[(name, args_key)] = n + 1
        return found[min(n, len(found) - 1)]

    def refusal(self, name: str) -> str:
        """The error a novel call is answered with when novel calls do not run."""
        source = f"run {self.source}" if self.source else "the recorded run"
        return f"not in the recording: {source} made no {name} call with these arguments"


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
    rec = Recording(mark.forked_from, mark.novel)
    for d in mark.recording:
        try:
            e = Event.from_dict({**d, "type": TOOL_RESULT})
        except ValueError:
            continue
        rec.results.setdefault((e.name or "", canonical_args(e.args)), []).append(e)
    for e in events[mark.index + 1 :]:
        if e.type == TOOL_RESULT and e.replayed_from is not None:
            key = (e.name or "", canonical_args(e.args))
            if key in rec.results:
                rec.served[key] = rec.served.get(key, 0) + 1
    return rec
