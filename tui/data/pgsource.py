"""`PostgresSource`: the runs of one schema of a PostgreSQL database (a `PostgresStore`), as a
`RunSource` (`tui.data.source`). Never imports textual.

Everything it shows is the store's, one query each (agentor/engine/pg/listings.py):

- Rows: `list_summaries()` at scan, then `list_summaries(run_ids=...)` for the runs a change
  names. The runs table holds each run's summary as the engine folds it, kept current by every
  append in the same transaction, and whether a session holds the run now: rows are complete
  at once (`fill()` has nothing to do) and 100,000 runs are one indexed query.
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
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Hashable, Iterable, Iterator
from typing import TypeVar

from agentor.engine.pg.errors import PostgresStoreError, StoreUnavailableError
from agentor.engine.pg.feed import POLL_INTERVAL, ChangeFeed
from agentor.engine.pg.rows import RunListing
from agentor.engine.pg.store import PostgresStore
from agentor.engine.replay import RunSummary
from agentor.engine.statuses import INCOMPLETE, RUNNING, UNREADABLE, live_status
from agentor.engine.store import RUN_ID_RE

from .pglog import StoredLog
from .runrow import RunRow, note_holder
from .source import Changes

T = TypeVar("T")
WAIT_S = 0.25  # the longest the watch's thread waits on the feed before it looks around again


class _TellingStore(PostgresStore):
    """The schema's store, saying when a resume here has taken a run (`resume_store`)."""

    held_hook: Callable[[str], None] | None = None

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        with super().lock(run_id):
            hook = self.held_hook
            if hook is not None:
                hook(run_id)  # from the thread taking the run
            yield


def status_of(summary: RunSummary, held: bool) -> tuple[str, str | None]:
    """A row's status and error from the run's summary and whether a session holds it."""
    n = summary.bad_lines
    bad = f"{n} unreadable event{'s' if n != 1 else ''}" if n else None
    if summary.events == 0:
        if held:
            return RUNNING, None  # taken by a starting run before its first event
        return UNREADABLE, "no events" + (f": {bad}" if bad else "")
    return live_status(summary.status, held), bad


def may_be_held(summary: RunSummary) -> bool:
    """Whether the row's status depends on who holds the run (see `runrow.may_be_live`)."""
    return summary.events == 0 or summary.status == INCOMPLETE


class PostgresSource:
    """The runs of schema `schema` of the database `dsn`, kept up to date.

    Raises what `PostgresStore` raises for a database it cannot use (one line, no password):
    `StoreUnavailableError` (a bad DSN, no server, refused credentials), `SchemaVersionError`
    (a newer schema), ValueError (a bad schema name). `close()` lets its connections go.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agentor",
        clock: Callable[[], float] = time.time,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        self.store = _TellingStore(dsn, schema=schema)
        where = self.store.where
        self.where = f"{where} (schema {schema})"
        # A title names the database and the schema, without the DSN's options.
        self.label = f"{where.split('?', 1)[0]} · schema {schema}"
        self.error: str | None = None
        self.poll_interval = poll_interval
        self._clock = clock
        self._rows: dict[str, RunRow] = {}
        self._seqs: dict[str, int] = {}  # each run's last seq, as last listed
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
        listings = self._ask(self.store.list_summaries)
        with self._lock:
            self._rows.clear()
            self._seqs.clear()
            self._live.clear()
            self._sorted = None
            if listings is not None:
                self._take(listings, None, scanning=True)

    def rows(self) -> list[RunRow]:
        with self._lock:
            if self._sorted is None:
                self._sorted = sorted(
                    self._rows.values(), key=lambda r: (r.sort_key, r.run_id), reverse=True
                )
            return self._sorted

    def get(self, run_id: str) -> RunRow | None:
        with self._lock:
            return self._rows.get(run_id)

    @property
    def incomplete(self) -> int:
        return 0  # the runs table holds whole summaries

    def fill(self, max_rows: int | None = None) -> list[str]:
        return []

    def refresh(self, run_ids: Iterable[str] | None = None) -> Changes:
        """Read these runs' rows again (None: every run, and which runs there are)."""
        if run_ids is None:
            listings = self._ask(self.store.list_summaries)
            asked = None
        else:
            asked = {r for r in run_ids if RUN_ID_RE.fullmatch(r)}
            if not asked:
                return Changes()
            listings = self._ask(lambda: self.store.list_summaries(run_ids=sorted(asked)))
        if listings is None:
            return Changes()
        with self._lock:
            return self._take(listings, asked)

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

    async def watch(self) -> AsyncIterator[Changes]:
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
        self.store.held_hook = held
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

    def _take(
        self, listings: list[RunListing], asked: set[str] | None, scanning: bool = False
    ) -> Changes:
        """Take in rows read from the runs table (`asked`: the runs asked for, None: all)."""
        changes = Changes()
        now = self._clock()
        self._version += 1
        rows, seen = self._rows, set()
        for listing in listings:
            run_id = listing.run_id
            seen.add(run_id)
            row = rows.get(run_id)
            if row is None:
                rows[run_id] = row = RunRow(run_id, complete=True)
                self._sorted = None
                if not scanning:
                    changes.added.add(run_id)
            self._update(row, listing, now, changes)
        for run_id in (rows.keys() if asked is None else asked & rows.keys()) - seen:
            del rows[run_id]
            self._seqs.pop(run_id, None)
            self._live.pop(run_id, None)
            self._sorted = None
            changes.removed.add(run_id)
        return changes

    def _update(self, row: RunRow, listing: RunListing, now: float, changes: Changes) -> None:
        run_id, summary = row.run_id, listing.summary
        before = (row.status, row.error, row.sort_key)
        old_seq = self._seqs.get(run_id)
        row.summary = summary
        row.status, row.error = status_of(summary, listing.held)
        row.modified_at = summary.last_event_at or 0.0
        note_holder(row, before[0], now)
        self._seqs[run_id] = listing.last_seq
        if may_be_held(summary):
            self._live[run_id] = self._version
        else:
            self._live.pop(run_id, None)
        if old_seq is None:
            return  # a new row: `added` (or the first listing)
        if listing.last_seq > old_seq:
            changes.appended[run_id] = listing.last_seq - old_seq
        if (row.status, row.error, row.sort_key) != before or listing.last_seq < old_seq:
            changes.updated.add(run_id)
        if row.sort_key != before[2]:
            self._sorted = None

    # -- the feed ------------------------------------------------------------------------------

    def _open_feed(self) -> ChangeFeed:
        feed = self.store.changes(poll_interval=self.poll_interval)
        with self._feed_lock:
            old, self._feed = self._feed, feed
        if old is not None:
            self._close_feed(old)
        return feed

    def _next_changes(self, feed: ChangeFeed) -> Changes:
        """What the feed reports within WAIT_S, read from the runs table."""
        with self._feed_lock:
            if self._feed is not feed:
                return Changes()  # closed meanwhile
            seen = feed.wait(WAIT_S)
            connected, why = feed.connected, feed.error
        if not connected:
            self._unreachable = True
            self.error = why or f"cannot reach {self.where}"
            return Changes()
        if self._unreachable:
            # Back: the feed polled from where it was; read every row again all the same (who
            # holds which run may have moved without a write).
            self._unreachable = False
            self.error = None
            return self.refresh()
        return self.refresh(seen) if seen else Changes()

    def _close_feed(self, feed: ChangeFeed) -> None:
        with self._feed_lock:
            if self._feed is feed:
                self._feed = None
            with contextlib.suppress(Exception):
                feed.close()
