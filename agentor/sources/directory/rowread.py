"""Reading one run log into its `RunRow`: whole, quickly (head and tail), or only what was
appended since the last read (`LogTail` says where that is).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, fields

from agentor.engine.events import APPROVAL_REQUEST, GENERATION, Event
from agentor.engine.history import RunSummary, fold
from agentor.engine.log.format import BadLine
from agentor.engine.statuses import INCOMPLETE, RUNNING, UNREADABLE, live_status
from agentor.engine.store.run_ids import RUN_ID_RULE, SUFFIX
from agentor.ops.pricing import RunCost
from agentor.sources.directory.linefold import fold_lines
from agentor.sources.directory.quickread import quick_read
from agentor.sources.lineage import note_fork
from agentor.sources.logfile import (
    _Unreadable,
    open_readonly,
    os_reason,
    whole_lines,
)
from agentor.sources.rowcost import Gen, price_folded
from agentor.sources.runrow import RunRow, note_holder


@dataclass(slots=True, eq=False)
class LogTail:
    """Where reading a run's log goes on: its file, the size, inode, device and mtime last seen
    (`agentor.sources.directory.runindex` keys its rows by them), the end of the
    last whole line read, the line number there, and the first bad line met (for the row's
    `error`). The directory source keeps one beside each row."""

    path: str
    size: int = 0
    inode: int = 0
    dev: int = 0
    mtime_ns: int = 0  # with dev, inode and size: the file's key in the run index
    offset: int = 0
    lineno: int = 0
    first_bad: BadLine | None = None
    model: str | None = None  # the last segment's model, for pricing appended generations


# What a tail read again takes over from the scratch tail it was read into.
TAIL_FIELDS = tuple(f.name for f in fields(LogTail) if f.name != "path")


class RowReader:
    """Reads logs into rows and counts what that costs (`bytes_read`, `lines_decoded`, for
    tests and benches). `locked(run_id)` tells running from interrupted runs."""

    def __init__(self, locked: Callable[[str], bool], clock: Callable[[], float]) -> None:
        self.locked = locked
        self.clock = clock
        self.bytes_read = 0
        self.lines_decoded = 0

    def load(
        self, row: RunRow, tail: LogTail, whole_under: int | None, priced: bool = False
    ) -> None:
        """Read a new row's file from scratch: whole if smaller than `whole_under` bytes
        (None: always), else quickly (head and tail); `priced`: a row read whole gets its
        cost too (`agentor.sources.rowcost`)."""
        try:
            fd, st = open_readonly(tail.path)
        except FileNotFoundError:
            row.error, row.complete, row.status = "deleted", True, UNREADABLE
            return
        except _Unreadable as exc:
            row.error, row.complete, row.status = str(exc), True, UNREADABLE
            return
        try:
            tail.inode, tail.size, row.modified_at = st.st_ino, st.st_size, st.st_mtime
            tail.dev, tail.mtime_ns = st.st_dev, st.st_mtime_ns
            row.summary = RunSummary(run_id=row.run_id)
            if whole_under is None or st.st_size <= whole_under:
                row.cost = RunCost() if priced else None
                row.asks_approval = False  # every line is read: known
                self._consume(row, tail, fd, 0, st.st_size)
                row.complete = True
            else:
                row.complete = self._quick(row, tail, fd, st.st_size)
        except OSError as exc:
            row.summary, row.error, row.complete = None, os_reason(exc), True
            row.status = UNREADABLE
            return
        finally:
            os.close(fd)
        settle(row, tail, self.locked, self.clock)

    def append(self, row: RunRow, tail: LogTail) -> int | None:
        """Read what was appended; None when the file must be read again from the start."""
        try:
            fd, st = open_readonly(tail.path)
        except (OSError, _Unreadable):
            return None
        try:
            if st.st_ino != tail.inode or st.st_size < tail.offset:
                return None
            if tail.offset:
                # The byte before our offset must still end a line, or the file was rewritten.
                self.bytes_read += 1
                if os.pread(fd, 1, tail.offset - 1) != b"\n":
                    return None
            tail.size, row.modified_at = st.st_size, st.st_mtime
            tail.dev, tail.mtime_ns = st.st_dev, st.st_mtime_ns
            before = tail.lineno
            self._consume(row, tail, fd, tail.offset, st.st_size)
        except OSError:
            return None
        finally:
            os.close(fd)
        settle(row, tail, self.locked, self.clock)
        return tail.lineno - before

    def _consume(self, row: RunRow, tail: LogTail, fd: int, start: int, end: int) -> None:
        """Decode and fold the whole lines in [start, end); the offset moves past them. Most
        lines are folded without an event (`linefold`), the same summary; a row priced gets
        what pricing reads of them too, the same cost (`rowcost.price_folded`)."""
        assert row.summary is not None
        for pos, body in whole_lines(fd, start, end, self._count):
            lines = body[:-1].split(b"\n")
            priced: list[Event | Gen] | None = None if row.cost is None else []
            items, row.asks_approval = fold_lines(
                row.summary, lines, pos, tail.lineno, row.asks_approval, priced
            )
            tail.lineno += len(lines)
            events = self._take(row, tail, items)
            self.lines_decoded += len(lines) - len(items) + len(events)
            note_fork(row, events)
            if row.cost is not None and priced is not None:
                row.cost, tail.model = price_folded(row.cost, priced, tail.model)
            tail.offset = pos + len(body)

    @staticmethod
    def _take(row: RunRow, tail: LogTail, items: list[Event | BadLine]) -> list[Event]:
        """The events among decoded lines; the bad ones counted (the first kept)."""
        events = [x for x in items if isinstance(x, Event)]
        if len(events) < len(items):
            assert row.summary is not None
            bad = [x for x in items if isinstance(x, BadLine)]
            row.summary.bad_lines += len(bad)
            tail.first_bad = tail.first_bad or bad[0]
        return events

    def _count(self, size: int) -> None:
        self.bytes_read += size

    def _quick(self, row: RunRow, tail: LogTail, fd: int, size: int) -> bool:
        """A summary from the first line and the last lines back to a segment boundary
        (`quickread`). Returns whether that decoded every line of the file (then the summary is
        complete)."""
        assert row.summary is not None
        read = quick_read(fd, size)
        self.bytes_read += read.bytes_read
        self.lines_decoded += len(read.items)
        events = [x for x in read.items if isinstance(x, Event)]
        if len(events) < len(read.items):
            bad = [x for x in read.items if isinstance(x, BadLine)]
            row.summary.bad_lines += len(bad)
            tail.first_bad = bad[0]
        tail.offset = read.offset
        tail.lineno = len(read.items) if read.every_line else 0
        fold(row.summary, events)
        note_fork(row, events)
        if read.every_line:  # else the lines between are not known: asking stays unknown
            row.asks_approval = False
            note_asking(row, events)
        return read.every_line


def note_asking(row: RunRow, events: list[Event]) -> None:
    """Follow `row.asks_approval` through `events` (folded in order): a generation starts a
    turn that has asked nothing yet, an approval request asks. Unknown (None) stays unknown
    until a generation is read."""
    for e in events:
        if e.type == GENERATION:
            row.asks_approval = False
        elif e.type == APPROVAL_REQUEST:
            row.asks_approval = True


def settle(
    row: RunRow, tail: LogTail, locked: Callable[[str], bool], clock: Callable[[], float]
) -> None:
    """The row's status and error from its summary, plus the lock for incomplete runs.

    `locked(run_id)` asks the store whether a live process holds the run; `held_since` is kept
    as `runrow.note_holder` says.
    """
    before = row.status
    _settle(row, tail, locked)
    note_holder(row, before, clock())


def _settle(row: RunRow, tail: LogTail, locked: Callable[[str], bool]) -> None:
    s = row.summary
    if s is None:
        row.status = UNREADABLE
        return
    bad = None
    if s.bad_lines and tail.first_bad is not None:
        n, fb = s.bad_lines, tail.first_bad
        bad = f"{n} bad line{'s' if n != 1 else ''}; first at byte {fb.offset}: {fb.reason}"
    if s.events == 0:
        if bad:
            row.status, row.error = UNREADABLE, "no events: " + bad
            return
        row.status = live_status(s.status, locked(row.run_id), empty=True)
        if row.status == RUNNING:
            row.error = None  # created by a starting run
        else:
            row.error = "empty file" if tail.size == 0 else "no complete line"
        return
    row.error = bad
    # The lock is probed for an incomplete run only: no other status depends on it.
    row.status = live_status(s.status, s.status == INCOMPLETE and locked(row.run_id))


def bad_name(row: RunRow, tail: LogTail) -> None:
    """A `*.jsonl` file whose name is no run id: the engine can neither load nor resume it,
    so it is not read; its row says why (`row.run_id` is the whole file name)."""
    stem = row.run_id[: -len(SUFFIX)]
    row.status, row.complete = UNREADABLE, True
    row.error = f"not a valid run id: {stem!r} ({RUN_ID_RULE})"
    with contextlib.suppress(OSError):
        st = os.lstat(tail.path)
        row.modified_at, tail.size = st.st_mtime, st.st_size
