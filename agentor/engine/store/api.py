"""The store interface: the protocols a store implements and the errors it raises.

A store is any object with `append`, `load` and `list_runs` (`Store`). Everything else a store
may offer is a capability, one protocol each, every one a `Store` too; whoever uses one asks
`isinstance(store, Capability)` (they are runtime-checkable), never the store's class:

- `BatchStore` (`append_many`): one durable write for several events; the engine uses it.
- `LockingStore` (`lock`, `is_locked`, `lock_holder`): one holder of a run at a time; the
  engine holds it while it runs or resumes a run.
- `DeletingStore` (`delete`) and `PinningStore` (`pin`, `unpin`, `pinned`): retention
  (`agentor.ops.retention`) and pins.
- `ExperimentStore` (`append_experiment`, `load_experiment`, `list_experiments`): the records of
  experiments (`agentor.experiments`), beside the runs.
- `SearchingStore` (`search`): a store that searches its own events (`agentor.ops.search`).
- `LineKeepingStore` (`load_with_errors`): the lines of a run that are not events, with it.
- `LookupStore` (`has_run`): whether a run is there without listing every run.
- `TypeQueryStore` (`events_of_type`): the events of one type of many runs at once.
- `ClaimingStore` (`claimable`, `changes`): the runs a worker may take, and a feed of the runs
  that change (`agentor.fleet`).
- `DirectoryStore` (`directory`, `path`): runs kept as log files in a local directory, which
  a reader may read, watch and measure as files.
- `ServerStore` (`where`, `schema`): runs kept on a server, named without a password.
- `ClosingStore` (`close`): a store holding connections, to let go of when done.

Which backend a store spec (a path, a DSN) names is the registry's question (`agentor.backends`),
asked nowhere else.

Which stores offer which: tests/test_store_suite.py runs each capability's tests against every
store that declares it, and tests/store_protocols_typed.py has the type checker hold each
store to the protocols it declares.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeGuard, runtime_checkable

from agentor.engine.events import Event
from agentor.engine.statuses import INCOMPLETE

if TYPE_CHECKING:
    from agentor.engine.log.format import BadLine
    from agentor.engine.store.matching import Hit


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


def is_store(value: object) -> TypeGuard[Store]:
    """Whether `value` has each method of a `Store`, callable (a runtime-checkable protocol
    only sees that the attributes exist): what `Agentor(store=...)` takes."""
    return all(callable(getattr(value, m, None)) for m in ("append", "load", "list_runs"))


def missing_lock_methods(value: object) -> list[str]:
    """What `value` lacks of a `LockingStore`, if it has `lock`: a store with a lock that others
    cannot ask about (`is_locked`, `lock_holder`) is refused rather than run unlocked."""
    if not callable(getattr(value, "lock", None)):
        return []
    return [m for m in ("is_locked", "lock_holder") if not callable(getattr(value, m, None))]


def saves_in_memory(store: object) -> bool:
    """Whether the store's appends return at once, with no I/O to wait for: its class says so
    with `saves_in_memory = True` (MemoryStore). The loop then saves inline instead of in a
    thread: a thread's round trip costs more than such a save (bench/README.md)."""
    return getattr(type(store), "saves_in_memory", False) is True


@runtime_checkable
class BatchStore(Store, Protocol):
    """A store that can save several events with one durable write (the engine saves a
    generation and its tool calls together, when the store offers this)."""

    def append_many(self, run_id: str, events: Iterable[Event]) -> None: ...


@runtime_checkable
class LockingStore(Store, Protocol):
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
class DeletingStore(Store, Protocol):
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
class PinningStore(Store, Protocol):
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
class ExperimentStore(Store, Protocol):
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


@runtime_checkable
class SearchingStore(Store, Protocol):
    """A store that searches its own events (a database does it where the data is), giving
    the hits a search of the same runs' logs would (`agentor.engine.store.matching`)."""

    def search(self, query: str, *, regex: bool, ignore_case: bool) -> Iterator[Hit]: ...


@runtime_checkable
class LineKeepingStore(Store, Protocol):
    """A store that keeps the lines of a run it cannot read as events (a line torn by a crash,
    a corrupt one) and gives them back beside the events."""

    def load_with_errors(self, run_id: str) -> tuple[list[Event], list[BadLine]]:
        """The run's events, and its unreadable lines, each numbered by its place among the
        run's lines (1: the first). An unknown run is a `RunNotFoundError`."""
        ...


@runtime_checkable
class LookupStore(Store, Protocol):
    """A store that tells whether it holds a run without listing every run."""

    def has_run(self, run_id: str) -> bool: ...


@runtime_checkable
class TypeQueryStore(Store, Protocol):
    """A store that finds the events of one type of many runs at once (a database: in one
    query), so a reader need not load each run to find them."""

    def events_of_type(self, run_ids: Iterable[str], kind: str) -> dict[str, list[Event]]:
        """The events of type `kind` of each of `run_ids` that has any, in log order."""
        ...


class RunFeed(Protocol):
    """The runs that change in a store, as they change (`ClaimingStore.changes`)."""

    def wait(self, timeout: float) -> dict[str, int]:
        """The runs that changed since the last call, waiting up to `timeout` seconds for one:
        run id -> the last seq seen ({} when none changed)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class ClaimingStore(LockingStore, Protocol):
    """A store that says which runs a worker may take, and tells when runs change: a fleet of
    workers asks it instead of reading every run. Taking one is `lock`."""

    def claimable(
        self,
        *,
        statuses: Sequence[str] = (INCOMPLETE,),
        agents: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[str]:
        """Runs of `statuses` (and of `agents`, by name, if given) with no approval pending and
        nobody holding them, least recently touched first."""
        ...

    def changes(self) -> RunFeed:
        """A feed of the runs that change (`close` it)."""
        ...


@runtime_checkable
class DirectoryStore(Store, Protocol):
    """A store that keeps each run as a log file in a local directory (`<run id>.jsonl`, in the
    log format, as FileStore writes it): a reader may read the files directly (a search of
    their bytes), watch the directory, measure a log, and keep files of its own beside them."""

    directory: Path

    def path(self, run_id: str) -> Path:
        """Where the run's log is (whether or not it exists)."""
        ...


@runtime_checkable
class ServerStore(Store, Protocol):
    """A store on a server that many machines share: `where` names the server as it may be
    shown (never with a password), `schema` the part of it that holds these runs."""

    where: str
    schema: str


@runtime_checkable
class ClosingStore(Store, Protocol):
    """A store that holds connections (or other resources) until it is closed."""

    def close(self) -> None:
        """Let go of them (and so of every run the store holds)."""
        ...
