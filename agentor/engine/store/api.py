"""The store interface: the protocols a store implements and the errors it raises.

A store is any object with `append`, `load` and `list_runs` (`Store`). The engine also uses,
when a store offers them, `append_many` (`BatchStore`: one durable write for several events)
and `lock` (`LockingStore`: one holder of a run at a time). Retention (agentor.ops.retention)
uses `delete` (`DeletingStore`) and pins (`PinningStore`) where a store has them; experiments
(agentor.experiments) keep their records in an `ExperimentStore`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol, runtime_checkable

from agentor.engine.events import Event


@runtime_checkable
class Store(Protocol):
    def append(self, run_id: str, event: Event) -> None:
        """Save one event. Called once per step, off the event loop."""

    def load(self, run_id: str) -> list[Event]:
        """Return every event for a run, in order. Unknown run id: `KeyError` (best:
        `RunNotFoundError`, which names the store too)."""
        ...

    def list_runs(self) -> list[str]:
        """Return every known run id."""
        ...


def saves_in_memory(store: object) -> bool:
    """Whether the store's appends return at once, with no I/O to wait for: its class says so
    with `saves_in_memory = True` (MemoryStore). The loop then saves inline instead of in a
    thread: a thread's round trip costs more than such a save (bench/README.md)."""
    return getattr(type(store), "saves_in_memory", False) is True


@runtime_checkable
class BatchStore(Protocol):
    """A store that can save several events with one durable write (the engine saves a
    generation and its tool calls together, when the store offers this)."""

    def append_many(self, run_id: str, events: Iterable[Event]) -> None: ...


@runtime_checkable
class LockingStore(Protocol):
    """A store that gives one process (or task) at a time a run: the engine holds `lock` while
    it runs or resumes the run; a second taker gets `RunLockedError` naming the holder. The
    lock dies with its holder (a killed process frees the run)."""

    def lock(self, run_id: str) -> contextlib.AbstractContextManager[None]: ...

    def is_locked(self, run_id: str) -> bool:
        """Whether someone holds the run right now."""
        ...

    def lock_holder(self, run_id: str) -> int | None:
        """The pid holding the run, when it can be told."""
        ...


@runtime_checkable
class DeletingStore(Protocol):
    """A store that can remove a whole run. A run a live process holds is refused
    (`RunLockedError`), and the store holds the run itself while it removes it, so nobody takes
    it meanwhile. An unknown run is a `RunNotFoundError`.

    `check`, when given, is called with the run's events read under that hold, before anything
    is removed: an exception from it keeps the run and is raised (a decision made earlier is
    checked against what the log says now). Returns the bytes freed, where the store knows."""

    def delete(
        self, run_id: str, check: Callable[[list[Event]], None] | None = None
    ) -> int | None: ...


@runtime_checkable
class PinningStore(Protocol):
    """A store that keeps pins, outside the run logs: a pinned run is never pruned."""

    def pin(self, run_id: str) -> bool:
        """Pin an existing run (`RunNotFoundError` if unknown); False if it was pinned already."""
        ...

    def unpin(self, run_id: str) -> bool:
        """False if the run was not pinned."""
        ...

    def pinned(self) -> set[str]:
        """Every pinned run id."""
        ...


@runtime_checkable
class ExperimentStore(Protocol):
    """A store that keeps experiments (agentor.experiments) beside its runs: each one an
    append-only list of records (JSON objects), its definition first, then one per pair as it
    is measured. An experiment's candidates are ordinary runs of the store; these records say
    which runs they are and what was measured."""

    def append_experiment(self, experiment_id: str, record: Mapping[str, object]) -> None:
        """Save one record (JSON values only) durably: returns once it is on disk, or
        committed."""

    def load_experiment(self, experiment_id: str) -> list[dict[str, object]]:
        """Every record of the experiment, in order. Unknown id: `ExperimentNotFoundError`."""
        ...

    def list_experiments(self) -> list[str]:
        """Every experiment id, sorted."""
        ...
