"""Where the runs on screen come from: the `RunSource` protocol, the one seam between the
screens and a store.

The app, its widgets and its controllers know runs only through `RunSource` (the run list, its
changes, liveness, the store a resume writes to) and `RunEvents` (one run's events, for the
timeline). There are two: a FileStore directory
(`agentor.sources.directory.source.DirectorySource`) and a schema of a PostgreSQL database
(`agentor.sources.postgres.source.PostgresSource`); they feed the same screens. What only makes
one source fast (reading a file's head and tail, tailing offsets; the runs table, the change
feed) stays inside it; both index a run's lines alike (`agentor.sources.linelog.LineLog`).

Rows (`agentor.sources.runrow.RunRow`): run_id, summary (agentor.engine.history.RunSummary | None),
status, error, complete, modified_at. `status` is one of `agentor.engine.statuses` (or another
`run_end` status a log names): *running* = incomplete and held by a live process, *interrupted*
= incomplete and nobody holds it, *unreadable* rows carry `error` ("permission denied", "empty
file", "no events: ..."); a readable run with bad lines keeps its status and carries `error`
too ("2 bad lines; first at byte 812: torn line (no newline at the end)"). `summary` is None
only for a run that could not be read at all. A row that is not `complete` was sketched quickly:
its status, agent, model, start, prompt and times are right, its counts (turns, tool calls,
usage, events, bad lines) are not yet; `fill()` completes it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentor.engine.events import Event
from agentor.engine.log.format import BadLine
from agentor.engine.store.api import Store
from agentor.sources.runrow import RunRow
from agentor.sources.runtable import RunTable


@dataclass
class Changes:
    """What a refresh found: runs `added`, `updated` (their place, status or error moved, or
    they were read again from the start), `removed`, and `appended` (run id -> lines read from
    the end, their rows changed in place); `incomplete`: changed runs whose rows are sketches
    now, so `fill()` has work again. False when nothing changed."""

    added: set[str] = field(default_factory=set)
    updated: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    appended: dict[str, int] = field(default_factory=dict)
    incomplete: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.appended or self.incomplete)


@dataclass
class Scan:
    """What one scan of a run's lines found, from a position on (`RunEvents.search`, `marks`)."""

    end: int  # just past the last whole line scanned: where the next scan starts
    lines: int  # how many whole lines were scanned
    found: list[int] = field(default_factory=list)  # a search's matching lines
    errors: list[int] = field(default_factory=list)  # marks: lines an `e` jump goes to
    calls: list[int] = field(default_factory=list)  # marks: `tool_call` lines (`t`)


@runtime_checkable
class RunEvents(Protocol):
    """The events of one run, for the timeline: indexed as they arrive, decoded on demand.
    Used from the UI thread only, but `search` and `marks`, which may run in a worker thread
    while the timeline reads."""

    segment_starts: list[int]  # line indexes of the run_start events
    reset_happened: bool  # the last poll() read the run again from the start

    def __len__(self) -> int:
        """Lines indexed (events, and lines that are not events)."""
        ...

    def poll(self) -> int:
        """Index what the run gained; how many new lines. OSError when it cannot be read."""
        ...

    def item(self, i: int) -> Event | BadLine:
        """Line i decoded; a generation without its request (see `request`)."""
        ...

    def request(self, i: int) -> list[dict[str, Any]] | None:
        """Generation i's request messages as the engine's loader rebuilds them, else None."""
        ...

    def raw(self, i: int) -> bytes:
        """Line i as it was written."""
        ...

    @property
    def start_time(self) -> float | None:
        """The run's first start (timeline offsets count from it)."""
        ...

    @property
    def indexed_to(self) -> int:
        """Where the lines indexed end: a scan of what the run gained starts here."""
        ...

    def search(
        self, query: str, start: int, end: int, first_line: int, cancelled: Callable[[], bool]
    ) -> Scan | None:
        """The lines from `start` to `end` (numbered from `first_line`) holding `query`, as
        written, case-insensitively; None when `cancelled()` turned true on the way."""
        ...

    def marks(
        self, start: int, end: int, first_line: int, cancelled: Callable[[], bool]
    ) -> Scan | None:
        """The error lines and the tool call lines from `start` to `end`."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class RunSource(Protocol):
    """The runs of one store, as the screens show them. Thread-safe: `fill` may run in a
    worker thread while the UI thread reads rows."""

    where: str  # where the store is, whole (a directory's path; a DSN without its password
    # and the schema), for messages
    label: str  # how a title names it (a directory: its path; the TUI shortens it)
    error: str | None  # why nothing can be listed (gone, unreadable), else None

    def scan(self) -> None:
        """List every run from scratch (quickly: rows may be sketches, see `fill`)."""
        ...

    def rows(self) -> list[RunRow]:
        """Newest first; the list is cached and shared: do not change it."""
        ...

    def get(self, run_id: str) -> RunRow | None: ...

    @property
    def incomplete(self) -> int:
        """How many rows are sketches still."""
        ...

    @property
    def store(self) -> Store | None:
        """The store the runs are read from (None: a directory that is not there now)."""
        ...

    def fill(self, max_rows: int | None = None, *, priced: bool = True) -> list[str]:
        """Complete up to `max_rows` sketched rows, newest first; the run ids completed.
        `priced`: also give rows their cost (`RunRow.cost`), pricing complete rows that have
        none yet; False: complete the sketches only (a listing that shows no cost). What a
        run did since it was last refreshed, read by a fill first (a status moved, lines
        appended), the next `refresh` tells as its own: a fill swallows no change."""
        ...

    def refresh(self, run_ids: Iterable[str] | None = None) -> Changes:
        """Read what changed in these runs (None: in every run, and which runs there are).
        On a source not scanned yet, `run_ids` are the only runs it lists: one run's row,
        without listing the store (`agentor show`)."""
        ...

    def refresh_liveness(self, budget: int | None = None) -> list[str]:
        """Ask again who holds the incomplete runs (a killed process changes nothing else);
        the ids whose status moved. With `budget`: every running run, and at most `budget`
        others, taking turns."""
        ...

    def open(self, run_id: str) -> RunEvents:
        """One run's events. KeyError for an unknown run, OSError when it cannot be read."""
        ...

    def identity(self) -> Hashable | None:
        """Which store is there now (None: it is gone): another value means it was replaced,
        and what was watched is not what is there."""
        ...

    def watch(self) -> AsyncGenerator[Changes, None]:
        """What changes, as it changes. The first item comes once the watch is set up and
        holds what changed since the last scan: from then on no change is missed. Ends when
        the store is gone; OSError or RuntimeError when watching fails. A generator, so the
        watcher can close it (`contextlib.aclosing`)."""
        ...

    def resume_store(self, held: Callable[[str], None]) -> Store:
        """The store a resume in this process writes to; it calls `held(run_id)` (from any
        thread) once it holds a run: a resume records nothing before its first step, so
        nothing else can tell the list that the run is running until then."""
        ...

    def close(self) -> None:
        """Let go of what the source holds open (a database source: its connections). The
        app calls it as it ends."""
        ...


# What a source may offer besides `RunSource`, asked by `isinstance` (never its class).


@runtime_checkable
class LocalSource(RunSource, Protocol):
    """A source whose runs are in a local directory: its `label` is that directory's path (a
    title shortens it)."""

    directory: Path


@runtime_checkable
class IndexedSource(RunSource, Protocol):
    """A source that keeps the rows it read between starts (a directory's run index), so that
    the next listing reads no log that has not changed; whoever reads rows saves them."""

    index_stale: bool  # rows were read or changed since the index was read or saved
    whole_at_scan: bool  # scan() reads whole what the index lacks (a reader that fills all)
    read_at_scan: int  # files the last scan read (not taken from the index)

    def save_index(self) -> Path:
        """Write the rows read so far (from a worker thread); OSError if it cannot be written
        anywhere, ValueError for a row field of no JSON form."""
        ...


@runtime_checkable
class TabledSource(IndexedSource, Protocol):
    """An indexed source that gives a listing its rows as a table (`runtable.RunTable`) without
    building those its index holds fresh and a listing needs no more of (`leave_aside`: set
    before `scan()`; then `rows()` holds only the others, `table()` every one)."""

    leave_aside: bool

    def table(self) -> RunTable:
        """Every row, newest first, as the run list orders them."""
        ...
