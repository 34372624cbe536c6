"""The TUI's data layer: a live index of a FileStore directory. Never imports textual.

CONTRACT (the app is built against exactly these names, all importable from here):

    RunIndex(directory, clock=time.time)
        .scan() -> None                 list the directory: every `<run id>.jsonl` file gets a
                                        RunRow at once from its head and tail (see "Quick rows");
                                        another `*.jsonl` name gets an unreadable row, its id the
                                        whole file name ("not a valid run id: ..."; `row_id_of`)
        .fill(max_rows=None) -> list[str]
                                        complete the summaries of rows not yet complete (reads
                                        whole files), newest rows first; returns the run ids it
                                        completed
        .refresh(paths=None) -> Changes after watchfiles: for each changed path read only the
                                        new bytes (offset per file; a partial last line waits
                                        for its newline; a shrunk or replaced file is re-read;
                                        a deleted file is dropped). `None`: check every file.
        .refresh_liveness() -> list[str]
                                        re-probe the lock of every incomplete run (a killed
                                        process changes no file); returns ids whose status moved
        .rows() -> list[RunRow]         newest first (started_at, else mtime); cached, do not
                                        mutate the list
        .get(run_id) -> RunRow | None
        .open(run_id) -> RunLog         the events of one run, for the timeline (KeyError for
                                        an unknown id, OSError if the file cannot be read)
        .incomplete -> int              rows still to fill (a count; 0 once fill() returns [])
        extras: .directory, .clock, .error (the directory itself is missing / unreadable, else
        None), .store (a FileStore on the directory, or None while it is missing),
        .bytes_read / .lines_decoded (counters for tests and benches). Thread-safe (one
        lock), so fill() may run in a worker thread.

    RunRow (tui.runrow): run_id, path, summary (agentor.engine.replay.RunSummary | None),
            status, error, complete, mtime; extras: size, file (the path as a str), sort_key
        status: "running" | "interrupted" | "completed" | "failed" | "max_turns" | "unreadable"
        (or another `run_end` status a log names). "running" = incomplete and locked by a live
        process; "interrupted" = incomplete and nobody holds it; "unreadable" rows carry
        `error`, e.g. "permission denied", "is a directory", "empty file", "no events: ...".
        A readable run with bad lines keeps its status and carries `error` too
        ("2 bad lines; first at byte 812: torn line (no newline at the end)").
        `summary` is None only for files that could not be read at all.

    Quick rows (complete=False, tui.quickread): scan() reads each file's first line and its
    last lines back to the last segment's boundary. Status, agent, model, started_at,
    first_prompt, last_event_at and ended_at are right; turns, tool_calls, usage, events and
    bad_lines count only the lines decoded until fill() completes the row. While the
    directory is small (<= SCAN_WHOLE_FILES files) scan() reads each file under 64 KiB whole
    instead, and refresh() reads a new or replaced file whole when it is under 64 KiB. The
    app shows "…" for counts of incomplete rows and fills in a worker.

    Changes: added, updated, removed (sets of run ids); appended: dict[run_id, int] (lines
             read from the end of a file; a re-read file is in `updated`, not `appended`);
             incomplete: the changed run ids whose rows are now quick rows (a new or replaced
             file over 64 KiB): when it is not empty, fill() has work again, even if it had
             returned [] before. bool(changes) is False when nothing changed.

    RunLog (tui.runlog): the lazy log of one run, decoded line by line on demand.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentor.engine.store import RUN_ID_RE, SUFFIX, FileStore

from .logfile import CHUNK, gc_paused, os_reason
from .quickread import HEAD_MAX, TAIL_BYTES
from .rowread import RowReader
from .runlog import CACHE_SIZE, RunLog
from .runrow import (
    INTERRUPTED,
    ROW_FIELDS,
    RUNNING,
    UNREADABLE,
    RunRow,
    bad_name,
    may_be_live,
    settle,
)

__all__ = [
    "CACHE_SIZE",
    "CHUNK",
    "HEAD_MAX",
    "INTERRUPTED",
    "RUNNING",
    "SCAN_WHOLE_FILES",
    "TAIL_BYTES",
    "UNREADABLE",
    "Changes",
    "RunIndex",
    "RunLog",
    "RunRow",
]

SCAN_WHOLE_FILES = 300  # up to this many files, scan() reads each one under 64 KiB whole


@dataclass
class Changes:
    added: set[str] = field(default_factory=set)
    updated: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    appended: dict[str, int] = field(default_factory=dict)
    incomplete: set[str] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.appended or self.incomplete)


def row_id_of(name: str) -> str | None:
    """The row id of a file name in a run directory: the run id of `<run id>.jsonl`; the
    whole name of another `*.jsonl` file (`bad name!.jsonl`), which is listed as unreadable
    with the reason (a name holding a `.` never collides with a run id); None for a name that
    is not a log's (`<id>.jsonl.torn` sidecars, notes) and for hidden names (`.x.jsonl`, an
    editor's `.#x.jsonl` lock), which are not listed, as `ls` does not list them."""
    if not name.endswith(SUFFIX) or name.startswith("."):
        return None
    stem = name[: -len(SUFFIX)]
    return stem if RUN_ID_RE.fullmatch(stem) else name


def file_name(row_id: str) -> str:
    """The file name of a row (the inverse of `row_id_of`)."""
    return row_id + SUFFIX if RUN_ID_RE.fullmatch(row_id) else row_id


class RunIndex:
    """A live index of the run logs in one directory. Never raises on a bad file."""

    def __init__(
        self, directory: str | os.PathLike[str], clock: Callable[[], float] = time.time
    ) -> None:
        self.directory = Path(directory)
        self.clock = clock
        self.error: str | None = None
        self.store: FileStore | None = None
        self._reader = RowReader(self._locked)
        self._rows: dict[str, RunRow] = {}
        self._sorted: list[RunRow] | None = None
        self._lock = threading.RLock()
        self._liveness_turn = 0  # where refresh_liveness(budget) goes on next
        self._dir_names = {os.path.abspath(self.directory)}

    # -- public --------------------------------------------------------------------------------

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
            self._sorted = None
            entries = self._list_dir()
            if entries is None:
                return
            # A few files are read whole (complete at once); many get quick rows.
            whole_under = TAIL_BYTES if len(entries) <= SCAN_WHOLE_FILES else -1
            for run_id, path in entries:
                row = RunRow(run_id, path)
                self._rows[run_id] = row
                self._load(row, whole_under)

    def fill(self, max_rows: int | None = None) -> list[str]:
        """Read whole the files of rows that are not complete yet, newest first."""
        done: list[str] = []
        with gc_paused():
            for row in self.rows():
                if max_rows is not None and len(done) >= max_rows:
                    break
                if row.complete:
                    continue  # read without the lock (cheap over 10,000 rows); checked again
                with self._lock:
                    if row.complete or self._rows.get(row.run_id) is not row:
                        continue
                    before = row.sort_key
                    self._reload(row, whole_under=None)
                    if row.sort_key != before:
                        self._sorted = None
                    done.append(row.run_id)
        return done

    @property
    def incomplete(self) -> int:
        with self._lock:
            return sum(1 for r in self._rows.values() if not r.complete)

    def refresh(self, paths: Iterable[str | os.PathLike[str]] | None = None) -> Changes:
        """Take in changes to the given paths (from watchfiles), or to every file when None."""
        changes = Changes()
        with self._lock:
            if paths is None:
                entries = self._list_dir()
                names = dict(entries or ())
                for run_id, row in self._rows.items():
                    names.setdefault(run_id, row.file)
                targets = list(names.items())
            else:
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
            if self.error is not None and not self.directory.is_dir():
                changes.removed.update(self._rows)  # nothing left to show
                self._rows.clear()
                self._sorted = None
                return changes
            for run_id, path in targets:
                self._refresh_one(run_id, path, changes)
            for run_id in changes.added | changes.updated | changes.appended.keys():
                row = self._rows.get(run_id)
                if row is not None and not row.complete:
                    changes.incomplete.add(run_id)  # fill() has work again
        return changes

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
                settle(row, self._locked)
                if row.status != before:
                    moved.append(row.run_id)
        return moved

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

    def open(self, run_id: str) -> RunLog:
        row = self.get(run_id)
        if row is None:
            raise KeyError(run_id)
        return RunLog(row.file)

    # -- the directory -------------------------------------------------------------------------

    def _list_dir(self) -> list[tuple[str, str]] | None:
        """(row id, path) of every `*.jsonl` name (see `row_id_of`); None if the directory
        is unusable. Other names (`.torn` sidecars, notes, ...) are not logs."""
        out = []
        try:
            with os.scandir(self.directory) as it:
                for entry in it:
                    row_id = row_id_of(entry.name)
                    if row_id is not None:
                        out.append((row_id, entry.path))
        except FileNotFoundError:
            self._directory_gone()
            return None
        except OSError as exc:
            self.error = f"cannot list {self.directory}: {os_reason(exc)}"
            return None
        self.error = None
        if self.store is None:
            self.store = FileStore(self.directory)  # exists now, so this creates nothing
        return out

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

    # -- reading one file ----------------------------------------------------------------------

    def _refresh_one(self, run_id: str, path: str, changes: Changes) -> None:
        row = self._rows.get(run_id)
        try:
            st = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            if row is not None:
                del self._rows[run_id]
                self._sorted = None
                changes.removed.add(run_id)
            return
        except OSError:
            st = None
        if row is None:
            row = self._rows[run_id] = RunRow(run_id, path)
            self._sorted = None
            self._load(row, TAIL_BYTES)
            changes.added.add(run_id)
            return
        if not RUN_ID_RE.fullmatch(run_id):
            return  # a name that is no run id: its row says so, whatever the file holds
        if st is not None and row.summary is not None and row.inode == st.st_ino:
            if st.st_size == row.size and st.st_mtime == row.mtime:
                return  # nothing new (watchers also report reads, opens, lock changes)
            if st.st_size >= row.offset:
                before = (row.status, row.error, row.sort_key)
                added = self._reader.append(row)
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

    def _load(self, row: RunRow, whole_under: int | None) -> None:
        if RUN_ID_RE.fullmatch(row.run_id):
            self._reader.load(row, whole_under)
        else:
            bad_name(row)

    def _reload(self, row: RunRow, whole_under: int | None) -> None:
        """Load into a scratch row, then take its fields: a row the app may be drawing
        from another thread never shows a half-read summary."""
        fresh = RunRow(row.run_id, row.file)
        self._reader.load(fresh, whole_under)
        for name in ROW_FIELDS:
            setattr(row, name, getattr(fresh, name))
