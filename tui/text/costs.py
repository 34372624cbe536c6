"""What the screens say about cost: a list's total (the runs pane's title), a run's total with
how many generations were priced (the detail). Unknown is "–", never $0
(`agentor.ops.pricing.format_cost`). Plain strings: no widgets here."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from agentor.engine.events import Event
from agentor.engine.history import event_time
from agentor.ops.pricing import RunCost, cost_of, format_cost
from agentor.sources.runrow import RunRow


def list_cost(rows: Sequence[RunRow]) -> str:
    """The cost of the runs shown, summed: "cost $1.25"; "cost ≥$1.25" when some generations
    (or some runs, not priced yet) are not counted in it; "cost –" when nothing is known, and
    "cost …" while the runs are still being priced."""
    total, known, unpriced, pending = Decimal(0), False, False, False
    for row in rows:
        cost = row.cost
        if cost is None:
            pending = pending or row.summary is not None  # not priced yet
            continue
        if cost.total is not None:
            total += cost.total
            known = True
        unpriced = unpriced or cost.unpriced > 0
    if not known:
        return "cost …" if pending else "cost –"
    return "cost " + ("≥" if unpriced or pending else "") + format_cost(total)


def cost_words(cost: RunCost | None) -> str:
    """A run's cost for the detail: the total and how many generations it prices."""
    if cost is None:
        return "… (read when the whole run has been read)"
    n = cost.priced + cost.unpriced
    if n == 0:
        return f"{format_cost(cost)} (no generations)"
    gens = f"{n} generation{'s' if n != 1 else ''}"
    if cost.unpriced == 0:
        return f"{format_cost(cost)} ({gens}, all priced)"
    why = "unknown model or no usage recorded"
    if cost.priced == 0:
        return f"{format_cost(cost)} ({gens}, none priced: {why})"
    return f"{format_cost(cost)} ({cost.priced} of {gens} priced; {cost.unpriced} not: {why})"


def generation_cost(e: Event, segment_model: str | None) -> str:
    """What generation `e` cost, priced with its model or else its segment's (the run_start's):
    "$0.0021", or "–" when unknown (no usage, a model the table does not know)."""
    return format_cost(cost_of(e.usage, e.model or segment_model, at=event_time(e)))
