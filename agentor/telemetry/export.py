"""Runs already in a store, sent as spans after the fact (`agentor export --format otlp`).

Each run is read once, whole; a run nobody holds is complete as far as its log goes (a last
segment without a run_end was interrupted: it is closed at its last step), a run a process
holds is sent without the spans still open (its segment, calls under way), which `agentor
trace` sends when they close. Sending a run again sends the same spans (same ids).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentor.engine.events import Event
from agentor.engine.history import status
from agentor.engine.statuses import live_status
from agentor.engine.store.api import LockingStore, Store
from agentor.engine.store.holding import load_lines
from agentor.telemetry.sending import Collector
from agentor.telemetry.spans import SpanRecord, spans_of


@dataclass(frozen=True)
class RunTrace:
    """A run's spans as its log has them now; `open` spans not closed yet (not in `spans`)."""

    run_id: str
    status: str  # with liveness: running / interrupted for an incomplete run
    spans: list[SpanRecord]
    open: int

    @property
    def segments(self) -> int:
        return sum(1 for s in self.spans if s.parent_line is None)


def run_trace(store: Store, run_id: str, *, content: bool = False) -> RunTrace:
    """The spans of run `run_id` of `store` (RunNotFoundError, a KeyError, when unknown)."""
    lines = load_lines(store, run_id)
    held = isinstance(store, LockingStore) and store.is_locked(run_id)
    spans, still_open = spans_of(run_id, lines, writer_gone=not held, content=content)
    events = [x for x in lines if isinstance(x, Event)]
    return RunTrace(run_id, live_status(status(events), held), spans, still_open)


def export_run(
    store: Store, run_id: str, collector: Collector, *, content: bool = False
) -> RunTrace:
    """Send the spans of run `run_id` to `collector`; `_SendError` when it does not take them."""
    trace = run_trace(store, run_id, content=content)
    collector.send(trace.spans)
    return trace
