"""The TUI's data layer: a live index of a FileStore directory. Never imports textual.

CONTRACT (the app is built against exactly these names):

    RunIndex(directory, clock=time.time)
        .scan() -> None                 list the directory: every `<run id>.jsonl` file gets a
                                        RunRow at once from its head and tail (see "Quick rows")
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
        extras: .directory, .clock, .error (the directory itself is missing / unreadable, else
        None), .store (a FileStore on the directory, or None while it is missing),
        .incomplete (rows still to fill), .bytes_read / .lines_decoded (counters for tests
        and benches). Thread-safe (one lock), so fill() may run in a worker thread.

    RunRow: run_id, path, summary (agentor.engine.replay.RunSummary | None), status, error,
            complete, mtime; extras: size, file (the path as a str), sort_key
        status: "running" | "interrupted" | "completed" | "failed" | "max_turns" | "unreadable"
        (or another `run_end` status a log names). "running" = incomplete and locked by a live
        process; "interrupted" = incomplete and nobody holds it; "unreadable" rows carry
        `error`, e.g. "permission denied", "is a directory", "empty file", "no events: ...".
        A readable run with bad lines keeps its status and carries `error` too
        ("2 bad lines; first at byte 812: torn line (no newline at the end)").
        `summary` is None only for files that could not be read at all.

    Quick rows (complete=False): scanning 10,000 files must take about a second, and decoding
    every line of every file does not fit (json + Event.from_dict cost ~10 us a line). So
    scan() decodes the first line (agent, model, start, prompt), the last lines back to one
    with a time (the latest, as events are written in time order) and the last
    `run_start`/`run_end` (found walking back by each line's leading `{"type": "..."`; lines
    that do not start so are decoded), reading at most the last 64 KiB
    (further back only if the last line is longer), and folds them with replay.fold. Status,
    agent, model, started_at, first_prompt, last_event_at and ended_at are right; turns,
    tool_calls, usage, events and bad_lines count only the lines decoded until fill()
    completes the row. While the directory is small (<= 300 files) scan() reads each file
    under 64 KiB whole instead, and refresh() reads a new or replaced file whole when it is
    under 64 KiB. The app shows "…" for counts of incomplete rows and fills in a worker.

    Changes: added, updated, removed (sets of run ids); appended: dict[run_id, int] (lines
             read from the end of a file; a re-read file is in `updated`, not `appended`).
             bool(changes) is False when nothing changed.

    RunLog(path)                        lazy: indexes newline offsets, decodes lines on demand
        .poll() -> int                  read new bytes; returns how many new lines (events or
                                        bad lines) were added; re-reads a replaced or truncated
                                        file. Raises OSError when the file cannot be read.
        .reset_happened -> bool         the last poll() re-read the file from scratch
                                        (timeline reloads)
        len(log)                        number of whole lines indexed
        .item(i) -> Event | BadLine     line i decoded (LRU cache); generations keep
                                        `messages=None` here (cheap), see `.request(i)`
        .request(i) -> list[dict] | None
                                        full request messages of generation i, as
                                        FileStore.load rebuilds them: walks back to the nearest
                                        full-form generation (or the last one rebuilt) and
                                        applies the deltas; one step back from the last one
                                        rebuilt is a slice. None for other lines or a delta
                                        whose base is lost. The messages are shared with that
                                        cache: copy before changing them. (One difference:
                                        after a corrupt generation line the engine's decoder
                                        stops rebuilding deltas for good; request() resumes
                                        after the next full-form generation.)
        .segment_starts -> list[int]    line indexes of run_start events
        .start_time -> float | None     the first run_start's time (timeline offsets)
        extras: .path, .pending (bytes of an unfinished last line), .decoded (lines json-
        decoded by item(), for tests), .close() (also a context manager). Keeps the file
        open; memory is 8 bytes a line plus the caches. Not thread-safe (UI thread only).

Torn lines (no newline yet) are never decoded: they wait for their newline, or for the engine's
repair (which truncates them) before its next append.
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import gc
import json
import os
import re
import stat
import threading
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from itertools import accumulate, islice, repeat
from operator import add
from pathlib import Path
from typing import Any

from agentor.engine.events import GENERATION, RUN_END, RUN_START, Event
from agentor.engine.logformat import DELTA_FIELD, BadLine, LogDecoder
from agentor.engine.replay import INCOMPLETE, RunSummary, event_time, fold
from agentor.engine.store import RUN_ID_RE, SUFFIX, FileStore

RUNNING = "running"
INTERRUPTED = "interrupted"
UNREADABLE = "unreadable"

TAIL_BYTES = 64 * 1024  # what a quick row reads from a file's end; smaller files are read whole
HEAD_MAX = 4 * 1024 * 1024  # a first line longer than this is not looked for by a quick row
CHUNK = 1024 * 1024  # reads of whole files go by chunks of about this size
SCAN_WHOLE_FILES = 300  # up to this many files, scan() reads each one under 64 KiB whole

# A line's type as every writer of the format puts it: first (json.dumps keeps key order).
_TYPE_AT = re.compile(rb'\{\s*"type"\s*:\s*"(\w+)"')
_BOUNDARY_TYPES = {RUN_START.encode(), RUN_END.encode()}

_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # no FIFO hangs


@dataclass(slots=True, eq=False)
class RunRow:
    run_id: str
    file: str  # the log's path as a string (`path` makes a Path of it on demand)
    summary: RunSummary | None = None
    status: str = UNREADABLE
    error: str | None = None
    complete: bool = False
    mtime: float = 0.0
    size: int = 0
    # Tailing state: where the next read starts (the end of the last whole line read), which
    # file that was, the line number there and the first bad line seen (for `error`).
    offset: int = field(default=0, repr=False)
    inode: int = field(default=0, repr=False)
    lineno: int = field(default=0, repr=False)
    first_bad: BadLine | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return Path(self.file)

    @property
    def sort_key(self) -> float:
        s = self.summary
        if s is not None and s.started_at is not None:
            return s.started_at
        return self.mtime


_ROW_FIELDS = tuple(f.name for f in fields(RunRow) if f.name not in ("run_id", "file"))


@dataclass
class Changes:
    added: set[str] = field(default_factory=set)
    updated: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    appended: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.removed or self.appended)


class _Unreadable(Exception):
    """A file that is there but cannot be read as a log; the message is the row's error."""


def _os_reason(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "is a symlink (not followed)"
    if exc.errno == errno.EISDIR:
        return "is a directory"
    return (exc.strerror or str(exc)).lower()


def _open_log(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """An fd on a regular file; `_Unreadable` for anything else, FileNotFoundError if gone."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _Unreadable(_os_reason(exc)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise _Unreadable("is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise _Unreadable("not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _pread(fd: int, size: int, offset: int) -> bytes:
    """Read exactly `size` bytes unless the file ends first."""
    data = os.pread(fd, size, offset)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = os.pread(fd, size - got, offset + got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while decoding many lines: JSON makes no cycles, and the
    collections that the flood of new containers triggers would each walk the whole heap
    (twice the time of a long walk through a big log)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _decode(line: bytes, offset: int, lineno: int) -> Event | BadLine:
    """One line through the engine's decoder, on its own.

    A fresh decoder has no base for compact generations, so their messages stay unbuilt: the
    index and the timeline need none, and rebuilding them copies the conversation per line.
    """
    decoder = LogDecoder()
    decoder.offset, decoder.lineno = offset, lineno
    return decoder.decode(line)


# -- the run list --------------------------------------------------------------------------------


class RunIndex:
    """A live index of the run logs in one directory. Never raises on a bad file."""

    def __init__(
        self, directory: str | os.PathLike[str], clock: Callable[[], float] = time.time
    ) -> None:
        self.directory = Path(directory)
        self.clock = clock
        self.error: str | None = None
        self.store: FileStore | None = None
        self.bytes_read = 0
        self.lines_decoded = 0
        self._rows: dict[str, RunRow] = {}
        self._sorted: list[RunRow] | None = None
        self._lock = threading.RLock()
        self._dir_names = {os.path.abspath(self.directory)}

    # -- public --------------------------------------------------------------------------------

    def scan(self) -> None:
        """(Re)list the directory from scratch: quick rows, or whole files while that is cheap."""
        with self._lock:
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
        for row in self.rows():
            if max_rows is not None and len(done) >= max_rows:
                break
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
                        targets.append((run_id, os.path.join(self.directory, run_id + SUFFIX)))
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
        return changes

    def refresh_liveness(self) -> list[str]:
        moved: list[str] = []
        with self._lock:
            for row in self._rows.values():
                if self._may_be_live(row):
                    before = row.status
                    self._settle(row)
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
        """(run id, path) of every log name; None if the directory is unusable."""
        out = []
        try:
            with os.scandir(self.directory) as it:
                for entry in it:
                    name = entry.name
                    if not name.endswith(SUFFIX) or not RUN_ID_RE.fullmatch(name[: -len(SUFFIX)]):
                        continue  # not a log: `.torn` sidecars, notes, ...
                    out.append((name[: -len(SUFFIX)], entry.path))
        except FileNotFoundError:
            self._directory_gone()
            return None
        except OSError as exc:
            self.error = f"cannot list {self.directory}: {_os_reason(exc)}"
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
        if not name.endswith(SUFFIX) or not RUN_ID_RE.fullmatch(name[: -len(SUFFIX)]):
            return None
        parent = os.path.abspath(parent)
        if parent not in self._dir_names:
            # Watchers may report the resolved path (symlinked directories).
            if os.path.realpath(parent) != os.path.realpath(self.directory):
                return None
            self._dir_names.add(parent)
        return name[: -len(SUFFIX)]

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
        if st is not None and row.summary is not None and row.inode == st.st_ino:
            if st.st_size == row.size and st.st_mtime == row.mtime:
                return  # nothing new (watchers also report reads, opens, lock changes)
            if st.st_size >= row.offset:
                before = (row.status, row.error, row.sort_key)
                added = self._append(row)
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

    def _reload(self, row: RunRow, whole_under: int | None) -> None:
        """`_load` into a scratch row, then take its fields: a row the app may be drawing
        from another thread never shows a half-read summary."""
        fresh = RunRow(row.run_id, row.file)
        self._load(fresh, whole_under)
        for name in _ROW_FIELDS:
            setattr(row, name, getattr(fresh, name))

    def _load(self, row: RunRow, whole_under: int | None) -> None:
        """Read a new row's file from scratch: whole if smaller than `whole_under` bytes
        (None: always), else quickly (head and tail)."""
        try:
            fd, st = _open_log(row.file)
        except FileNotFoundError:
            row.error, row.complete, row.status = "deleted", True, UNREADABLE
            return
        except _Unreadable as exc:
            row.error, row.complete, row.status = str(exc), True, UNREADABLE
            return
        try:
            row.inode, row.size, row.mtime = st.st_ino, st.st_size, st.st_mtime
            row.summary = RunSummary(run_id=row.run_id)
            if whole_under is None or st.st_size <= whole_under:
                self._consume(row, fd, 0, st.st_size)
                row.complete = True
            else:
                row.complete = self._quick(row, fd, st.st_size)
        except OSError as exc:
            row.summary, row.error, row.complete = None, _os_reason(exc), True
            row.status = UNREADABLE
            return
        finally:
            os.close(fd)
        self._settle(row)

    def _append(self, row: RunRow) -> int | None:
        """Read what was appended; None when the file must be read again from the start."""
        try:
            fd, st = _open_log(row.file)
        except (OSError, _Unreadable):
            return None
        try:
            if st.st_ino != row.inode or st.st_size < row.offset:
                return None
            if row.offset:
                # The byte before our offset must still end a line, or the file was rewritten.
                self.bytes_read += 1
                if os.pread(fd, 1, row.offset - 1) != b"\n":
                    return None
            row.size, row.mtime = st.st_size, st.st_mtime
            before = row.lineno
            self._consume(row, fd, row.offset, st.st_size)
        except OSError:
            return None
        finally:
            os.close(fd)
        self._settle(row)
        return row.lineno - before

    def _consume(self, row: RunRow, fd: int, start: int, end: int) -> None:
        """Decode and fold the whole lines in [start, end); the offset moves past them."""
        assert row.summary is not None
        pos = start
        while pos < end:
            size = min(CHUNK, end - pos)
            while True:
                data = _pread(fd, size, pos)
                cut = data.rfind(b"\n")
                if cut >= 0 or pos + len(data) >= end or not data:
                    break
                size = min(size * 2, end - pos)  # a line longer than the chunk
            self.bytes_read += len(data)
            if cut < 0:
                break  # an unfinished last line: it waits for its newline
            events = []
            for line in data[:cut].split(b"\n"):
                line += b"\n"
                row.lineno += 1
                item = _decode(line, pos, row.lineno - 1)
                pos += len(line)
                if isinstance(item, BadLine):
                    row.summary.bad_lines += 1
                    row.first_bad = row.first_bad or item
                else:
                    events.append(item)
            self.lines_decoded += len(events)
            fold(row.summary, events)
        row.offset = pos

    def _quick(self, row: RunRow, fd: int, size: int) -> bool:
        """A summary from the first line and the last lines back to a segment boundary.

        Returns whether that decoded every line of the file (then the summary is complete).
        """
        assert row.summary is not None
        decoded: list[Event | BadLine] = []
        # The first line: agent, model, start, prompt.
        probe = min(size, TAIL_BYTES)
        while True:
            head_data = _pread(fd, probe, 0)
            self.bytes_read += len(head_data)
            head_end = head_data.find(b"\n") + 1
            if head_end or probe >= size or probe >= HEAD_MAX:
                break  # found, or no first line worth looking for
            probe = min(size, probe * 4)
        if head_end:
            decoded.append(_decode(head_data[:head_end], 0, 0))
        # The last lines, from the end back to the last segment's run_start or run_end.
        span = TAIL_BYTES
        while True:
            r0 = max(head_end, size - span - 1)
            if r0 == head_end and len(head_data) == size:
                region, r0 = head_data, 0  # a small file: already read whole
                first = head_end
            else:
                region = _pread(fd, size - r0, r0)
                self.bytes_read += len(region)
                # Whole lines start at once if the region starts where the first line ends,
                # else after the newline ending the line the region cuts into.
                first = 0 if r0 == head_end else region.find(b"\n") + 1
            last = region.rfind(b"\n") + 1
            if last > first or r0 <= head_end:
                break
            span *= 4  # the last line is longer than the tail read: read further back
        every_line = r0 <= head_end
        tail: list[Event | BadLine] = []
        end = last
        timed = False  # whether the latest event with a time was decoded
        while end > first:
            start = max(first, region.rfind(b"\n", first, end - 1) + 1)
            kind = _TYPE_AT.match(region, start)
            if not timed or kind is None or kind[1] in _BOUNDARY_TYPES:
                # Lines up to the latest with a time (events are written in time order; some
                # upstream ones carry none), a segment boundary, a line that does not say its
                # type up front: decoded. Other lines are skipped by their type.
                item = _decode(region[start:end], r0 + start, 0)
                tail.append(item)
                if isinstance(item, Event):
                    timed = timed or event_time(item) is not None
                    if item.type in (RUN_START, RUN_END):
                        end = start
                        break  # the last segment's boundary: enough for the status
            else:
                every_line = False
            end = start
        every_line = every_line and end <= first
        row.offset = r0 + last if last > first else head_end
        tail.reverse()
        decoded += tail
        events = [x for x in decoded if isinstance(x, Event)]
        self.lines_decoded += len(decoded)
        if len(events) < len(decoded):
            bad = [x for x in decoded if isinstance(x, BadLine)]
            row.summary.bad_lines += len(bad)
            row.first_bad = bad[0]
        row.lineno = len(decoded) if every_line else 0
        fold(row.summary, events)
        return every_line

    # -- status --------------------------------------------------------------------------------

    def _may_be_live(self, row: RunRow) -> bool:
        s = row.summary
        return s is not None and (s.events == 0 or s.status == INCOMPLETE)

    def _locked(self, run_id: str) -> bool:
        store = self.store
        return store is not None and store.is_locked(run_id)

    def _settle(self, row: RunRow) -> None:
        """The row's status and error from its summary, plus the lock for incomplete runs."""
        s = row.summary
        if s is None:
            row.status = UNREADABLE
            return
        bad = None
        if s.bad_lines and row.first_bad is not None:
            n = s.bad_lines
            fb = row.first_bad
            bad = f"{n} bad line{'s' if n != 1 else ''}; first at byte {fb.offset}: {fb.reason}"
        if s.events == 0:
            if bad:
                row.status, row.error = UNREADABLE, "no events: " + bad
            elif self._locked(row.run_id):
                row.status, row.error = RUNNING, None  # created by a starting run
            else:
                row.status = UNREADABLE
                row.error = "empty file" if row.size == 0 else "no complete line"
            return
        row.error = bad
        if s.status == INCOMPLETE:
            row.status = RUNNING if self._locked(row.run_id) else INTERRUPTED
        else:
            row.status = s.status


# -- one run's events ----------------------------------------------------------------------------

# Searched with a literal first (a newline), which the regex engine scans for fast; a `^`
# anchor with re.MULTILINE would try every byte of a big log.
_RUN_START_AFTER_NEWLINE = re.compile(rb'\n\{\s*"type"\s*:\s*"run_start"')
_RUN_START_AT = re.compile(rb'\{\s*"type"\s*:\s*"run_start"')
_GENERATION_AT = re.compile(rb'\{\s*"type"\s*:\s*"generation"')
CACHE_SIZE = 1024
_Rebuilt = tuple[int, "int | None", list[dict[str, Any]]]  # line, generation ordinal, messages


class RunLog:
    """The lines of one run log, indexed by newline offsets and decoded only when asked for.

    Types are told from a line's leading bytes (`{"type": "run_start"` ...), which is how every
    writer of this format (this engine, upstream Agentor) starts a line.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.reset_happened = False
        self.decoded = 0
        self.pending = 0
        self.segment_starts: list[int] = []
        self._ends = array("q")  # byte offset just past each whole line's newline
        self._cache: OrderedDict[int, Event | BadLine] = OrderedDict()
        self._rebuilt: _Rebuilt | None = None  # the last request rebuilt
        self._start_time: float | None = None
        self._start_known = False
        self._fd = -1
        self._inode = 0
        self._open()

    # -- public --------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ends)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def poll(self) -> int:
        self.reset_happened = False
        st = os.stat(self.path, follow_symlinks=False)
        end = self._end()
        replaced = self._fd < 0 or st.st_ino != self._inode or st.st_size < end
        if not replaced and end and os.pread(self._fd, 1, end - 1) != b"\n":
            replaced = True  # rewritten in place
        if replaced:
            self.close()
            self._reset_state()
            self._open()
            self.reset_happened = True
            return len(self)
        if st.st_size == end:
            return 0
        return self._index(end, st.st_size)

    def item(self, i: int) -> Event | BadLine:
        if i < 0:
            i += len(self._ends)
        hit = self._cache.get(i)
        if hit is not None:
            self._cache.move_to_end(i)
            return hit
        start, line = self._line(i)
        self.decoded += 1
        item = _decode(line, start, i)
        if isinstance(item, Event) and item.type == GENERATION:
            item.messages = None  # see request(): the timeline needs no request here
            item.extra.pop(DELTA_FIELD, None)
        self._cache[i] = item
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return item

    def request(self, i: int) -> list[dict[str, Any]] | None:
        """Full request messages of generation i, rebuilt as `LogDecoder` rebuilds them.

        The messages are shared with a cache: copy one before changing it.
        """
        if i < 0:
            i += len(self._ends)
        if not 0 <= i < len(self._ends):
            raise IndexError(i)
        cached = self._rebuilt
        if cached is not None and cached[0] == i:
            return list(cached[2])
        with _gc_paused():
            if cached is not None and cached[0] > i:
                out = self._step_back(i, cached)
                if out is not None:
                    return out
            return self._walk_forward(i, cached if cached is not None and cached[0] < i else None)

    def _walk_forward(self, i: int, cached: _Rebuilt | None) -> list[dict[str, Any]] | None:
        """Walk back to a full generation (or `cached`), then apply the deltas up to i."""
        chain: list[dict[str, Any] | None] = []  # newest first; None marks a broken line
        anchor: tuple[int | None, list[dict[str, Any]]] | None = None  # (ordinal, messages)
        for k, data in self._generations_back(i):
            if cached is not None and k == cached[0]:
                anchor = (cached[1], cached[2])
                break
            gen = _generation_dict(data)
            if k == i and gen is None:
                return None  # not a generation
            if gen is None:
                chain.append(None)
                break
            messages = gen.get("messages")
            if _is_list_of_dicts(messages):
                anchor = (None, messages)
                break
            chain.append(gen)
        if anchor is None:
            return None
        ordinal, messages = anchor
        out = list(messages)
        for gen in reversed(chain):
            delta = _delta(gen)
            if delta is None:
                return None  # FileStore.load cannot rebuild it either
            if ordinal is None:
                ordinal = delta["base"]  # what the writer counted for the full generation
            if delta["base"] != ordinal or delta["keep"] > len(out):
                return None
            del out[delta["keep"] :]
            out.extend(delta["tail"])
            ordinal += 1
        self._rebuilt = (i, ordinal, out)
        return list(out)

    def _step_back(self, i: int, cached: _Rebuilt) -> list[dict[str, Any]] | None:
        """From a later rebuilt request back to i, when each step in between only appended.

        Generation k's request is then the first len(request k) messages of the next one;
        that length is on line k itself. None when that does not hold (walk forward instead).
        """
        later, ordinal, messages = cached
        after: dict[str, Any] | None = None  # the generation line after the one at hand
        for k, data in self._generations_back(later):
            gen = _generation_dict(data)
            if gen is None:
                return None
            if k == later:
                after = gen
                continue
            assert after is not None
            delta, size = _delta(after), _request_size(gen)
            if delta is None or size is None or delta["keep"] != size:
                return None
            if ordinal is not None and delta["base"] != ordinal - 1:
                return None
            ordinal, messages, after = delta["base"], messages[:size], gen
            if k == i:
                self._rebuilt = (i, ordinal, messages)
                return list(messages)
            if k < i:
                return None
        return None

    @property
    def start_time(self) -> float | None:
        if not self._start_known and len(self._ends):
            first = self.segment_starts[0] if self.segment_starts else 0
            item = self.item(first)
            self._start_time = event_time(item) if isinstance(item, Event) else None
            self._start_known = True
        return self._start_time

    # -- reading -------------------------------------------------------------------------------

    def _open(self) -> None:
        try:
            fd, st = _open_log(self.path)
        except _Unreadable as exc:
            raise OSError(f"{self.path}: {exc}") from None
        self._fd, self._inode = fd, st.st_ino
        self._index(0, st.st_size)

    def _reset_state(self) -> None:
        self._ends = array("q")
        self._cache.clear()
        self._rebuilt = None
        self.segment_starts = []
        self._start_time, self._start_known = None, False
        self.pending = 0

    def _end(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _index(self, start: int, end: int) -> int:
        """Index the whole lines in [start, end); returns how many were added."""
        before = len(self._ends)
        pos = start
        while pos < end:
            size = min(CHUNK, end - pos)
            while True:
                data = _pread(self._fd, size, pos)
                cut = data.rfind(b"\n")
                if cut >= 0 or pos + len(data) >= end or not data:
                    break
                size = min(size * 4, end - pos)
            if cut < 0:
                break
            body = data[: cut + 1]
            # Offsets by C-level iterators (no Python code per line): lengths + 1, summed
            # from `pos`, whose own first value is the previous end and skipped.
            lengths = map(len, body[:-1].split(b"\n"))
            ends = accumulate(map(add, lengths, repeat(1)), initial=pos)
            self._ends.extend(islice(ends, 1, None))
            if _RUN_START_AT.match(body):
                self.segment_starts.append(bisect.bisect_right(self._ends, pos))
            for m in _RUN_START_AFTER_NEWLINE.finditer(body):
                self.segment_starts.append(bisect.bisect_right(self._ends, pos + m.start() + 1))
            pos += cut + 1
        self.pending = max(0, end - pos)
        return len(self._ends) - before

    def _line(self, i: int) -> tuple[int, bytes]:
        start = self._ends[i - 1] if i else 0
        return start, _pread(self._fd, self._ends[i] - start, start)

    def _generations_back(self, i: int) -> Iterable[tuple[int, bytes]]:
        """(index, bytes) of generation lines from i back to the first, by blocks of lines."""
        ends = self._ends
        hi = i + 1  # lines [lo, hi) are read as one block
        while hi > 0:
            lo = hi - 1
            top = ends[hi - 1]
            while lo > 0 and top - ends[lo - 1] < CHUNK:
                lo -= 1
            base = ends[lo - 1] if lo else 0
            block = _pread(self._fd, top - base, base)
            for k in range(hi - 1, lo - 1, -1):
                start = (ends[k - 1] if k else 0) - base
                if k == i or _GENERATION_AT.match(block, start):
                    yield k, block[start : ends[k] - base]
            hi = lo


def _delta(gen: dict[str, Any] | None) -> dict[str, Any] | None:
    """A generation's compact delta when `LogDecoder` would apply it (base checked apart)."""
    if gen is None or _is_list_of_dicts(gen.get("messages")):
        return None  # a broken line, or a full generation (its messages win)
    delta = gen.get(DELTA_FIELD)
    ok = (
        isinstance(delta, dict)
        and isinstance(delta.get("base"), int)
        and isinstance(delta.get("keep"), int)
        and delta["keep"] >= 0
        and isinstance(delta.get("tail"), list)
        and all(isinstance(m, dict) for m in delta["tail"])
    )
    return delta if ok else None


def _request_size(gen: dict[str, Any]) -> int | None:
    """How many messages a generation's request holds, from its own line."""
    messages = gen.get("messages")
    if _is_list_of_dicts(messages):
        return len(messages)
    delta = _delta(gen)
    return delta["keep"] + len(delta["tail"]) if delta is not None else None


def _is_list_of_dicts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) for m in value)


def _generation_dict(line: bytes) -> dict[str, Any] | None:
    """The decoded line if it is a generation event, else None (torn, corrupt, other type)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("type") != GENERATION:
        return None
    return data
