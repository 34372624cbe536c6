"""One run read whole from its `RunEvents`, for what needs every event at once (the compare
view, the playback): `read_run`.

The timeline decodes a line when it is drawn; a comparison needs every event, generations with
their requests (what the model was asked is compared too), as `store.load` gives them. Cost:
every line decoded once and every request rebuilt, so a view that calls this reads the run
once, when it opens.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentor.engine.events import GENERATION, Event
from agentor.engine.log.format import BadLine
from agentor.sources.lineage import lineage_of
from agentor.sources.source import RunEvents


@dataclass
class WholeRun:
    """A run's lines: `items` (events and unreadable lines, as the timeline numbers them),
    `events` (the events only, generations with their requests), `lines` (each event's line,
    1-based, by its position in `events`)."""

    run_id: str
    items: list[Event | BadLine]
    events: list[Event]
    lines: list[int]

    def line_of(self, index: int | None) -> int | None:
        """The log line of the event at `index` of `events` (None: no such event)."""
        return self.lines[index] if index is not None and 0 <= index < len(self.lines) else None

    @property
    def parent(self) -> str | None:
        """The run this one was forked (or replayed) from, as its row's lineage says
        (`agentor.sources.lineage`); None for no fork."""
        return lineage_of(self.run_id, self.events)[0]


def read_run(run_id: str, log: RunEvents, requests: bool = True) -> WholeRun:
    """Every line of the run as it is indexed now (OSError when it cannot be read); without
    `requests`, generations keep `messages=None` (a playback shows no request)."""
    items: list[Event | BadLine] = []
    events: list[Event] = []
    lines: list[int] = []
    for i in range(len(log)):
        item = log.item(i)
        if requests and isinstance(item, Event) and item.type == GENERATION:
            item = replace(item, messages=list(log.request(i) or []), extra=dict(item.extra))
        items.append(item)
        if isinstance(item, Event):
            events.append(item)
            lines.append(i + 1)
    return WholeRun(run_id, items, events, lines)
