"""The events of one run's log file, for the timeline: `RunLog`, the directory source's
`RunEvents`.

RunLog(path)                        a `LineLog` (agentor.sources.linelog: the index, lazy decoding,
                                    requests rebuilt) over a log file read by offset
    .poll() -> int                  read new bytes; returns how many new lines (events or
                                    bad lines) were added; re-reads a replaced or truncated
                                    file. Raises OSError when the file cannot be read.
    .reset_happened -> bool         the last poll() re-read the file from scratch
                                    (timeline reloads)
    .indexed_to -> int              where the whole lines indexed end (a byte offset)
    .search(...), .marks(...)       the lines a search matches, the error and tool call
                                    lines (`agentor.sources.logscan`), from their own descriptor:
                                    safe in a worker thread
    extras: .path, .pending (bytes of an unfinished last line), .close() (also a context
    manager). Keeps the file open; memory is 8 bytes a line plus the caches. Not thread-safe
    (UI thread only).

Torn lines (no newline yet) are never decoded: they wait for their newline, or for the engine's
repair (which truncates them) before its next append.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from agentor.sources.linelog import LineLog
from agentor.sources.logfile import _Unreadable, open_readonly, pread, whole_lines
from agentor.sources.logscan import file_chunks


class RunLog(LineLog):
    """The lines of one run log file, indexed by newline offsets, decoded only when asked for."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)
        self.pending = 0
        self._fd = -1
        self._inode = 0
        self._open()

    def _scan_chunks(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        return file_chunks(self.path, start, end)  # a descriptor of the scan's own

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> RunLog:
        return self

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

    # -- reading -------------------------------------------------------------------------------

    def _open(self) -> None:
        try:
            fd, st = open_readonly(self.path)
        except _Unreadable as exc:
            raise OSError(f"{self.path}: {exc}") from None
        self._fd, self._inode = fd, st.st_ino
        self._index(0, st.st_size)

    def _reset_state(self) -> None:
        super()._reset_state()
        self.pending = 0

    def _read(self, offset: int, size: int) -> bytes:
        return pread(self._fd, size, offset)

    def _index(self, start: int, end: int) -> int:
        """Index the whole lines in [start, end); returns how many were added."""
        before = len(self)
        for pos, body in whole_lines(self._fd, start, end):
            self._add_lines(pos, body)
        self.pending = max(0, end - self._end())  # `start` is where the lines indexed end
        return len(self) - before
