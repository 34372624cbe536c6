"""`RunIndex`: the rows of a FileStore directory kept between starts, so that listing 100,000
runs reads no log whose file has not changed.

What it holds: each row read so far (`RunRow`, its summary, and the `LogTail` that says where
reading its file goes on), keyed by its file's identity as it was when read: device, inode,
size and mtime in nanoseconds (`LogTail.dev/inode/size/mtime_ns`). A row is taken from the
index only while its file still has that key (`take_fresh`); any other file is read as if
there were no index. Who holds a run is never stored: it is asked again (`rowread.settle`).

Where it lives: `DIR/.agentor-index/runs.json`, beside the logs but outside them (a hidden
directory: FileStore, `agentor` and the TUI list only `*.jsonl` names, and hidden ones never),
so it moves and is deleted with the directory, and everyone browsing the directory shares it.
Where DIR cannot be written (a read-only mount, another user's runs) it is
`$XDG_CACHE_HOME/agentor-tui/runs-<hash of DIR's real path>.json` (`~/.cache` by default).
Deleting it is always safe: the next start reads the logs and writes it again.

The file (format 2): one JSON header line (format, VERSION, the directory's device and inode, the
shape of `RunRow` and `LogTail` (`columns`), the row count, the body's length
and CRC-32, the byte order, and the table of columns: each one's name, how it is stored and its
length), then the body: the columns one after the other, each a piece of bytes
(`colstore`: numbers as doubles or 64-bit integers, strings as one JSON string,
few distinct ones as a palette, anything else as JSON). Written to a temporary file then renamed
over the old one (a reader sees the old index or the new, never half of one); not fsynced: a
file torn by a power cut fails its length or checksum and is rebuilt. An index that cannot be
read, is damaged or truncated, of another version (format 1, one JSON object of every column,
included) or another directory (copied in), or of a `RunRow` with other fields (a field added
since) is ignored (`problem` says why) and replaced at the next save; so is one whose columns a
reader finds of a wrong type (`take_fresh`, `take_aside` raise `_ShapeError`: the source reads
the logs instead).

Reading it (`load`) decodes the row ids and the files' keys at once, any other column when first
asked (`Loaded`): the TUI builds the rows of the files unchanged (`take_fresh`); a listing that
only prints them (`take_aside`) builds none but the few whose listing reads more (a run that may
wait for a person, one with no event yet) and takes the table it prints from the columns
(`Aside.table`, `runtable.RunTable`). Saving (`save`; `save_aside` for a listing: the aside
rows' columns cut and joined, no object built) writes the rows newest first (the list's order),
so that a listing that takes them in the index's order sorts them in one pass; a listing that
read its logs on two cores (`forkread`) writes the rows its worker read, newest first, then the
others, newest first (`Aside.apart`): two runs, which such a sort merges in one pass too.

Cost model (100,000 rows, ~22 MB): the header and the checksum ~10 ms, a column of numbers
~4 ms to decode, of strings ~10-20 ms; every file is checked against its key in C loops
(`unchanged`: a `map` of `os.lstat`, key tuples compared by `operator.eq`), ~2 µs a file, most
of it the system call; a listing's table ~50 ms; building every row (the TUI) ~0.4 s.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import zlib
from collections import deque
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from itertools import compress, repeat
from operator import and_, attrgetter, eq, is_not, not_, or_
from pathlib import Path
from typing import Any

from agentor.engine.statuses import INCOMPLETE, live_status
from agentor.sources.directory.colstore import Stored, encoded
from agentor.sources.directory.columns import (
    _ShapeError,
    as_lists,
    from_columns,
    shape,
    sub_columns,
    taken,
    to_columns,
    values,
)
from agentor.sources.directory.rowread import LogTail
from agentor.sources.logfile import gc_paused
from agentor.sources.runrow import RunRow, newest_order
from agentor.sources.runtable import WAITING, RunTable

VERSION = 2  # 1: one JSON object of columns (read no more: rebuilt)
FORMAT = "agentor-tui run index"
INDEX_DIR = ".agentor-index"
INDEX_FILE = "runs.json"
# Not stored: who held a run when it was saved says nothing of who holds it now.
ROW_TRANSIENT = ("held_since", "seen_free_at")
TAIL_GIVEN = ("path",)  # where the file is now, not where it was
SAVE_CHUNK = 2000  # rows encoded per hold of the source's lock (a few milliseconds)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agentor-tui"


@dataclasses.dataclass
class Loaded:
    """What an index holds, in its order (newest first, as saved): each row's id, its file's
    key as saved (dev, inode, size, mtime_ns), and the rows and their tails as the columns
    stored (`row_cols`, `tail_cols`), of which objects are built only when asked (`objects`):
    a listing that only prints rows needs none."""

    run_ids: list[str]
    keys: list[tuple[int, int, int, int]]
    row_cols: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    tail_cols: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    _values: dict[str, list[Any]] = dataclasses.field(default_factory=dict, repr=False)

    @property
    def count(self) -> int:
        return len(self.run_ids)

    def objects(self, at: list[int] | None = None) -> tuple[list[RunRow], list[LogTail]]:
        """The rows and tails at these positions (None: every one), built now, each tail's
        path "" (set where its file is found now). _ShapeError when the columns are damaged."""
        rows, tails, n = self.row_cols, self.tail_cols, self.count
        if n == 0 or at == []:
            return [], []
        if at is not None:
            rows, tails = taken(RunRow, rows, n, at), taken(LogTail, tails, n, at, TAIL_GIVEN)
            n = len(at)
        return (
            from_columns(RunRow, rows, n),
            from_columns(LogTail, tails, n, given={"path": [""] * n}),
        )

    def values(self, path: str) -> list[Any]:
        """One field of every row (`row.summary.agent`, `tail.size`), checked (once);
        _ShapeError. Not to be changed: the list is kept."""
        got = self._values.get(path)
        if not self.count:
            return []
        if got is None:
            kind, _, field = path.partition(".")
            cls, cols = (RunRow, self.row_cols) if kind == "row" else (LogTail, self.tail_cols)
            got = self._values[path] = values(cls, cols, self.count, field)
        return got


_FILE_KEY = attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns")
_KEY_FIELDS = ("dev", "inode", "size", "mtime_ns")  # a file's key, as its tail holds it


def fresh_at(loaded: Loaded, entries: list[tuple[str, str]]) -> tuple[list[int], list[str]]:
    """The positions in the index of the listed (row id, path) entries whose file is the one
    its row was read from, unchanged: the same device, inode, size and mtime (ns) as saved;
    and those files' paths. (100,000 files, an lstat each: in C loops, `unchanged`.)"""
    where = dict(entries)
    paths = list(map(where.get, loaded.run_ids))
    fresh = unchanged(paths, loaded.keys)
    return list(compress(range(loaded.count), fresh)), list(compress(paths, fresh))  # type: ignore[arg-type]


def take_fresh(
    loaded: Loaded,
    entries: list[tuple[str, str]],
    rows: dict[str, RunRow],
    tails: dict[str, LogTail],
) -> list[tuple[str, str]]:
    """Put into `rows` and `tails`, in the index's order, the known row of each listed (row id,
    path) whose file is unchanged since it was read (`fresh_at`), built now. Return the entries
    left to read. _ShapeError (nothing taken) when the index's columns are damaged."""
    at, paths = fresh_at(loaded, entries)
    _take(loaded, at, paths, rows, tails)
    if len(rows) == len(entries):
        return []
    return [entry for entry in entries if entry[0] not in rows]


def _take(
    loaded: Loaded,
    at: list[int],
    paths: list[str],
    rows: dict[str, RunRow],
    tails: dict[str, LogTail],
) -> None:
    """The rows at these positions of the index, built, into `rows` and `tails` (their files
    at `paths`)."""
    built, kept = loaded.objects(at)
    deque(map(setattr, kept, repeat("path"), paths), maxlen=0)
    ids = list(map(loaded.run_ids.__getitem__, at))
    rows.update(zip(ids, built, strict=True))
    tails.update(zip(ids, kept, strict=True))


@dataclasses.dataclass
class Aside:
    """The rows of an index whose files are unchanged and of which a listing needs no more than
    the index holds (`take_aside`), left as its columns: no object is built for them. `at`:
    their positions in the index (in its order); `paths`: their files; `held`: those of their
    runs a process holds now (their status says so); `taken`: the positions of the other
    unchanged rows, which were built (the source's rows)."""

    loaded: Loaded
    at: list[int]
    paths: list[str]
    held: set[str]
    taken: list[int]
    # Saved as they are, the source's rows after them (`RunIndex.save_aside`): two runs, each
    # newest first (rows a forked worker read, `forkread`), not merged into one.
    apart: bool = False
    _table: RunTable | None = dataclasses.field(default=None, repr=False)

    @property
    def count(self) -> int:
        return len(self.at)

    def table(self) -> RunTable:
        """The table of these rows, in the index's order (`runtable`): their columns cut, and
        checked. _ShapeError when a column is damaged."""
        if self._table is None:
            self._table = _table(self.loaded, self.at, self.held)
        return self._table

    def sort_keys(self) -> list[Any]:
        return _sort_keys(self.loaded, self.at)


def take_aside(
    loaded: Loaded,
    entries: list[tuple[str, str]],
    rows: dict[str, RunRow],
    tails: dict[str, LogTail],
    locked_among: Callable[[list[str]], set[str]],
) -> tuple[Aside, list[tuple[str, str]]]:
    """`take_fresh` for a listing that prints rows, and builds none it need not. An unchanged
    row is left `Aside` unless its listing reads more than the index holds: a run with no event
    yet (what it is depends on who holds it) or one whose calls may wait for a person
    (`RunTable.may_wait`: its log is read); those are built into `rows` and `tails`, as
    `take_fresh` builds them. Of the incomplete runs left aside, the store is asked which a
    process holds now (`locked_among`): `rowread.settle` would find them *running*, the others
    *interrupted* (the rest of such a row does not depend on its holder). Return the aside and
    the entries left to read. _ShapeError (nothing taken) when the index's columns are damaged."""
    at, paths = fresh_at(loaded, entries)
    events = _cut(loaded.values("row.summary.events"), at)
    statuses = _cut(loaded.values("row.summary.status"), at)
    asks = _cut(loaded.values("row.asks_approval"), at)
    build = list(map(and_, map(WAITING.__contains__, statuses), map(is_not, asks, repeat(False))))
    if 0 in events:
        build = list(map(or_, build, map(eq, events, repeat(0))))
    taken: list[int] = []
    if any(build):
        into = list(compress(range(len(at)), build))
        aside = list(compress(range(len(at)), map(not_, build)))
        taken = _cut(at, into)
        _take(loaded, taken, _cut(paths, into), rows, tails)
        at, paths, statuses = _cut(at, aside), _cut(paths, aside), _cut(statuses, aside)
    ids = _cut(loaded.run_ids, at)
    live = list(compress(ids, map(eq, statuses, repeat(INCOMPLETE))))
    left = Aside(loaded, at, paths, locked_among(live) if live else set(), taken)
    left.table()  # checked now: a damaged column is an index not used, before anything is shown
    if len(at) + len(rows) == len(entries):
        return left, []  # every file listed is one the index holds, unchanged
    fresh = set(ids) | rows.keys()
    return left, [entry for entry in entries if entry[0] not in fresh]


def listing_order(aside: Aside, rows: list[RunRow]) -> list[int]:
    """Where each row of [the aside's rows..., `rows`...] comes in the run list's order
    (`runrow.newest_order`); `rows`: the source's other rows in its order (those it took from
    the index, in the index's order, then those it read). Sorted from the order a source that
    built every row would hold them in (the index's, then the files read), so that rows that
    sort alike (a start that is no number) come as they would there."""
    k, t = aside.count, len(aside.taken)
    if t:
        where = aside.at + aside.taken
        seq = sorted(range(k + t), key=where.__getitem__)  # two ascending runs: one merge
        seq += range(k + t, k + len(rows))
    else:
        seq = list(range(k + len(rows)))
    keys = aside.sort_keys() + list(map(_SORT_KEY, rows))
    ids = _cut(aside.loaded.run_ids, aside.at) + list(map(_RUN_ID, rows))
    if t:
        keys, ids = list(map(keys.__getitem__, seq)), list(map(ids.__getitem__, seq))
    return list(map(seq.__getitem__, newest_order(keys, ids)))


_SORT_KEY, _RUN_ID = attrgetter("sort_key"), attrgetter("run_id")


def _keys_and_ids(pairs: list[tuple[RunRow, LogTail]]) -> tuple[list[Any], list[str]]:
    rows = [r for r, _ in pairs]
    return list(map(_SORT_KEY, rows)), list(map(_RUN_ID, rows))


def _cut(col: list[Any], at: list[int]) -> list[Any]:
    """The values at these positions (ascending): the column itself when every one is (not to
    be changed, as `Loaded.values`)."""
    return col if len(at) == len(col) else list(map(col.__getitem__, at))


def _table(loaded: Loaded, at: list[int], held: set[str]) -> RunTable:
    def col(path: str) -> list[Any]:
        return _cut(loaded.values(path), at)

    if not all(col("row.summary")):  # only rows read from a file are saved (`indexable`)
        raise _ShapeError("a row of the index has no summary")
    run_ids, summary_status = col("row.run_id"), col("row.summary.status")
    status = col("row.status")
    if INCOMPLETE in summary_status:  # as `rowread.settle` tells it now
        status = list(status)
        for i in compress(range(len(status)), map(eq, summary_status, repeat(INCOMPLETE))):
            status[i] = live_status(INCOMPLETE, run_ids[i] in held)
    errors = col("row.summary.error")
    if any(errors):  # the run's own error, else the row's reason
        errors = [s or r for s, r in zip(errors, col("row.error"), strict=True)]
    else:
        errors = col("row.error")
    asks = col("row.asks_approval")
    may_wait = list(
        map(and_, map(WAITING.__contains__, summary_status), map(is_not, asks, repeat(False)))
    )
    return RunTable(
        run_id=run_ids,
        status=status,
        agent=col("row.summary.agent"),
        model=col("row.summary.model"),
        started_at=col("row.summary.started_at"),
        last_event_at=col("row.summary.last_event_at"),
        turns=col("row.summary.turns"),
        tool_calls=col("row.summary.tool_calls"),
        total_tokens=col("row.summary.usage.total_tokens"),
        first_prompt=col("row.summary.first_prompt"),
        error=errors,
        sort_key=_sort_keys(loaded, at),
        may_wait=may_wait,
    )


def _sort_keys(loaded: Loaded, at: list[int]) -> list[Any]:
    """`RunRow.sort_key` of the rows at these positions, from their columns: when the fork was
    made, else when the run began, else when its log last changed."""
    forked = _cut(loaded.values("row.forked_at"), at)
    started = _cut(loaded.values("row.summary.started_at"), at)
    if forked.count(None) == len(forked) and None not in started:
        return started  # no fork, every run's start known: the common case, in C
    modified = _cut(loaded.values("row.modified_at"), at)
    return [
        f if f is not None else s if s is not None else m
        for f, s, m in zip(forked, started, modified, strict=True)
    ]


def unchanged(paths: list[str | None], keys: list[tuple[int, int, int, int]]) -> list[bool]:
    """Whether each file (None: not listed) has the key given (dev, inode, size, mtime_ns)."""
    try:
        # A None (a run not listed) raises TypeError here on purpose: caught below.
        return list(map(eq, map(_FILE_KEY, map(os.lstat, paths)), keys))  # type: ignore[arg-type]
    except (OSError, TypeError):  # a file gone since it was listed, a run not listed
        return list(map(eq, map(_key_of, paths), keys))


def _key_of(path: str | None) -> tuple[int, int, int, int] | None:
    try:
        return None if path is None else _FILE_KEY(os.lstat(path))
    except OSError:
        return None


def indexable(row: RunRow, tail: LogTail) -> bool:
    """Rows read from a file (not unreadable ones: those are asked again, cheaply)."""
    return row.summary is not None and tail.inode != 0 and tail.mtime_ns != 0


def columns_of(pairs: list[tuple[RunRow, LogTail]]) -> dict[str, list[Any]]:
    """Rows and their tails as columns (call it holding the lock their source changes them
    under, so that a row and its file's key are saved as one)."""
    cols = {"row." + k: v for k, v in to_columns(RunRow, [r for r, _ in pairs]).items()}
    for k, v in to_columns(LogTail, [t for _, t in pairs], skip=TAIL_GIVEN).items():
        cols["tail." + k] = v
    for name in ROW_TRANSIENT:
        cols["row." + name] = [None] * len(pairs)
    return cols


def _split(cols: Mapping[str, Any], prefix: str) -> Mapping[str, Any]:
    return sub_columns(cols, prefix)


def loaded_of(stored: Mapping[str, Any], count: int) -> Loaded:
    """The rows of these columns (`count` of them, as `columns_of` made them, stored): their ids
    and files' keys decoded now, the rest when asked. _ShapeError when those are damaged."""
    row_cols, tail_cols = _split(stored, "row."), _split(stored, "tail.")
    run_ids = values(RunRow, row_cols, count, "run_id")
    keys = [values(LogTail, tail_cols, count, name) for name in _KEY_FIELDS]
    return Loaded(run_ids, list(zip(*keys, strict=True)), row_cols, tail_cols)


class RunIndex:
    """The index file of one directory: `read()` at a scan, `write()` from a worker."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.problem: str | None = None  # why the last read found no usable index
        self.path: Path | None = None  # where it was last read from or written to

    def places(self) -> list[Path]:
        """Where the index may be, in the order they are tried."""
        real = os.path.realpath(self.directory).encode("utf-8", "surrogateescape")
        digest = hashlib.blake2b(real, digest_size=16).hexdigest()
        return [self.directory / INDEX_DIR / INDEX_FILE, cache_dir() / f"runs-{digest}.json"]

    # -- reading -------------------------------------------------------------------------------

    def read(self) -> dict[str, tuple[RunRow, LogTail]]:
        """{row id: (row, tail)} of the first usable index; {} (and `problem`) if none is."""
        loaded = self.load()
        rows, tails = loaded.objects()
        return dict(zip(loaded.run_ids, zip(rows, tails, strict=True), strict=True))

    def load(self) -> Loaded:
        """What the first usable index holds; nothing (and `problem`) if none is."""
        problems = []
        for place in self.places():
            try:
                found = self._read(place)
            except FileNotFoundError:
                continue
            except (OSError, ValueError, _ShapeError, UnicodeError, RecursionError) as exc:
                problems.append(f"{place}: {exc}")
                continue
            self.problem, self.path = None, place
            return found
        self.problem = "; ".join(problems) or "no index yet"
        return Loaded([], [])

    def _read(self, place: Path) -> Loaded:
        with open(place, "rb") as f:
            data = f.read()
        cut = data.find(b"\n")
        if cut < 0:
            raise ValueError("no header line")
        header = json.loads(data[:cut])
        body = memoryview(data)[cut + 1 :]
        count = self._check(header, body)
        # Each column is decoded when first asked (`colstore.Stored`): these, at once.
        return loaded_of(Stored(body, header.get("columns"), header.get("byteorder")), count)

    def _check(self, header: Any, body: memoryview) -> int:
        """The row count, once the header says this is our index, whole, for this directory."""
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise ValueError("not a run index")
        if header.get("version") != VERSION:
            raise ValueError(f"version {header.get('version')!r}, not {VERSION}")
        st = os.stat(self.directory)
        if header.get("directory") != [st.st_dev, st.st_ino]:
            raise ValueError("written for another directory")
        if header.get("shape") != self._shape():
            raise ValueError("written for rows of other fields")
        if header.get("bytes") != len(body):
            raise ValueError("truncated or extended")
        if header.get("crc32") != zlib.crc32(body):
            raise ValueError("damaged (checksum)")
        count = header.get("rows")
        if not isinstance(count, int) or count < 0:
            raise ValueError("no row count")
        return count

    @staticmethod
    def _shape() -> dict[str, Any]:
        return {"row": shape(RunRow), "tail": shape(LogTail)}

    # -- writing -------------------------------------------------------------------------------

    def save(
        self,
        pairs: list[tuple[RunRow, LogTail]],
        lock: AbstractContextManager[Any],
        current: Callable[[RunRow], bool],
    ) -> Path:
        """Write these rows (those still `current`), taking `lock` (the one their source
        changes them under) a chunk of rows at a time: a row and its file's key are saved as
        one, and the source never waits more than a few milliseconds."""
        with gc_paused():  # as the fill does: 100,000 rows would wake the collector often
            cols: dict[str, list[Any]] = columns_of([])
            count = 0
            for start in range(0, len(pairs), SAVE_CHUNK):
                with lock:
                    part = pairs[start : start + SAVE_CHUNK]
                    chunk = [(r, t) for r, t in part if indexable(r, t) and current(r)]
                    for key, col in columns_of(chunk).items():
                        cols[key].extend(col)
                count += len(chunk)
            return self.write(cols, count)

    def save_aside(self, aside: Aside, pairs: list[tuple[RunRow, LogTail]]) -> Path:
        """Write the rows an aside holds, as their columns (no object built), with these (the
        source's rows and tails, in its order: those it took from the index first), in the run
        list's order (`listing_order`); rows not read from a file are left out (`indexable`)."""
        with gc_paused():
            loaded, n = aside.loaded, aside.count
            row_cols, tail_cols = loaded.row_cols, loaded.tail_cols
            if n < loaded.count:  # else every row, in order: nothing to cut
                row_cols = taken(RunRow, row_cols, loaded.count, aside.at)
                tail_cols = taken(LogTail, tail_cols, loaded.count, aside.at, TAIL_GIVEN)
            rows = as_lists(RunRow, row_cols, n)
            tails = as_lists(LogTail, tail_cols, n, TAIL_GIVEN)
            cols = {"row." + k: v for k, v in rows.items()}
            cols.update(("tail." + k, v) for k, v in tails.items())
            if aside.apart:  # two runs as they are, the source's rows newest first
                pairs = [(r, t) for r, t in pairs if indexable(r, t)]
                pairs = list(map(pairs.__getitem__, newest_order(*_keys_and_ids(pairs))))
            for key, col in columns_of(pairs).items():
                cols[key] = cols[key] + col
            if aside.apart:
                return self.write(cols, n + len(pairs))
            order = listing_order(aside, [r for r, _ in pairs])
            at = [i for i in order if i < n or indexable(*pairs[i - n])]
            total = n + len(pairs)
            rows = as_lists(RunRow, taken(RunRow, _split(cols, "row."), total, at), len(at))
            tail_cols = taken(LogTail, _split(cols, "tail."), total, at, TAIL_GIVEN)
            tails = as_lists(LogTail, tail_cols, len(at), TAIL_GIVEN)
            out = {"row." + k: v for k, v in rows.items()}
            out.update(("tail." + k, v) for k, v in tails.items())
            return self.write(out, len(at))

    def write(self, cols: dict[str, list[Any]], count: int) -> Path:
        """Replace the index with these columns (of `count` rows): in the directory, else in
        the cache. OSError when neither can be written."""
        toc, body = encoded(cols)
        crc = 0
        for chunk in body:
            crc = zlib.crc32(chunk, crc)
        st = os.stat(self.directory)
        header = {
            "format": FORMAT,
            "version": VERSION,
            "directory": [st.st_dev, st.st_ino],
            "shape": self._shape(),
            "rows": count,
            "bytes": sum(map(len, body)),
            "crc32": crc,
            "byteorder": sys.byteorder,
            "columns": toc,
        }
        data = [json.dumps(header).encode() + b"\n", *body]
        error: OSError | None = None
        for place in self.places():
            try:
                place.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                _replace(place, data)
            except OSError as exc:
                error = error or exc
                continue
            self.path = place
            return place
        assert error is not None
        raise error


def _replace(place: Path, data: list[bytes]) -> None:
    """Write `data` (in pieces) to a temporary file beside `place` (mode 0600: rows hold prompts and
    answers), then rename it over `place`."""
    fd, tmp = tempfile.mkstemp(dir=place.parent, prefix=".runs-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.writelines(data)
        os.replace(tmp, place)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
