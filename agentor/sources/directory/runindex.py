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

The file: one JSON header line (format, VERSION, the directory's device and inode, the shape of
`RunRow` and `LogTail` (`columns`), the row count, the body's length and BLAKE2b),
then the rows as columns of JSON values. Written to a temporary file then renamed over the old
one (a reader sees the old index or the new, never half of one); not fsynced: a file torn by a
power cut fails its checksum and is rebuilt. An index that cannot be read, is damaged or
truncated, of another version or another directory (copied in), or of a `RunRow` with other
fields (a field added since) is ignored (`problem` says why) and replaced at the next save.

Cost model (100,000 rows, ~17 MB): the body is parsed by orjson (stdlib `json` when orjson
refuses a value it wrote, such as NaN), each column's types checked in C, objects built
positionally; writing is stdlib `json`, exact for every value a row may hold. Rows are saved
newest first (the list's order), so a listing that takes them in the index's order sorts them
in one pass; every file is checked against its key in C loops (`unchanged`: a `map` of
`os.lstat`, key tuples compared by `operator.eq`), ~2 µs a file, most of it the system call.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from itertools import compress, repeat
from operator import attrgetter, eq
from pathlib import Path
from typing import Any

import orjson

from agentor.sources.directory.columns import (
    Column,
    Repeated,
    _ShapeError,
    from_columns,
    shape,
    to_columns,
)
from agentor.sources.directory.rowread import LogTail
from agentor.sources.logfile import gc_paused
from agentor.sources.runrow import RunRow

VERSION = 1
FORMAT = "agentor-tui run index"
INDEX_DIR = ".agentor-index"
INDEX_FILE = "runs.json"
# Not stored: who held a run when it was saved says nothing of who holds it now.
ROW_TRANSIENT = ("held_since", "seen_free_at")
TAIL_GIVEN = ("path",)  # where the file is now, not where it was
SAVE_CHUNK = 2000  # rows encoded per hold of the source's lock (a few milliseconds)
DUMP_SLICE = 5000  # values of a column encoded per call (the GIL held a few milliseconds)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "agentor-tui"


@dataclasses.dataclass
class Loaded:
    """What an index holds, in its order (newest first, as saved): each row's id, the row, its
    tail (path "" until its file is found) and its file's key as saved (dev, inode, size,
    mtime_ns)."""

    run_ids: list[str]
    rows: list[RunRow]
    tails: list[LogTail]
    keys: list[tuple[int, int, int, int]]


_FILE_KEY = attrgetter("st_dev", "st_ino", "st_size", "st_mtime_ns")
_TAIL_KEY = attrgetter("dev", "inode", "size", "mtime_ns")


def take_fresh(
    loaded: Loaded,
    entries: list[tuple[str, str]],
    rows: dict[str, RunRow],
    tails: dict[str, LogTail],
) -> list[tuple[str, str]]:
    """Put into `rows` and `tails`, in the index's order, the known row of each listed (row id,
    path) whose file is the one it was read from, unchanged: the same device, inode, size and
    mtime (ns) as its tail's. Return the entries left to read. (100,000 files, an lstat each:
    in C loops, `unchanged`.)"""
    where = dict(entries)
    paths = list(map(where.get, loaded.run_ids))
    fresh = unchanged(paths, loaded.keys)
    ids = list(compress(loaded.run_ids, fresh))
    kept = list(compress(loaded.tails, fresh))
    deque(map(setattr, kept, repeat("path"), compress(paths, fresh)), maxlen=0)
    rows.update(zip(ids, compress(loaded.rows, fresh), strict=True))
    tails.update(zip(ids, kept, strict=True))
    if len(rows) == len(entries):
        return []
    return [entry for entry in entries if entry[0] not in rows]


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


def packed(cols: dict[str, list[Any]]) -> dict[str, Any]:
    """Columns as stored: one holding a single value as `{"all": value}`, one of few distinct
    strings as `{"palette": [...], "codes": [...]}`, one equal to a column before it as
    `{"same": name}`, any other as its list. Parsing 100,000 `null`s or repeated strings costs
    more than the rest of a row; these cost next to nothing, and share their values. (No
    object is made per value: a save of 100,000 rows must not wake the collector.)"""
    out: dict[str, Any] = {}
    kinds = {name: list(map(type, col)) for name, col in cols.items()}
    for name, col in cols.items():
        twin = next((t for t in out if cols[t] == col and kinds[t] == kinds[name]), None)
        out[name] = {"same": twin} if twin is not None else _pack(col, set(kinds[name]))
    return out


def _pack(col: list[Any], types: set[type]) -> Any:
    if len(types) == 1 and len(col) > 1 and col.count(col[0]) == len(col):
        return {"all": col[0]}  # one type: equal values are the same value
    if str in types and types <= {str, type(None)}:
        distinct = dict.fromkeys(col)
        if len(distinct) <= len(col) // 4:
            code = {value: i for i, value in enumerate(distinct)}
            return {"palette": list(distinct), "codes": list(map(code.__getitem__, col))}
    return col


def unpacked(stored: Any) -> dict[str, list[Any] | Repeated]:
    """The columns `packed` stored, as lists (a column of one value as `Repeated`: only its
    reader knows its length, `from_columns`); ValueError if damaged."""
    if not isinstance(stored, dict):
        raise ValueError("the body is not an object")
    cols: dict[str, list[Any] | Repeated] = {}
    for name, col in stored.items():
        if isinstance(col, dict) and "same" in col and col["same"] in cols:
            col = cols[col["same"]]
        elif isinstance(col, dict) and "all" in col:
            col = Repeated(col["all"])  # as long as its reader needs: a nested column is shorter
        elif isinstance(col, dict) and isinstance(col.get("palette"), list):
            codes = col.get("codes")
            if not isinstance(codes, list) or not set(map(type, codes)) <= {int}:
                raise ValueError(f"column {name!r}: damaged codes")
            try:
                palette = col["palette"]
                col = Column(list(map(palette.__getitem__, codes)), set(map(type, palette)))
            except IndexError:
                raise ValueError(f"column {name!r}: a code out of its palette") from None
        elif not isinstance(col, list):
            raise ValueError(f"column {name!r}: not a column")
        cols[name] = col
    return cols


def _split(cols: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix) :]: v for k, v in cols.items() if k.startswith(prefix)}


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
        return dict(zip(loaded.run_ids, zip(loaded.rows, loaded.tails, strict=True), strict=True))

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
        return Loaded([], [], [], [])

    def _read(self, place: Path) -> Loaded:
        with open(place, "rb") as f:
            data = f.read()
        cut = data.find(b"\n")
        if cut < 0:
            raise ValueError("no header line")
        header = json.loads(data[:cut])
        body = memoryview(data)[cut + 1 :]
        count = self._check(header, body)
        try:
            cols = orjson.loads(body)
        except orjson.JSONDecodeError:
            cols = json.loads(bytes(body))  # NaN, huge integers: what only `json` reads
        cols = unpacked(cols)
        rows = from_columns(RunRow, _split(cols, "row."), count)
        # Each tail's path is set where its file is found now (`take_fresh`).
        tails = from_columns(LogTail, _split(cols, "tail."), count, given={"path": [""] * count})
        run_ids = list(map(attrgetter("run_id"), rows))
        return Loaded(run_ids, rows, tails, list(map(_TAIL_KEY, tails)))

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
        if header.get("blake2b") != hashlib.blake2b(body, digest_size=16).hexdigest():
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

    def write(self, cols: dict[str, list[Any]], count: int) -> Path:
        """Replace the index with these columns (of `count` rows): in the directory, else in
        the cache. OSError when neither can be written."""
        body = _dumps(packed(cols))
        digest = hashlib.blake2b(digest_size=16)
        for chunk in body:
            digest.update(chunk)  # without the GIL: a chunk is large
        st = os.stat(self.directory)
        header = {
            "format": FORMAT,
            "version": VERSION,
            "directory": [st.st_dev, st.st_ino],
            "shape": self._shape(),
            "rows": count,
            "bytes": sum(map(len, body)),
            "blake2b": digest.hexdigest(),
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


def _dumps(cols: dict[str, Any]) -> list[bytes]:
    """`json.dumps` of the columns, in pieces (written one after the other), DUMP_SLICE values
    per call: the encoder holds the GIL while it runs, and one call over 100,000 values, or one
    copy of the whole, would stop the screen's thread for a while."""
    out = [b"{"]
    for name, col in cols.items():
        if isinstance(col, list):
            pieces = (_json(col[i : i + DUMP_SLICE])[1:-1] for i in range(0, len(col), DUMP_SLICE))
            text = "[" + ",".join(pieces) + "]"
        else:
            text = _json(col)
        out += [_json(name).encode(), b":", text.encode(), b","]
    if len(out) > 1:
        out[-1] = b"}"  # in place of the last comma
    else:
        out.append(b"}")
    return out


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


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
