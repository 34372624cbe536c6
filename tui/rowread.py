"""Reading one run log into its `RunRow`: whole, quickly (head and tail), or only what was
appended since the last read. Never imports textual.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from agentor.engine.events import Event
from agentor.engine.logformat import BadLine
from agentor.engine.replay import RunSummary, fold

from .logfile import CHUNK, Unreadable, decode_for_summary, open_log, os_reason, pread
from .quickread import quick_read
from .runrow import UNREADABLE, RunRow, settle


class RowReader:
    """Reads logs into rows and counts what that costs (`bytes_read`, `lines_decoded`, for
    tests and benches). `locked(run_id)` tells running from interrupted runs."""

    def __init__(self, locked: Callable[[str], bool]) -> None:
        self.locked = locked
        self.bytes_read = 0
        self.lines_decoded = 0

    def load(self, row: RunRow, whole_under: int | None) -> None:
        """Read a new row's file from scratch: whole if smaller than `whole_under` bytes
        (None: always), else quickly (head and tail)."""
        try:
            fd, st = open_log(row.file)
        except FileNotFoundError:
            row.error, row.complete, row.status = "deleted", True, UNREADABLE
            return
        except Unreadable as exc:
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
            row.summary, row.error, row.complete = None, os_reason(exc), True
            row.status = UNREADABLE
            return
        finally:
            os.close(fd)
        settle(row, self.locked)

    def append(self, row: RunRow) -> int | None:
        """Read what was appended; None when the file must be read again from the start."""
        try:
            fd, st = open_log(row.file)
        except (OSError, Unreadable):
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
        settle(row, self.locked)
        return row.lineno - before

    def _consume(self, row: RunRow, fd: int, start: int, end: int) -> None:
        """Decode and fold the whole lines in [start, end); the offset moves past them."""
        assert row.summary is not None
        pos = start
        while pos < end:
            size = min(CHUNK, end - pos)
            while True:
                data = pread(fd, size, pos)
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
                item = decode_for_summary(line, pos, row.lineno - 1)
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
        """A summary from the first line and the last lines back to a segment boundary
        (`tui.quickread`). Returns whether that decoded every line of the file (then the
        summary is complete)."""
        assert row.summary is not None
        read = quick_read(fd, size)
        self.bytes_read += read.bytes_read
        self.lines_decoded += len(read.items)
        events = [x for x in read.items if isinstance(x, Event)]
        if len(events) < len(read.items):
            bad = [x for x in read.items if isinstance(x, BadLine)]
            row.summary.bad_lines += len(bad)
            row.first_bad = bad[0]
        row.offset = read.offset
        row.lineno = len(read.items) if read.every_line else 0
        fold(row.summary, events)
        return read.every_line
