"""Search every event of every run: prompts, tool arguments and results, answers, errors.

`search(store_or_dir, query)` yields one `Hit` per matching line: the run, the line of its log
(1-based; for a store without files, the event's number), where in the event the text is
(`field`, e.g. "result" or "messages[1].content"), and a one-line snippet around the match
with control characters made visible (agentor.literal).

What matches: the text of the event, as a person reads it: every string value, and the names
of keys below the top level (a tool argument's name), decoded from JSON (so "22°C" finds
"22\\u00b0C" as upstream writes it). The top-level keys (`result`, `error`, ...) and the
event's `type` are the log's schema, not text (`Hit.type` names it). Lines that are not
events (torn, corrupt, not an object with a `type`) are skipped. Case: `ignore_case=None` is
*smart case*: a query with no upper-case letter ignores case, one with any is matched exactly;
True or False decide.

Cost model (FileStore): a plain query is looked for in the raw bytes of each file first (C
speed, like grep), and only the lines holding it are decoded and checked. The raw bytes hold
the query when a JSON writer wrote its text as it is, which every writer does for printable
ASCII; so the longest run of such characters in the query (`"` and `\\` excepted: JSON escapes
them) is what is looked for; for a regex (`regex=True`, matched against each decoded string),
the longest run of plain characters every match holds. A query or regex without one decodes
every line: slower, not wrong. A log is read with one system
call up to 64 KiB and in pieces of whole lines beyond, so memory stays flat whatever its size.
From PARALLEL_FROM logs on, a second process (agentor.ops.search_scan, a script started in its
own interpreter) looks for the query in half of them meanwhile: a big directory is searched on
two cores, as fast as `grep -c` or faster (bench/search.py).
"""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from agentor.engine.store.api import DirectoryStore, SearchingStore, Store
from agentor.engine.store.matching import Hit, Matcher, event_hit, line_hit, matcher_for
from agentor.engine.store.run_ids import SUFFIX
from agentor.ops.search_scan import CHUNK, FIRST, READ_FLAGS, open_directory, run_files

# From this many run logs on (~50 MB), a second process scans half of them (a plain query only):
# below, its start (~30 ms) costs more than it saves.
PARALLEL_FROM = 5000


def search(
    source: Store | str | os.PathLike[str],
    query: str,
    *,
    regex: bool = False,
    ignore_case: bool | None = None,
) -> Iterator[Hit]:
    """Every line of every run whose text matches `query` (see the module), run by run in
    the order of their ids. `source` is a store or a FileStore directory (a store whose runs
    are log files, `DirectoryStore`, is searched as its directory). A bad query is a
    `ValueError` at once; a missing directory a `FileNotFoundError`."""
    matcher = matcher_for(query, regex, ignore_case)
    if isinstance(source, DirectoryStore):
        return _search_directory(source.directory, matcher)
    if isinstance(source, str | os.PathLike):
        directory = Path(os.path.realpath(source))
        if not directory.is_dir():
            raise FileNotFoundError(f"no runs directory at {source}")
        return _search_directory(directory, matcher)
    if isinstance(source, SearchingStore):
        return source.search(query, regex=regex, ignore_case=matcher.fold)
    return _search_store(source, matcher)


def _search_store(store: Store, matcher: Matcher) -> Iterator[Hit]:
    for run_id in sorted(store.list_runs()):
        try:
            events = store.load(run_id)
        except KeyError:
            continue  # removed since it was listed
        for number, event in enumerate(events, 1):
            hit = event_hit(run_id, number, event.to_dict(), matcher)
            if hit is not None:
                yield hit


# -- a FileStore directory -----------------------------------------------------------------------


def _search_directory(directory: Path, matcher: Matcher) -> Iterator[Hit]:
    try:
        dir_fd = open_directory(str(directory))
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise OSError(
                exc.errno,
                f"refusing to search {directory}: it is no longer a directory (a symlink or a "
                "file took its place)",
            ) from None
        raise
    helper: _Helper | None = None
    try:
        names = run_files(dir_fd)
        if matcher.needle is not None and len(names) >= PARALLEL_FROM:
            helper = _Helper.start(directory, names[len(names) // 2 :], matcher)
        mine = names if helper is None else names[: len(names) // 2]
        yield from _scan(dir_fd, mine, matcher)
        if helper is not None:
            found = helper.result()
            rest = names[len(names) // 2 :] if found is None else found
            yield from _scan(dir_fd, rest, matcher)
    finally:
        if helper is not None:
            helper.stop()
        os.close(dir_fd)


def _scan(dir_fd: int, names: list[str], matcher: Matcher) -> Iterator[Hit]:
    # The common case, a log that fits in FIRST bytes without a hit, is this loop and nothing
    # else (open, one read, close, one find): it is what keeps up with grep.
    needle, fold = matcher.needle, matcher.fold
    open_, read, close = os.open, os.read, os.close
    for name in names:
        try:
            fd = open_(name, READ_FLAGS, dir_fd=dir_fd)
        except OSError:
            continue  # removed since it was listed, a symlink, or not ours to read
        try:
            data = read(fd, FIRST)
        except OSError:
            continue  # not a file after all (a directory, a FIFO without a writer)
        finally:
            close(fd)
        if len(data) == FIRST:  # a longer log: read again, in pieces
            yield from _search_long(dir_fd, name, matcher)
            continue
        if needle is not None and needle not in (data.lower() if fold else data):
            continue
        yield from _search_piece(name[: -len(SUFFIX)], data, 0, matcher)


def _search_long(dir_fd: int, name: str, matcher: Matcher) -> Iterator[Hit]:
    """A log longer than FIRST bytes, read in pieces of whole lines (CHUNK bytes at a time), so
    memory stays flat whatever its size."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return  # a device planted under a run's name could be read forever
        run_id, lineno, rest, offset = name[: -len(SUFFIX)], 0, b"", 0
        while True:
            want = min(max(st.st_size - offset, 0) + 1, CHUNK)  # no bigger buffer than needed
            data = os.read(fd, want)
            offset += len(data)
            eof = len(data) < want  # a short read of a regular file: its end (for now)
            data = rest + data if rest else data
            cut = len(data) if eof else data.rfind(b"\n") + 1
            rest = data[cut:]
            if cut:
                piece = data if cut == len(data) else data[:cut]
                yield from _search_piece(run_id, piece, lineno, matcher)
                lineno += piece.count(b"\n") if not eof else 0
            if eof:
                return
    except OSError:
        return
    finally:
        os.close(fd)


class _Helper:
    """A second process scanning the names from `start` on (agentor.ops.search_scan) while this
    one scans the others: a big directory is searched on two cores."""

    def __init__(self, proc: subprocess.Popen[bytes], names: list[str]) -> None:
        self.proc = proc
        self.out = b""
        # A thread hands it its names and drains what it finds as it comes: neither side ever
        # waits on a full pipe while this process is busy with its own half.
        self.reader = threading.Thread(target=self._talk, args=(names,), daemon=True)
        self.reader.start()

    def _talk(self, names: list[str]) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write("\n".join(names).encode("utf-8", "surrogateescape"))
            self.proc.stdin.close()
        except OSError:
            return  # it died: `result` says so
        self.out = self.proc.stdout.read()

    @classmethod
    def start(cls, directory: Path, names: list[str], matcher: Matcher) -> _Helper | None:
        script = Path(__file__).with_name("search_scan.py")
        if not sys.executable or not script.is_file() or matcher.needle is None:
            return None
        fold = "1" if matcher.fold else "0"
        argv = [sys.executable, "-I", str(script), str(directory), matcher.needle.hex(), fold]
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError:
            return None  # no second process here: this one scans everything
        return cls(proc, names)

    def result(self) -> list[str] | None:
        """The names it found, or None if it failed (then this process scans its share)."""
        self.reader.join()
        if self.proc.wait() != 0:
            return None
        return [n for n in self.out.decode("utf-8", "surrogateescape").split("\n") if n]

    def stop(self) -> None:
        if self.proc.poll() is None:  # the search was given up before the end
            self.proc.kill()
        self.proc.wait()
        self.reader.join()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None and not pipe.closed:
                pipe.close()


def _search_piece(run_id: str, data: bytes, lineno: int, matcher: Matcher) -> Iterator[Hit]:
    """Hits in `data` (whole lines; `lineno` lines precede it in the file)."""
    if matcher.needle is None:
        for line in data.split(b"\n"):
            lineno += 1
            if line:
                hit = line_hit(run_id, lineno, line, matcher)
                if hit is not None:
                    yield hit
        return
    hay = data.lower() if matcher.fold else data
    counted = 0
    pos = hay.find(matcher.needle)
    while pos >= 0:
        start = hay.rfind(b"\n", 0, pos) + 1
        end = hay.find(b"\n", pos)
        end = len(hay) if end < 0 else end
        lineno += hay.count(b"\n", counted, start)
        counted = start
        hit = line_hit(run_id, lineno + 1, data[start:end], matcher)
        if hit is not None:
            yield hit
        pos = hay.find(matcher.needle, end)


# -- matching and snippets -----------------------------------------------------------------------
