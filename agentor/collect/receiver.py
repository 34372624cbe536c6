"""What a receiver does with the spans of one request: keep them, then bring the runs of
their traces up to date in the store, before the request is answered.

Durability: the spans are in the spool (fsynced) and every run they touch is written (each
append fsynced in a directory) before `accept` returns, and the HTTP or gRPC side answers only
then; a receiver killed before that answered nothing, and the sender's retry is taken as if it
came first (spans already kept are not kept twice; runs are written idempotently).

Liveness: the run of an agent whose span has not arrived yet is held (its store's lock), so
every view lists it `running`; it is let go when its agent span arrives, when the receiver
stops, or when no span of it has come for `idle` seconds: it is `interrupted` then, as a run
whose process died is.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import dataclass, field

from agentor.collect.conventions import kind_of
from agentor.collect.mapping import CollectedRun, runs_from_spans
from agentor.collect.spans import LogRecord, Span
from agentor.collect.spool import DirectorySpool
from agentor.collect.writing import write_run
from agentor.engine.store.api import LockingStore, Store
from agentor.errors import RunLockedError

DEFAULT_IDLE = 600.0


@dataclass
class CollectStats:
    requests: int = 0
    spans: int = 0
    dropped: int = 0
    runs: set[str] = field(default_factory=set)


class Collector:
    """Spans in, runs out, one request at a time (`accept` is called from any thread)."""

    def __init__(self, store: Store, spool: DirectorySpool, idle: float = DEFAULT_IDLE) -> None:
        self.store = store
        self.spool = spool
        self.idle = idle
        self.stats = CollectStats()
        self._mutex = threading.Lock()
        self._held: dict[str, contextlib.ExitStack] = {}
        self._last_seen: dict[str, float] = {}

    def accept(self, spans: list[Span], logs: list[LogRecord]) -> None:
        with self._mutex:
            self.stats.requests += 1
            self.stats.spans += len(spans)
            self.stats.dropped += sum(1 for s in spans if kind_of(s) is None)
            for trace_id in sorted(self.spool.add(spans, logs)):
                trace_spans, trace_logs = self.spool.trace(trace_id)
                runs, _ = runs_from_spans(trace_spans, trace_logs)
                for run in runs:
                    self._write(run)

    def _write(self, run: CollectedRun) -> None:
        write_run(self.store, run, before_rewrite=lambda: self._let_go(run.run_id))
        self.stats.runs.add(run.run_id)
        self._last_seen[run.run_id] = time.monotonic()
        if run.finished:
            self._let_go(run.run_id)
        elif run.run_id not in self._held and isinstance(self.store, LockingStore):
            hold = contextlib.ExitStack()
            try:
                hold.enter_context(self.store.lock(run.run_id))
            except RunLockedError:
                return  # another receiver holds it: it is listed running all the same
            self._held[run.run_id] = hold

    def _let_go(self, run_id: str) -> None:
        hold = self._held.pop(run_id, None)
        if hold is not None:
            hold.close()

    def let_go_idle(self) -> list[str]:
        """Let go the unfinished runs no span came for in `idle` seconds; return their ids."""
        now = time.monotonic()
        with self._mutex:
            quiet = [r for r in self._held if now - self._last_seen.get(r, now) >= self.idle]
            for run_id in quiet:
                self._let_go(run_id)
        return quiet

    def close(self) -> None:
        with self._mutex:
            for run_id in list(self._held):
                self._let_go(run_id)
