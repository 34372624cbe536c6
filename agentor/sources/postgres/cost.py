"""What the runs of a PostgreSQL source cost: each run's generations read from its events
(`PostgresStore.lines_of_types`, a page of runs a query) and priced (`agentor.sources.rowcost`).

The runs table keeps each run's summary, not its generations' usage and models, so a row's
cost is read beside its whole summary: `PostgresSource.fill()` prices the rows it fills, and
rows whose run gained events since they were priced, a page at a time, in the fill's thread.
Only `run_start` and `generation` lines are decoded (their type comes first in a line).
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson

from agentor.engine.events import GENERATION, RUN_START, Event, Usage
from agentor.engine.store.pg.store import PostgresStore
from agentor.ops.pricing import RunCost
from agentor.sources.rowcost import price

_PRICED_TYPES = (b'{"type":"generation"', b'{"type":"run_start"')


def _priced_events(lines: Iterable[bytes]) -> list[Event]:
    """The run_start and generation events of a run's stored lines, with only what pricing
    reads (model, usage, time); lines that do not decode are skipped, as the loader does."""
    out = []
    for line in lines:
        if not line.startswith(_PRICED_TYPES):
            continue
        try:
            d = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(d, dict):
            continue
        model, ts = d.get("model"), d.get("ts")
        out.append(
            Event(
                GENERATION if d.get("type") == GENERATION else RUN_START,
                model=model if isinstance(model, str) else None,
                usage=Usage.from_value(d.get("usage")),
                ts=ts if isinstance(ts, int | float) and not isinstance(ts, bool) else None,
            )
        )
    return out


def run_costs(store: PostgresStore, run_ids: Iterable[str]) -> dict[str, RunCost]:
    """Each run's cost, the whole page in one query (a run without generations, or deleted
    meanwhile, costs nothing known). Raises what the store raises for a database it cannot
    read."""
    ids = list(run_ids)
    lines = store.lines_of_types(ids, (RUN_START, GENERATION))
    return {r: price(RunCost(), _priced_events(lines.get(r, ())), None)[0] for r in ids}
