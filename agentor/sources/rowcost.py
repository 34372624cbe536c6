"""What a row's run cost, priced as its lines are read (`agentor.ops.pricing`).

A run's cost needs every generation's usage and model, so only a row read whole has one: a
quick row (head and tail) has none until `fill()` reads it whole, and then each line appended
adds its generations. A generation that names no model is priced with its segment's (the last
`run_start`'s), which the reader keeps beside the row (`LogTail.model`). Pricing costs about
0.2 ms a generation (genai-prices), and the price table takes ~0.3 s to load on the first price
asked for: rows are priced in the fill's thread, never by the first scan.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentor.engine.events import GENERATION, RUN_START, Event
from agentor.engine.history import event_time
from agentor.ops.pricing import RunCost, cost_of
from agentor.sources.runrow import RunRow


def needs_pricing(row: RunRow) -> bool:
    """A readable row whose cost is not known yet (it was read quickly, or without pricing)."""
    return row.cost is None and row.summary is not None


def price(cost: RunCost, events: Iterable[Event], model: str | None) -> tuple[RunCost, str | None]:
    """`cost` with the generations of `events` added, and the segment's model after them
    (`model`: the segment's model before them)."""
    costs = []
    for e in events:
        if e.type == RUN_START:
            model = e.model
        elif e.type == GENERATION:
            costs.append(cost_of(e.usage, e.model or model, at=event_time(e)))
    return (cost + RunCost.of(costs) if costs else cost), model
