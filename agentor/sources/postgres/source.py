"""`PostgresSource`: the runs of one schema of a PostgreSQL database (a `PostgresStore`), as a
`RunSource` (`agentor.sources.source`).

Everything it shows is the store's, one query each (agentor.engine.store.pg.listings):

- Rows: the runs table holds each run's summary as the engine folds it, kept current by every
  append in the same transaction, and whether a session holds the run now. `scan()` lists
  every run briefly (`brief_rows()`: status, agent, model, times, prompt; one
  indexed query, 100,000 runs in a quarter of the time of whole summaries), as the directory
  source sketches rows; `fill()` reads the whole summaries (the counts) and forks' markers
  a page at a time, newest first; a change reads its runs' whole summaries.
- Changes: `changes()`, the store's feed of `run_id:seq` (LISTEN, with polling from the last
  horizon as its fallback), read in the watch's own thread. A take or a release is reported
  too, so a run a worker takes shows *running* at once.
- Liveness: `held_runs()`, one scan of the server's lock table: a holder that dies frees its
  runs without writing anything (as a killed process frees a file's lock).
- One run's events: `StoredLog` (`read_lines` from the last seq read).
- Resume: the same store, telling when it has taken a run.

When the database cannot be reached, the rows stay as they were, `error` says why (one line,
never the password), and the reads asked from the screen's thread return at once instead of
waiting for the server, until the watch's connection is back; it then reads everything again
(the feed reports what changed while it was away). Thread-safe (one lock).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import AsyncGenerator, Callable, Hashable, Iterable
from typing import Any, TypeVar

from agentor.engine.events import FORK
from agentor.engine.history import RunSummary
from agentor.engine.statuses import INCOMPLETE, INTERRUPTED, RUNNING, live_status
from agentor.engine.store.pg.feed import POLL_INTERVAL, ChangeFeed
from agentor.engine.store.pg.rows import (
    RunListing,
    brief_of,
)
from agentor.engine.store.pg.store import PostgresStore
from agentor.engine.store.run_ids import RUN_ID_RE
from agentor.errors import PostgresStoreError, StoreUnavailableError
from agentor.sources.lineage import note_fork
from agentor.sources.logfile import gc_paused
from agentor.sources.postgres.cost import run_costs
from agentor.sources.postgres.feed import FeedReading
from agentor.sources.postgres.runlog import StoredLog
from agentor.sources.postgres.telling import TellingStore
from agentor.sources.rowcost import needs_pricing
from agentor.sources.runrow import RunRow, may_be_live, newest_first, note_holder
from agentor.sources.source import Changes

T = TypeVar("T")
BRIEF, FILL = 1, 2  # how rows were read (`_take`): brief summaries; the whole summaries of
# rows listed briefly
# The longest a read waits for a connection when the server is gone (the screen's thread may be
# the one waiting; afterwards reads return at once until the server is back).
READ_TIMEOUT_S = 3.0


def status_of(summary: RunSummary, held: bool) -> tuple[str, str | None]:
    """A row's status and error from the run's summary and whether a session holds it."""
    n = summary.bad_lines
    bad = f"{n} unreadable event{'s' if n != 1 else ''}" if n else None
    empty = summary.events == 0
    status = live_status(summary.status, held, empty=empty)
    if not empty:
        return status, bad
    if status == RUNNING:
        return status, None  # taken by a starting run before its first event
    return status, "no events" + (f": {bad}" if bad else "")


class PostgresSource(FeedReading):
    """The runs of schema `schema` of the database `dsn`, kept up to date.

    Raises what `PostgresStore` raises for a database it cannot use (one line, no password):
    `StoreUnavailableError` (a bad DSN, no server, refused credentials), `SchemaVersionError`
    (a newer schema), `SchemaNotFoundError` (no store in that schema: none is made), ValueError
    (a bad schema name). `close()` lets its connections go.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agentor",
        clock: Callable[[], float] = time.time,
        poll_interval: float = POLL_INTERVAL,
        read_timeout: float = READ_TIMEOUT_S,
    ) -> None:
        # A viewer makes no schema: a mistyped --schema is said, not created.
        self.store = TellingStore(dsn, schema=schema, pool_timeout=read_timeout, create=False)
        self._dsn = dsn  # only to keep its password out of what a lost connection says
        where = self.store.where
        self.where = f"{where} (schema {schema})"
        # A title names the database and the schema, without the DSN's options.
        self.label = f"{where.split('?', 1)[0]} · schema {schema}"
        self.error: str | None = None
        self.poll_interval = poll_interval
        self._clock = clock
        self._rows: dict[str, RunRow] = {}
        # Each run's last seq: as the changes reported so far cover it (an open timeline reads
        # on from there), and as the summary in its row was read.
        self._seq_told: dict[str, int] = {}
        self._seq_read: dict[str, int] = {}
        self._sketches: dict[str, None] = {}  # rows `fill` completes, in this order
        self._untold: set[str] = set()  # rows whose status a fill moved: the next refresh tells
        self._live: dict[str, int] = {}  # rows whose status depends on who holds the run ->
        self._version = 0  # ... the version of the listing they were last read in
        self._sorted: list[RunRow] | None = None
        self._lock = threading.RLock()
        self._unreachable = False  # a read failed for want of the server: wait for the watch
        self._feed: ChangeFeed | None = None
        self._feed_lock = threading.Lock()  # one thread at a time on the feed's connection
        self._closed = False

    # -- RunSource -----------------------------------------------------------------------------

    def scan(self) -> None:
        """List every run, briefly: status, agent, model, times, prompt (`fill` reads the
        counts); one query."""
        # 100,000 rows make no cycles: no collection is of use while they are made, and one
        # between reading them and making rows of them would walk them all (so the rows are
        # sorted here too, in the same pause).
        with gc_paused():
            listed = self._ask(self.store.brief_rows)
            with self._lock:
                for table in (
                    self._rows,
                    self._seq_told,
                    self._seq_read,
                    self._sketches,
                    self._live,
                    self._untold,
                ):
                    table.clear()
                self._sorted = None
                if listed is not None:
                    self._first_rows(listed)
                    self._sorted = newest_first(list(self._rows.values()))

    def rows(self) -> list[RunRow]:
        with self._lock:
            if self._sorted is None:
                with gc_paused():
                    self._sorted = newest_first(list(self._rows.values()))
            return self._sorted

    def get(self, run_id: str) -> RunRow | None:
        with self._lock:
            return self._rows.get(run_id)

    @property
    def incomplete(self) -> int:
        with self._lock:
            return len(self._sketches)

    def fill(self, max_rows: int | None = None, *, priced: bool = True) -> list[str]:
        """Read the whole summaries of up to `max_rows` rows listed briefly (one query), in the
        order they were listed (newest first), and (`priced`) their cost
        (`agentor.sources.postgres.cost`); or price up to `max_rows` rows whose runs gained events
        since they were priced."""
        with self._lock:
            sketched = list(itertools.islice(self._sketches, max_rows))
            ids = sketched or [r.run_id for r in self._rows.values() if priced and needs_pricing(r)]
        ids = ids[:max_rows]
        if sketched:
            listings = self._ask(lambda: self.store.list_summaries(run_ids=sketched))
            if listings is None:
                return []
            # Before the rows count as filled: a fork sorts by when it was made (its mark).
            self._read_lineage(sketched)
            with self._lock, gc_paused():
                self._take(listings, set(sketched), FILL)
            if not priced:
                return sketched
        costs = self._ask(lambda: run_costs(self.store, ids)) if ids else None
        with self._lock:
            for run_id, cost in (costs or {}).items():
                if (row := self._rows.get(run_id)) is not None and row.complete:
                    row.cost = cost
        return ids if costs is not None else []

    def refresh(self, run_ids: Iterable[str] | None = None) -> Changes:
        """Read these runs' rows again (None: every run, briefly, and which runs there are;
        and a database that could not be reached is asked again: a reload tries)."""
        if run_ids is None:
            self._unreachable = False
            listings = self._ask(lambda: self.store.list_summaries(brief=True))
            asked, how = None, BRIEF
        else:
            asked, how = {r for r in run_ids if RUN_ID_RE.fullmatch(r)}, 0
            if not asked:
                return Changes()
            listings = self._ask(lambda: self.store.list_summaries(run_ids=sorted(asked)))
        if listings is None:
            return Changes()
        with self._lock, gc_paused():
            changes = self._take(listings, asked, how)
            untold, self._untold = self._untold & self._rows.keys(), set()
            changes.updated |= untold - changes.added  # what fills read first, told now
        if asked is not None:
            self._read_lineage(asked)
        return changes

    def _read_lineage(self, run_ids: Iterable[str]) -> None:
        """Which of these runs are forks, of what (their `fork` events, `sources.lineage`)."""
        marks = self._ask(lambda: self.store.events_of_type(run_ids, FORK)) or {}
        with self._lock:
            for run_id, events in marks.items():
                if (row := self._rows.get(run_id)) is not None:
                    before = row.sort_key
                    note_fork(row, events)
                    if row.sort_key != before:  # a fork sorts by when it was made
                        self._sorted = None

    def refresh_liveness(self, budget: int | None = None) -> list[str]:
        """Ask the server which runs are held now (one query, whatever `budget` is); the ids
        of the rows whose status moved."""
        with self._lock:
            if not self._live:
                return []
            asked_at = self._version
        held = self._ask(self.store.held_runs)
        if held is None:
            return []
        now = self._clock()
        moved: list[str] = []
        with self._lock:
            for run_id, version in self._live.items():
                if version > asked_at:
                    continue  # listed since the question was asked: that answer is newer
                row = self._rows[run_id]
                assert row.summary is not None
                before = row.status
                row.status, row.error = status_of(row.summary, run_id in held)
                note_holder(row, before, now)
                if row.status != before:
                    moved.append(run_id)
        return moved

    def open(self, run_id: str) -> StoredLog:
        with self._lock:
            if run_id not in self._rows:
                raise KeyError(run_id)
        if self._unreachable:
            raise OSError(self.error or f"cannot reach {self.where}")
        return StoredLog(self.store, run_id)

    def identity(self) -> Hashable:
        # A database does not vanish as a directory does: when it cannot be reached, `error`
        # says so, and the watch goes on trying.
        return ("postgresql", self.where)

    async def watch(self) -> AsyncGenerator[Changes, None]:
        feed = await asyncio.to_thread(self._open_feed)
        try:
            yield await asyncio.to_thread(self.refresh)  # what changed since the scan
            while not self._closed:
                changes = await asyncio.to_thread(self._next_changes, feed)
                if changes:
                    yield changes
        finally:
            # Closed by a thread of its own: the watch's thread may still be waiting on it.
            threading.Thread(target=self._close_feed, args=(feed,), daemon=True).start()

    def resume_store(self, held: Callable[[str], None]) -> PostgresStore:
        """The source's own store (`agentor.sources.postgres.telling`), calling `held` too from
        now on."""
        self.store.held_hooks.append(held)
        return self.store

    def close(self) -> None:
        """Let go of the connections (the watch's, the store's)."""
        self._closed = True
        feed = self._feed
        if feed is not None:
            self._close_feed(feed)
        self.store.close()

    # -- reading -------------------------------------------------------------------------------

    def _ask(self, work: Callable[[], T]) -> T | None:
        """`work()`, a read of the store; None when it failed (`error` says why). While the
        server cannot be reached, None at once: the watch's thread finds out when it is back."""
        if self._unreachable:
            return None
        try:
            result = work()
        except StoreUnavailableError as exc:
            self._unreachable, self.error = True, str(exc)
            return None
        except PostgresStoreError as exc:
            self.error = str(exc)
            return None
        if not self._unreachable:
            self.error = None
        return result

    def _first_rows(self, listed: list[tuple[Any, ...]]) -> None:
        """The rows of the first listing, a brief one (`PostgresStore.brief_rows`): what
        `_take` would make of it, in one tight loop (it makes every row of a 100,000-run
        list)."""
        now, version = self._clock(), self._version
        rows, seqs, live = self._rows, self._seq_told, self._live
        for values in listed:
            s, held, last_seq = brief_of(values)
            run_id = s.run_id
            status, error = status_of(s, held)
            row = rows[run_id] = RunRow(run_id, s, status, error, False, s.last_event_at or 0.0)
            if status == INTERRUPTED:
                row.seen_free_at = now  # as `note_holder` keeps it
            if s.events == 0 or s.status == INCOMPLETE:  # `runrow.may_be_live`
                live[run_id] = version
            seqs[run_id] = last_seq
        self._seq_read.update(seqs)
        self._sketches.update(dict.fromkeys(seqs))

    def _take(self, listings: list[RunListing], asked: set[str] | None, how: int) -> Changes:
        """Take in rows read from the runs table (`asked`: the runs asked for, None: all;
        `how`: BRIEF, FILL, what was read and why)."""
        changes = Changes()
        now = self._clock()
        self._version += 1
        rows, seen = self._rows, set()
        for listing in listings:
            run_id = listing.run_id
            seen.add(run_id)
            row = rows.get(run_id)
            if row is None:
                if how & FILL:
                    continue  # gone meanwhile: the watch tells
                rows[run_id] = row = RunRow(run_id)
                self._sorted = None
                self._seq_told[run_id] = listing.last_seq
                changes.added.add(run_id)
            self._update(row, listing, now, how, changes)
        if not how & FILL:
            for run_id in (rows.keys() if asked is None else asked & rows.keys()) - seen:
                for table in (rows, self._seq_told, self._seq_read, self._sketches, self._live):
                    table.pop(run_id, None)
                self._sorted = None
                changes.removed.add(run_id)
        for run_id in changes.added | changes.updated | changes.appended.keys():
            if run_id in self._sketches or needs_pricing(rows[run_id]):
                changes.incomplete.add(run_id)  # `fill` has work again
        return changes

    def _update(
        self, row: RunRow, listing: RunListing, now: float, how: int, changes: Changes
    ) -> None:
        run_id, seq = row.run_id, listing.last_seq
        read = self._seq_read.get(run_id)
        if read is not None and seq < read:
            return  # read before what the row shows (by another thread): older news
        before = (row.status, row.error, row.sort_key)
        summary = row.summary
        if not (how & BRIEF and row.complete and seq == read) or summary is None:
            # A brief listing of a run that gained nothing keeps its whole summary.
            summary = row.summary = listing.summary
            row.complete = not how & BRIEF
            if seq != read:
                row.cost = None  # priced by `fill`
            self._seq_read[run_id] = seq
            if row.complete:
                self._sketches.pop(run_id, None)
            else:
                self._sketches[run_id] = None
        row.status, row.error = status_of(summary, listing.held)
        row.modified_at = summary.last_event_at or 0.0
        note_holder(row, before[0], now)
        if may_be_live(row):
            self._live[run_id] = self._version
        else:
            self._live.pop(run_id, None)
        if row.sort_key != before[2]:
            self._sorted = None
        if how & FILL:
            # Rows filled (the app redraws them); a status the run moved meanwhile is left
            # for the next refresh to tell, as it would have had it read the row first.
            if (row.status, row.error, row.sort_key) != before:
                self._untold.add(run_id)
            return
        told = self._seq_told.get(run_id, seq)
        self._seq_told[run_id] = seq
        if seq > told:
            changes.appended[run_id] = seq - told
        if (row.status, row.error, row.sort_key) != before or seq < told:
            changes.updated.add(run_id)
