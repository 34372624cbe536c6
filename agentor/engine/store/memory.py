"""`MemoryStore`: runs kept in a dictionary for the life of the process.

Useful in tests, and for a run id and event history without a filesystem; it cannot survive
the crash it would be recovering from. What `load` returns is what a log would give back: each
event is kept as it would be read from a line (known fields checked, unknown ones kept), so a
run behaves the same on every store.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping

from agentor.engine.events import Event
from agentor.engine.store.run_ids import validate_run_id
from agentor.errors import ExperimentNotFoundError, RunLockedError, RunNotFoundError


class MemoryStore:
    """Runs kept in a dictionary for the life of the process. Locks are in-process."""

    saves_in_memory = True  # appends return at once: the loop calls them inline (store_api)

    def __init__(self) -> None:
        self._runs: dict[str, list[Event]] = {}
        self._locked: set[str] = set()
        self._pins: set[str] = set()
        self._experiments: dict[str, list[str]] = {}  # id -> records, as JSON text
        self._mutex = threading.Lock()

    def __repr__(self) -> str:
        return "MemoryStore()"

    def append(self, run_id: str, event: Event) -> None:
        self.append_many(run_id, (event,))

    def append_many(self, run_id: str, events: Iterable[Event]) -> None:
        validate_run_id(run_id)
        # Transient events are shown live, never stored; the rest as a log would give them.
        durable = [_as_read(e) for e in events if not e.transient]
        with self._mutex:
            self._runs.setdefault(run_id, []).extend(durable)

    def load(self, run_id: str) -> list[Event]:
        validate_run_id(run_id)
        with self._mutex:
            if run_id not in self._runs:
                raise RunNotFoundError(run_id, self)
            return list(self._runs[run_id])

    def has_run(self, run_id: str) -> bool:
        validate_run_id(run_id)
        with self._mutex:
            return run_id in self._runs

    def list_runs(self) -> list[str]:
        with self._mutex:
            return sorted(self._runs)  # in the order every store lists them

    def append_experiment(self, experiment_id: str, record: Mapping[str, object]) -> None:
        validate_run_id(experiment_id)
        text = json.dumps(record)  # kept as a file would keep it: a copy, JSON values only
        with self._mutex:
            self._experiments.setdefault(experiment_id, []).append(text)

    def load_experiment(self, experiment_id: str) -> list[dict[str, object]]:
        validate_run_id(experiment_id)
        with self._mutex:
            if experiment_id not in self._experiments:
                raise ExperimentNotFoundError(experiment_id, self)
            return [json.loads(text) for text in self._experiments[experiment_id]]

    def list_experiments(self) -> list[str]:
        with self._mutex:
            return sorted(self._experiments)

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        validate_run_id(run_id)
        with self._mutex:
            if run_id in self._locked:
                raise RunLockedError(run_id, os.getpid())
            self._locked.add(run_id)
        try:
            yield
        finally:
            with self._mutex:
                self._locked.discard(run_id)

    def is_locked(self, run_id: str) -> bool:
        validate_run_id(run_id)
        with self._mutex:
            return run_id in self._locked

    def lock_holder(self, run_id: str) -> int | None:
        """This process, while one of its tasks holds the run (a MemoryStore is per process)."""
        return os.getpid() if self.is_locked(run_id) else None

    def delete(self, run_id: str, check: Callable[[list[Event]], None] | None = None) -> int | None:
        with self.lock(run_id):  # refuses a held run; `check` runs holding it
            with self._mutex:
                if run_id not in self._runs:
                    raise RunNotFoundError(run_id, self)
                events = list(self._runs[run_id])
            if check is not None:
                check(events)
            with self._mutex:
                del self._runs[run_id]
                self._pins.discard(run_id)
        return None

    def pin(self, run_id: str) -> bool:
        validate_run_id(run_id)
        with self._mutex:
            if run_id not in self._runs:
                raise RunNotFoundError(run_id, self)
            new = run_id not in self._pins
            self._pins.add(run_id)
            return new

    def unpin(self, run_id: str) -> bool:
        validate_run_id(run_id)
        with self._mutex:
            was = run_id in self._pins
            self._pins.discard(run_id)
            return was

    def pinned(self) -> set[str]:
        with self._mutex:
            return set(self._pins)


def _as_read(event: Event) -> Event:
    """The event as it would be read back from its line: a new event (changing the caller's
    afterwards changes nothing here), its fields checked as `Event.from_dict` checks a log's.
    Values are shared, not copied: a log may nest them deeper than a deep copy can follow.
    A generation's whole request is checked again here (`is_list_of_dicts`, a C loop: ~20 us
    at 1,000 messages), the one step of a MemoryStore's save that grows with the history."""
    return Event.from_dict(event.to_dict())
