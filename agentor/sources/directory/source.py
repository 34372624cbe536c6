"""`DirectorySource`: the runs of a FileStore directory, as a `RunSource` (`sources.source`).

What keeps it fast is FileStore's alone, so it stays here:

- Quick rows: scan() reads each file's first line and its last lines back to the last
  segment's boundary (`quickread`); such a row is `complete` once fill() has read its file
  whole. While the directory is small (<= SCAN_WHOLE_FILES files) scan() reads each file under
  64 KiB whole instead, and refresh() reads a new or replaced file whole when it is under
  64 KiB.
- The run index (`runindex`): scan() takes the row of every file that has not changed since
  it was saved (same device, inode, size, mtime) from the index, and reads the others;
  save_index() writes it (the app does so from a worker, a while after changes). A reader that
  only prints rows sets `leave_aside`: scan() then builds no row of the index's but those whose
  listing reads more (`runindex.take_aside`), and table() gives every row as columns.
- Two cores: a scan that reads thousands of files whole (`whole_at_scan`) has a forked worker
  read part of them (`forkread`), its rows taken as the index's are.
- Tailing: beside each row a `LogTail` remembers how far its file was read: refresh() reads
  only the new bytes (a partial last line waits for its newline; a shrunk or replaced file is
  read again from the start; a deleted one leaves).
- Liveness is the store's lock (`LockingStore.is_locked`, a probe of the file's flock).
- Watching is watchfiles (`watch`); one run's events are a `RunLog` (a newline index).

Row ids are run ids; another `*.jsonl` name is listed as unreadable under its whole file name
("not a valid run id: ...", `row_id_of`). Extras: .directory, .store (a FileStore on the
directory, or None while it is missing), .index (its `RunIndex`), .from_index (rows the last
scan took from it), .from_worker (rows it took from a forked worker), .read_at_scan (files it
read, not from the index), .index_stale (rows changed since), .bytes_read / .lines_decoded (what
reading cost, for tests and benches). Thread-safe (one lock): fill() may run in a worker.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import AsyncGenerator, Callable, Iterable
from pathlib import Path

from agentor.engine.statuses import RUNNING
from agentor.engine.store.file import FileStore
from agentor.engine.store.run_ids import RUN_ID_RE
from agentor.sources.directory import forkread
from agentor.sources.directory.columns import _ShapeError
from agentor.sources.directory.lognames import file_name, log_entries, row_id_of
from agentor.sources.directory.quickread import TAIL_BYTES
from agentor.sources.directory.rowread import TAIL_FIELDS, LogTail, RowReader, bad_name, settle
from agentor.sources.directory.runindex import (
    Aside,
    RunIndex,
    listing_order,
    take_aside,
    take_fresh,
)
from agentor.sources.directory.runlog import RunLog
from agentor.sources.directory.telling import TellingFileStore
from agentor.sources.directory.watch import changed_paths, identity
from agentor.sources.logfile import gc_paused, os_reason, promote_young
from agentor.sources.rowcost import needs_pricing
from agentor.sources.runrow import ROW_FIELDS, RunRow, may_be_live, newest_first
from agentor.sources.runtable import RunTable
from agentor.sources.source import Changes

SCAN_WHOLE_FILES = 300  # up to this many files, scan() reads each one under 64 KiB whole


def _store_of(directory: Path) -> FileStore | None:
    """A FileStore on the directory while it is there and usable (FileStore would make a
    missing one), else None: `scan` says why."""
    try:
        return FileStore(directory) if directory.is_dir() else None
    except OSError:  # it cannot be opened (permissions), or went meanwhile
        return None


def _nobody(run_ids: list[str]) -> set[str]:
    """Who holds these runs when the directory has no store: no one."""
    return set()


class DirectorySource:
    """The run logs of one directory, kept up to date. Never raises on a bad file."""

    def __init__(
        self, directory: str | os.PathLike[str], clock: Callable[[], float] = time.time
    ) -> None:
        self.directory = Path(directory)
        self.where = str(self.directory)
        self.label = str(self.directory)
        self.error: str | None = None
        # At once, so that one run's row is read with its lock (`refresh` before any `scan`).
        self.store: FileStore | None = _store_of(self.directory)
        self._reader = RowReader(self._locked, clock)
        self._rows: dict[str, RunRow] = {}
        self._tails: dict[str, LogTail] = {}
        self._sorted: list[RunRow] | None = None
        # Where the last `fill` stopped in `_sorted` (read priced or not): every row before it
        # was read as asked, and stays so while the list is the same (a row read again from a
        # part of its file, or replaced, makes a new list), so the next one starts there.
        self._filled: tuple[list[RunRow] | None, bool, int] = (None, False, 0)
        self._lock = threading.RLock()
        self._liveness_turn = 0  # where refresh_liveness(budget) goes on next
        self._dir_names = {os.path.abspath(self.directory)}
        self.index = RunIndex(self.directory)
        self.from_index = 0  # rows the last scan took from the index, not from their logs
        self.from_worker = 0  # rows the last scan took from a forked worker (`forkread`)
        self.read_at_scan = 0  # files the last scan read (not taken from the index)
        self.index_stale = False  # rows changed since the index was read or saved
        # A reader that wants every row complete (`listing.list_rows`) has scan() read each
        # file the index does not hold whole, instead of a sketch then a fill (two reads).
        self.whole_at_scan = False
        # A reader that only prints the rows (`listing.list_table`) has scan() leave the index's
        # rows that need no more than it holds as its columns (`aside`), not in rows().
        self.leave_aside = False
        self.aside: Aside | None = None
        self._untold: set[str] = set()  # rows a fill read further than a refresh told

    # -- RunSource -----------------------------------------------------------------------------

    @property
    def bytes_read(self) -> int:
        return self._reader.bytes_read

    @property
    def lines_decoded(self) -> int:
        return self._reader.lines_decoded

    def scan(self) -> None:
        """(Re)list the directory from scratch: quick rows, or whole files while that is cheap."""
        with self._lock, gc_paused():
            self._rows.clear()
            self._tails.clear()
            self._untold.clear()
            self._sorted = None
            self.aside = None
            self.from_worker = self.read_at_scan = 0
            entries = self._list_dir()
            if entries is None:
                return
            # A few files are read whole (complete at once); many get quick rows.
            whole_under: int | None = TAIL_BYTES if len(entries) <= SCAN_WHOLE_FILES else -1
            if self.whole_at_scan:
                whole_under = None
            rest = self._from_index(entries)
            self.read_at_scan = len(rest)
            if whole_under is None and forkread.can_fork(len(rest)):
                rest = self._read_halves(rest)
            for run_id, path in rest:
                self._add(run_id, path, whole_under)
            promote_young()  # the rows live as long as the source

    def _from_index(self, entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Take the index's rows of files unchanged since (`take_fresh`, or `take_aside`); the
        rest to read."""
        known = self.index.load()
        self.aside = None
        try:
            if self.leave_aside:
                holders = self.store.locked_among if self.store else _nobody
                self.aside, rest = take_aside(known, entries, self._rows, self._tails, holders)
            else:
                rest = take_fresh(known, entries, self._rows, self._tails)
        except _ShapeError as exc:  # damaged columns: as if there were no index
            self.index.problem, rest = f"{self.index.path}: {exc}", entries
            self._rows.clear()
            self._tails.clear()
        self.from_index = len(self._rows) + (self.aside.count if self.aside else 0)
        self.index_stale = bool(rest) or known.count != self.from_index  # read, gone since
        live = [row for row in self._rows.values() if may_be_live(row)]  # asked, never stored
        held = self.store.locked_among(r.run_id for r in live) if self.store else set()
        for row in live:
            settle(row, self._tails[row.run_id], held.__contains__, self._reader.clock)
        return rest

    def _read_halves(self, entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Read part of these files whole here, the rest in a forked worker (`forkread`),
        whose rows are taken as an index's are (`take_aside` when no index row was left aside,
        else `take_fresh`); the entries left to read here (those the worker did not hand
        back)."""
        theirs, mine = forkread.shares(entries)
        worker = forkread.start(theirs, self._read_whole)
        if worker is None:
            return entries
        for run_id, path in mine:
            self._add(run_id, path, None)
        back = forkread.finish(worker)
        if back is None:
            return worker.entries
        self._reader.bytes_read += back.bytes_read
        self._reader.lines_decoded += back.lines_decoded
        rows: dict[str, RunRow] = {}
        tails: dict[str, LogTail] = {}
        try:
            if self.leave_aside and (self.aside is None or not self.aside.count):
                holders = self.store.locked_among if self.store else _nobody
                self.aside, rest = take_aside(back.loaded, worker.entries, rows, tails, holders)
                self.aside.apart = True
            else:
                rest = take_fresh(back.loaded, worker.entries, rows, tails)
        except _ShapeError:  # not ours to be damaged, but then: read here
            return worker.entries
        self.from_worker = len(worker.entries) - len(rest)
        self._rows.update(rows)
        self._tails.update(tails)
        live = [row for row in rows.values() if may_be_live(row)]
        held = self.store.locked_among(r.run_id for r in live) if self.store else set()
        for row in live:
            settle(row, tails[row.run_id], held.__contains__, self._reader.clock)
        return rest

    def _read_whole(
        self, entries: list[tuple[str, str]]
    ) -> tuple[list[tuple[RunRow, LogTail]], int, int]:
        """In a worker: these files read whole, as (row, tail) pairs, with what that cost."""
        reader = self._reader
        before = reader.bytes_read, reader.lines_decoded
        for run_id, path in entries:
            self._add(run_id, path, None)
        pairs = [(self._rows[run_id], self._tails[run_id]) for run_id, _ in entries]
        return pairs, reader.bytes_read - before[0], reader.lines_decoded - before[1]

    def save_index(self) -> Path:
        """Write the rows read so far to the run index (`RunIndex.save`, from a worker
        thread); OSError if it cannot be written anywhere."""
        with self._lock, gc_paused():  # 100,000 new pairs would wake the collector
            # Saved newest first (`rows()`, sorted once): listed again, they come in order.
            aside = self.aside if self.aside is not None and self.aside.count else None
            rows = list(self._rows.values()) if aside else self.rows()
            pairs = [(r, self._tails[r.run_id]) for r in rows]
            self.index_stale = False  # a change from now on is saved next time
        try:
            if aside:  # with the rows left as columns (a listing: no other thread)
                return self.index.save_aside(aside, pairs)
            return self.index.save(pairs, self._lock, lambda r: self._rows.get(r.run_id) is r)
        except OSError:
            self.index_stale = True
            raise

    def fill(self, max_rows: int | None = None, *, priced: bool = True) -> list[str]:
        """Read whole the files of rows that are not complete, or (`priced`) not priced yet
        (their cost, `agentor.sources.rowcost`), newest first."""
        done: list[str] = []
        with gc_paused():
            rows = self.rows()
            seen, seen_priced, start = self._filled
            start = start if seen is rows and seen_priced == priced else 0
            self._filled = (rows, priced, len(rows))
            for i in range(start, len(rows)):
                row = rows[i]
                if max_rows is not None and len(done) >= max_rows:
                    self._filled = (rows, priced, i)  # the rows before: each read as asked
                    break
                if row.complete and not (priced and needs_pricing(row)):
                    continue  # read without the lock (cheap over 10,000 rows); checked again
                with self._lock:
                    if row.complete and not (priced and needs_pricing(row)):
                        continue
                    if self._rows.get(row.run_id) is not row:
                        continue
                    self._fill_one(row, priced)
                    done.append(row.run_id)
                    self.index_stale = True
        return done

    def _fill_one(self, row: RunRow, priced: bool) -> None:
        """Read the row's file whole. The run may have moved on since a refresh last read it
        (a line appended, a pause recorded): the fill reads that too, and leaves it for the
        next refresh to tell (`_untold`), as that refresh would have told it had it read the
        lines first. A file changes only by a write a refresh follows (a watch, a resume or a
        fork here reads its run again after each), so a change is told once, whoever read it."""
        tail = self._tails[row.run_id]
        before = (row.status, row.error, row.sort_key, tail.inode, tail.offset)
        self._reload(row, whole_under=None, priced=priced)
        if row.sort_key != before[2]:
            self._sorted = None
        if (row.status, row.error, row.sort_key, tail.inode, tail.offset) != before:
            self._untold.add(row.run_id)

    @property
    def incomplete(self) -> int:
        with self._lock:
            return sum(1 for r in self._rows.values() if not r.complete)

    def refresh(self, run_ids: Iterable[str] | None = None) -> Changes:
        """Read what changed in these runs' files, or in every file (and which there are)."""
        if run_ids is None:
            return self.refresh_paths(None)
        return self.refresh_paths([os.path.join(self.directory, file_name(r)) for r in run_ids])

    def refresh_liveness(self, budget: int | None = None) -> list[str]:
        """Re-probe the lock of incomplete runs; the ids whose status moved.

        With `budget`, each call probes every *running* row (a death changes no file) and at
        most `budget` of the others, taking turns: a process that takes a run writes to it at
        once, so the watcher sees those sooner anyway, and a directory of thousands of
        interrupted runs costs the caller a bounded few milliseconds.
        """
        moved: list[str] = []
        with self._lock:
            rows = [r for r in self._rows.values() if may_be_live(r)]
            if budget is not None and len(rows) > budget:
                running = [r for r in rows if r.status == RUNNING]
                rest = [r for r in rows if r.status != RUNNING]
                start = self._liveness_turn % len(rest) if rest else 0
                self._liveness_turn = start + budget
                rows = running + (rest[start:] + rest[:start])[:budget]
            for row in rows:
                before = row.status
                settle(row, self._tails[row.run_id], self._locked, self._reader.clock)
                if row.status != before:
                    moved.append(row.run_id)
        return moved

    def rows(self) -> list[RunRow]:
        with self._lock:
            if self._sorted is None:
                self._sorted = newest_first(list(self._rows.values()))
            return self._sorted

    def table(self) -> RunTable:
        """Every row, as a table in the run list's order (`runtable`): the rows left aside
        (`leave_aside`) from their columns, no object built, and those of rows()."""
        with self._lock:
            if self.aside is None or not self.aside.count:
                return RunTable.of_rows(self.rows())
            rows = list(self._rows.values())
            order = listing_order(self.aside, rows)
            return self.aside.table().joined(RunTable.of_rows(rows)).arranged(order)

    def get(self, run_id: str) -> RunRow | None:
        with self._lock:
            return self._rows.get(run_id)

    def open(self, run_id: str) -> RunLog:
        with self._lock:
            tail = self._tails.get(run_id)
        if tail is None:
            raise KeyError(run_id)
        return RunLog(tail.path)

    def identity(self) -> tuple[int, int] | None:
        return identity(self.directory)

    def close(self) -> None:
        """Nothing to let go of: files are opened only while they are read."""

    async def watch(self) -> AsyncGenerator[Changes, None]:
        import asyncio  # here: a listing that watches nothing does not load it

        async with contextlib.aclosing(changed_paths(self.directory)) as batches:
            async for paths in batches:
                if paths is None:  # the watch is set up: what changed since the scan
                    yield await asyncio.to_thread(self.refresh)
                    continue
                # One batch holds every change since the last (bursts come as one): each file
                # is read once, and the screen drawn once for all of it.
                wanted = [p for p in paths if p != self.directory]
                if wanted:
                    yield self.refresh_paths(wanted)

    def resume_store(self, held: Callable[[str], None]) -> FileStore:
        return TellingFileStore(self.directory, held)

    # -- the directory -------------------------------------------------------------------------

    def _list_dir(self) -> list[tuple[str, str]] | None:
        """(row id, path) of every `*.jsonl` name (see `row_id_of`); None if the directory
        is unusable. Other names (`.torn` sidecars, notes, ...) are not logs."""
        try:
            names = os.listdir(self.directory)  # names only: 100,000 of them
        except FileNotFoundError:
            self._directory_gone()
            return None
        except OSError as exc:
            self.error = f"cannot list {self.directory}: {os_reason(exc)}"
            return None
        self.error = None
        if self.store is None:
            self.store = FileStore(self.directory)  # exists now, so this creates nothing
        return log_entries(os.path.join(self.directory, ""), names)

    def _directory_gone(self) -> None:
        self.error = f"{self.directory} is gone (deleted or moved)"
        self.store = None

    def _run_id_of(self, path: str | os.PathLike[str]) -> str | None:
        path = os.fspath(path)
        parent, name = os.path.split(path)
        row_id = row_id_of(name)
        if row_id is None:
            return None
        parent = os.path.abspath(parent)
        if parent not in self._dir_names:
            # Watchers may report the resolved path (symlinked directories).
            if os.path.realpath(parent) != os.path.realpath(self.directory):
                return None
            self._dir_names.add(parent)
        return row_id

    def _locked(self, run_id: str) -> bool:
        store = self.store
        return store is not None and store.is_locked(run_id)

    # -- reading files -------------------------------------------------------------------------

    def refresh_paths(self, paths: Iterable[str | os.PathLike[str]] | None) -> Changes:
        """Take in changes to the given paths (a batch watchfiles reports), or to every file
        when None."""
        changes = Changes()
        with self._lock:
            targets = self._targets(paths)
            if self.error is not None and not self.directory.is_dir():
                changes.removed.update(self._rows)  # nothing left to show
                self._rows.clear()
                self._tails.clear()
                self._sorted = None
                return changes
            for run_id, path in targets:
                self._refresh_one(run_id, path, changes)
            untold, self._untold = self._untold & self._rows.keys(), set()
            changes.updated |= untold - changes.added  # what fills read first, told now
            self.index_stale |= bool(changes)
            for run_id in changes.added | changes.updated | changes.appended.keys():
                row = self._rows.get(run_id)
                if row is not None and (not row.complete or needs_pricing(row)):
                    changes.incomplete.add(run_id)  # fill() has work again
        return changes

    def _targets(self, paths: Iterable[str | os.PathLike[str]] | None) -> list[tuple[str, str]]:
        """(row id, path) of the files to look at again: every one listed or known (None),
        else those of `paths` that are logs of this directory, each once."""
        if paths is None:
            names = dict(self._list_dir() or ())
            for known_id, tail in self._tails.items():
                names.setdefault(known_id, tail.path)
            return list(names.items())
        targets = []
        seen: set[str] = set()
        for p in paths:
            run_id = self._run_id_of(p)
            if run_id is not None and run_id not in seen:
                seen.add(run_id)
                targets.append((run_id, os.path.join(self.directory, file_name(run_id))))
        if not self.directory.is_dir():
            self._directory_gone()
        elif self.error is not None:
            self._list_dir()  # it is back (or readable again)
        return targets

    def _refresh_one(self, run_id: str, path: str, changes: Changes) -> None:
        row, tail = self._rows.get(run_id), self._tails.get(run_id)
        try:
            st = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            if row is not None:
                del self._rows[run_id], self._tails[run_id]
                self._sorted = None
                changes.removed.add(run_id)
            return
        except OSError:
            st = None
        if row is None or tail is None:
            self._add(run_id, path, TAIL_BYTES)
            self._sorted = None
            changes.added.add(run_id)
            return
        if not RUN_ID_RE.fullmatch(run_id):
            return  # a name that is no run id: its row says so, whatever the file holds
        if st is not None and row.summary is not None and tail.inode == st.st_ino:
            if st.st_size == tail.size and st.st_mtime == row.modified_at:
                return  # nothing new (watchers also report reads, opens, lock changes)
            if st.st_size >= tail.offset:
                before = (row.status, row.error, row.sort_key)
                added = self._reader.append(row, tail)
                if added is not None:
                    if added:
                        changes.appended[run_id] = added
                    if (row.status, row.error, row.sort_key) != before:
                        changes.updated.add(run_id)
                    if row.sort_key != before[2]:
                        self._sorted = None
                    return
        # Shrunk, replaced, unreadable before or now: read it again from the start.
        self._reload(row, TAIL_BYTES)
        self._sorted = None
        changes.updated.add(run_id)

    def _add(self, run_id: str, path: str, whole_under: int | None) -> None:
        row, tail = RunRow(run_id), LogTail(path)
        self._rows[run_id], self._tails[run_id] = row, tail
        if RUN_ID_RE.fullmatch(run_id):
            self._reader.load(row, tail, whole_under)
        else:
            bad_name(row, tail)

    def _reload(self, row: RunRow, whole_under: int | None, priced: bool = False) -> None:
        """Load into a scratch row, then take its fields: a row the app may be drawing
        from another thread never shows a half-read summary."""
        tail = self._tails[row.run_id]
        fresh, fresh_tail = RunRow(row.run_id), LogTail(tail.path)
        self._reader.load(fresh, fresh_tail, whole_under, priced)
        for name in ROW_FIELDS:
            setattr(row, name, getattr(fresh, name))
        if row.status != RUNNING:
            row.held_since = None
        for name in TAIL_FIELDS:
            setattr(tail, name, getattr(fresh_tail, name))
