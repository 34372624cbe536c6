"""What a row's run cost, priced as its lines are read (`agentor.ops.pricing`).

A run's cost needs every generation's usage and model, so only a row read whole has one: a
quick row (head and tail) has none until `fill()` reads it whole, and then each line appended
adds its generations. A generation that names no model is priced with its segment's (the last
`run_start`'s), which the reader keeps beside the row (`LogTail.model`). Pricing costs a few µs
a generation (`pricing.cost_of`), and the price table takes ~0.3 s to load on the first price
asked for: rows are priced in the fill's thread, never by the first scan.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentor.engine.events import GENERATION, RUN_START, Event, Usage
from agentor.engine.history import event_time
from agentor.ops.pricing import RunCost, cost_of
from agentor.sources.runrow import RunRow

# What pricing reads of a generation folded without an event
# (`agentor.sources.directory.linefold`): its model (or None), its usage's (input, output,
# total) tokens (or None: no usage), and its time (`history.event_time` of its event).
Gen = tuple[str | None, tuple[int, int, int] | None, Any]


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


def price_folded(
    cost: RunCost, priced: Iterable[Event | Gen], model: str | None
) -> tuple[RunCost, str | None]:
    """`price` of lines folded by `linefold.fold_lines`, from what it handed back of them
    (`priced`: events, and each generation folded without one as a `Gen`): the same
    cost, to the `Decimal`."""
    costs = []
    for item in priced:
        if not isinstance(item, Event):
            named, counts, t = item
            usage = None if counts is None else Usage(*counts)
            costs.append(cost_of(usage, named or model, at=t))
        elif item.type == RUN_START:
            model = item.model
        elif item.type == GENERATION:
            costs.append(cost_of(item.usage, item.model or model, at=event_time(item)))
    return (cost + RunCost.of(costs) if costs else cost), model
