"""The events of one run in a PostgresStore, for the timeline: `StoredLog`, the database
source's `RunEvents`.

StoredLog(store, run_id)            a `LineLog` (agentor.sources.linelog: the index, lazy decoding,
                                    requests rebuilt) over the run's lines as the store keeps
                                    them (`PostgresStore.read_lines`: each event as a FileStore
                                    writes it), held in memory
    .poll() -> int                  read the events after the last seq read (one query);
                                    how many new lines. OSError when the database cannot be
                                    read (its message names it without the password)
    .indexed_to -> int              where the lines read end, in their bytes (a scan of what
                                    the run gained starts here)
    .search(...), .marks(...)       as a log file's (`agentor.sources.logscan`), over the bytes in
                                    memory: safe in a worker thread while poll() appends
    extras: .seq (the last seq read). Memory: the run's lines, plus 8 bytes a line.

A run's events are never rewritten in the store (a seq, once written, keeps its line), so a
poll only ever appends and `reset_happened` stays False.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentor.errors import PostgresStoreError
from agentor.sources.linelog import LineLog
from agentor.sources.logfile import CHUNK

if TYPE_CHECKING:
    from agentor.engine.store.postgres import PostgresStore


class StoredLog(LineLog):
    """The lines of one run of a database, read as they are appended.

    KeyError (the engine's `RunNotFoundError`) for a run the store does not hold, OSError when
    the database cannot be read."""

    def __init__(self, store: PostgresStore, run_id: str) -> None:
        super().__init__()
        self.store = store
        self.run_id = run_id
        self.seq = 0
        self._bytes = bytearray()
        self._read_on()

    def poll(self) -> int:
        self.reset_happened = False
        try:
            return self._read_on()
        except KeyError:
            raise OSError(f"run {self.run_id} is no longer in {self.store.where}") from None

    def _read_on(self) -> int:
        try:
            lines = self.store.read_lines(self.run_id, self.seq)
        except PostgresStoreError as exc:
            raise OSError(str(exc)) from None
        if not lines:
            return 0
        # Every stored line ends with its newline (the store writes whole lines); one that
        # did not would join the next in the index.
        body = b"".join(line if line.endswith(b"\n") else line + b"\n" for _, line in lines)
        before, pos = len(self), len(self._bytes)
        self._bytes += body
        self.seq = lines[-1][0]
        self._add_lines(pos, body)
        return len(self) - before

    def _read(self, offset: int, size: int) -> bytes:
        return bytes(self._bytes[offset : offset + size])

    def _scan_chunks(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        # From the bytes in memory: `poll` only appends to them.
        data = self._bytes
        pos = start
        while pos < end:
            stop = end
            if pos + CHUNK < end:
                cut = data.rfind(b"\n", pos, pos + CHUNK)
                if cut < 0:  # a line longer than the chunk
                    cut = data.find(b"\n", pos + CHUNK, end)
                stop = cut + 1
            yield pos, bytes(data[pos:stop])
            pos = stop
