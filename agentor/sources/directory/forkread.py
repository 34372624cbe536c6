"""Reading many logs whole on two cores: a forked process (`start`, a `Worker`) reads part of
them (`shares`) while this one reads the rest, and hands its rows back (`finish`) as the run
index's columns (`runindex.columns_of`, `colstore.encoded`: what an index file's body holds,
newest first), which the source takes as it takes an index's rows (`runindex.take_fresh`,
`take_aside`): each row only while its file still has the key (device, inode, size, mtime) it
was read at, so that a row is the one a read here would make, field for field. What the worker
did not hand back (an entry it found unreadable or gone; every file, should it fail) is read
here.

Used by `DirectorySource.scan` for a reader that reads every file whole (`whole_at_scan`:
`agentor ls`) when many files must be read (`PARALLEL_FROM`) and a process can be forked
(`apart.forkable`: `os.fork` exists, no other thread runs, more than one CPU); otherwise every
file is read here, as before.

Cost model (100,000 files, 700 MB): reading and folding them ~4 s of one core; the worker
reads 45% of them (`WORKER_SHARE`), as it also encodes its rows (~0.4 s for 45,000: ~8 MB of
columns), which are decoded here a column at a time when asked; the fork itself a few
milliseconds (copy on write).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from agentor.sources.apart import Apart, fork_off, forkable
from agentor.sources.directory.colstore import Stored, encoded
from agentor.sources.directory.rowread import LogTail
from agentor.sources.directory.runindex import Loaded, columns_of, indexable, loaded_of
from agentor.sources.runrow import RunRow, newest_order

PARALLEL_FROM = 4000  # files to read whole from which a forked worker reads part of them
WORKER_SHARE = 0.45  # of the files: the worker also encodes its rows (~a fifth of reading them)

Entries = list[tuple[str, str]]  # (row id, path) of files to read
ReadInto = Callable[[Entries], tuple[list[tuple[RunRow, LogTail]], int, int]]


def can_fork(files: int) -> bool:
    """Whether reading `files` files whole is worth a worker, and one can be forked safely."""
    return files >= PARALLEL_FROM and forkable()


def shares(entries: Entries) -> tuple[Entries, Entries]:
    """The files the worker reads (`WORKER_SHARE` of them), and those read here."""
    cut = int(len(entries) * WORKER_SHARE)
    return entries[:cut], entries[cut:]


@dataclass
class Worker:
    """A forked process reading `entries`; its rows come back on the pipe `fd`."""

    pid: int
    fd: int
    entries: Entries


def start(entries: Entries, read: ReadInto) -> Worker | None:
    """Fork a worker that reads `entries` (`read` makes their rows and tails and says the bytes
    read and lines decoded) and writes them back as columns; None when it cannot be forked."""
    r, w = os.pipe()

    def work() -> None:
        os.close(r)
        _write_all(w, _payload(*read(entries)))

    pid = fork_off(work)
    if pid is None:
        os.close(r)
        os.close(w)
        return None
    os.close(w)
    return Worker(pid, r, entries)


def _payload(pairs: list[tuple[RunRow, LogTail]], bytes_read: int, lines: int) -> list[bytes]:
    """The rows read, as one header line (count, columns, byte order, counters) and the
    columns' bytes."""
    kept = [(r, t) for r, t in pairs if indexable(r, t)]
    keys, ids = [r.sort_key for r, _ in kept], [r.run_id for r, _ in kept]
    kept = list(map(kept.__getitem__, newest_order(keys, ids)))  # as an index holds them
    toc, body = encoded(columns_of(kept))
    header = {
        "rows": len(kept),
        "columns": toc,
        "byteorder": sys.byteorder,
        "bytes_read": bytes_read,
        "lines_decoded": lines,
    }
    return [json.dumps(header).encode() + b"\n", *body]


def _write_all(fd: int, pieces: list[bytes]) -> None:
    with open(fd, "wb", closefd=True) as f:
        f.writelines(pieces)


@dataclass
class Returned:
    """What a worker handed back: its rows (as an index holds them), and what reading cost."""

    loaded: Loaded
    bytes_read: int
    lines_decoded: int


def finish(worker: Worker) -> Returned | None:
    """Wait for the worker and take its rows; None when it failed (its files are to be read
    here)."""
    try:
        with open(worker.fd, "rb", closefd=True) as f:
            data = f.read()
    finally:
        done = Apart(worker.pid).wait()
    if not done:
        return None
    cut = data.find(b"\n")
    with contextlib.suppress(ValueError, TypeError, KeyError):  # _ShapeError: a ValueError
        header = json.loads(data[:cut])
        stored = Stored(memoryview(data)[cut + 1 :], header["columns"], header["byteorder"])
        loaded = loaded_of(stored, int(header["rows"]))
        return Returned(loaded, int(header["bytes_read"]), int(header["lines_decoded"]))
    return None
