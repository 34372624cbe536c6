"""`agentor ls` lists from a table (`agentor.sources.runtable`): of a directory, the rows a fresh
run index holds are not built, their columns shown as stored (`runindex.take_aside`), and the
table is the one their rows make (`RunTable.of_rows`), in the same order; only the rows whose
listing reads more than the index holds (a run that may wait for a person, one with no event
yet) are built, and who holds an incomplete run is asked. The index (format 2,
`agentor.sources.directory.colstore`): every way a column is stored reads back as written; a
damaged, foreign or older index is ignored, the logs read, and the index written again."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.statuses import INTERRUPTED, RUNNING
from agentor.engine.store.file import FileStore
from agentor.sources.directory import colstore, columns, runindex
from agentor.sources.directory.rowread import LogTail
from agentor.sources.directory.source import DirectorySource
from agentor.sources.listing import list_rows, list_table
from agentor.sources.runrow import RunRow
from agentor.sources.runtable import FIELDS, RunTable
from tests.app_support import copy_fixtures, write_log
from tests.test_runs_index import engine_runs

T = 1796039000.5


def directory_of_every_kind(directory: Path) -> dict[str, str]:
    """Runs the engine wrote (every outcome), the upstream logs (a fork among them), a log with
    bad lines, a failed run with an error of its own, and an empty log."""
    ids = asyncio.run(engine_runs(directory))
    copy_fixtures(directory)
    bad = write_log(directory, "b" * 32, [{"type": "run_start", "agent": "A", "started_at": T}])
    with bad.open("ab") as f:
        f.write(b"{torn\n" + json.dumps({"type": "run_end", "status": "completed"}).encode())
        f.write(b"\n")
    write_log(directory, "c" * 32, [
        {"type": "run_start", "agent": "B", "started_at": T + 1},
        {"type": "run_end", "status": "failed", "error": "boom", "ended_at": T + 2},
    ])  # fmt: skip
    (directory / ("e" * 32 + ".jsonl")).write_bytes(b"")
    return ids


def of_rows(directory: Path) -> RunTable:
    """The listing with every row built and no index: what the table must be."""
    source = DirectorySource(directory)
    elsewhere = Path(tempfile.mkdtemp()) / "runs.json"  # none to read; saved there, unread
    source.index.places = lambda: [elsewhere]  # type: ignore[method-assign]
    return RunTable.of_rows(list_rows(source))


def listing(directory: Path) -> tuple[DirectorySource, RunTable]:
    source = DirectorySource(directory)
    return source, list_table(source)


def assert_same(got: RunTable, want: RunTable) -> None:
    assert got.run_id == want.run_id  # the same order
    for name in FIELDS:
        assert getattr(got, name) == getattr(want, name), name


def test_a_warm_table_is_the_table_of_the_rows_and_builds_only_rows_that_read_more(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    ids = directory_of_every_kind(runs)
    cold, table = listing(runs)
    assert cold.from_index == 0 and cold.index_stale is False  # read, and saved
    assert_same(table, of_rows(runs))

    warm, table = listing(runs)
    assert warm.bytes_read == 0 and warm.index.problem is None
    assert warm.from_index == len(table)
    assert warm.aside is not None and warm.aside.count > len(table) // 2
    built = {r.run_id for r in warm.rows()}
    assert built == {"e" * 32}  # the empty log (who holds it?): no run here waits for a person
    assert ids["interrupted"] not in built  # interrupted, held by no one: told from the index
    assert_same(table, of_rows(runs))

    with FileStore(runs).lock(ids["interrupted"]):  # a process holds it: running, not built
        held, table = listing(runs)
        assert held.bytes_read == 0 and ids["interrupted"] not in {r.run_id for r in held.rows()}
        assert table.status[table.run_id.index(ids["interrupted"])] == RUNNING
        assert_same(table, of_rows(runs))
    assert listing(runs)[1].status[table.run_id.index(ids["interrupted"])] == INTERRUPTED


def test_files_changed_gone_or_new_since_are_read_and_saved_with_the_rest(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    ids = directory_of_every_kind(runs)
    listing(runs)
    grown = runs / f"{ids['completed']}.jsonl"
    with grown.open("a") as f:
        f.write(json.dumps({"type": "message", "text": "later", "ts": T + 99}) + "\n")
    (runs / f"{ids['failed']}.jsonl").unlink()
    write_log(runs, "d" * 32, [{"type": "run_start", "agent": "N", "started_at": T + 50}])
    new = runs / ("d" * 32 + ".jsonl")

    source, table = listing(runs)
    assert source.bytes_read == grown.stat().st_size + new.stat().st_size + 0  # those alone
    assert ids["failed"] not in table.run_id and "d" * 32 in table.run_id
    assert_same(table, of_rows(runs))
    again, table = listing(runs)  # the index saved with them: nothing read again
    assert again.bytes_read == 0 and again.from_index == len(table)
    assert_same(table, of_rows(runs))
    saved = runindex.RunIndex(runs).load()
    assert saved.run_ids == table.run_id  # newest first, as listed


def stored_columns(directory: Path) -> tuple[dict[str, list[Any]], int]:
    """The index's columns, as lists (as `to_columns` makes them), and its row count."""
    loaded = runindex.RunIndex(directory).load()
    n = loaded.count
    cols = {"row." + k: v for k, v in columns.as_lists(RunRow, loaded.row_cols, n).items()}
    tails = columns.as_lists(LogTail, loaded.tail_cols, n, runindex.TAIL_GIVEN)
    cols.update(("tail." + k, v) for k, v in tails.items())
    return cols, n


@pytest.mark.parametrize("column", ["row.summary.turns", "row.status", "tail.size"])
def test_a_column_of_a_wrong_type_is_an_index_not_used_and_written_again(
    tmp_path: Path, column: str
) -> None:
    """Whole (its checksum right) but holding a value no row can: a listing and the TUI's scan
    say why, read the logs, and the next save writes a good index."""
    runs = tmp_path / "runs"
    directory_of_every_kind(runs)
    listing(runs)
    cols, n = stored_columns(runs)
    cols[column] = [str(v) if isinstance(v, int) else 7 for v in cols[column]]
    for lists in (True, False):
        runindex.RunIndex(runs).write(cols, n)
        source = DirectorySource(runs)
        if lists:
            table = list_table(source)
            assert_same(table, of_rows(runs))
        else:
            source.scan()
        assert "wrong type" in (source.index.problem or ""), source.index.problem
        assert source.from_index == 0 and source.bytes_read > 0
    listing(runs)  # the logs read, the index written again
    warm, table = listing(runs)
    assert warm.bytes_read == 0 and warm.index.problem is None
    assert_same(table, of_rows(runs))


def test_an_index_of_the_first_format_is_read_no_more_and_written_again(tmp_path: Path) -> None:
    """Format 1: one JSON object of every column, a BLAKE2b of it in the header."""
    runs = tmp_path / "runs"
    directory_of_every_kind(runs)
    listing(runs)
    cols, n = stored_columns(runs)
    body = json.dumps(cols, separators=(",", ":")).encode()
    st = os.stat(runs)
    header = {
        "format": runindex.FORMAT,
        "version": 1,
        "directory": [st.st_dev, st.st_ino],
        "shape": runindex.RunIndex._shape(),
        "rows": n,
        "bytes": len(body),
        "blake2b": hashlib.blake2b(body, digest_size=16).hexdigest(),
    }
    path = runs / runindex.INDEX_DIR / runindex.INDEX_FILE
    path.write_bytes(json.dumps(header).encode() + b"\n" + body)
    source, table = listing(runs)
    assert source.index.problem is not None and "version 1, not 2" in source.index.problem
    assert source.from_index == 0
    assert_same(table, of_rows(runs))
    assert json.loads(path.read_bytes().partition(b"\n")[0])["version"] == runindex.VERSION
    warm, again = listing(runs)
    assert warm.bytes_read == 0 and warm.from_index == n
    assert_same(again, table)


# -- the columns as bytes -------------------------------------------------------------------------

BIG = 2**64 + 3
COLUMNS: dict[str, list[Any]] = {
    "floats": [T, -0.0, 1e-300, math.inf, -math.inf, 2.5],
    "ints": [0, -1, 2**63 - 1, -(2**63), 7, 8],
    "past 64 bits": [BIG, 1, -BIG, 0, 2, 3],
    "one past 64 bits": [BIG] * 6,
    "one value": [None] * 6,
    "twin": [0, -1, 2**63 - 1, -(2**63), 7, 8],
    "not a twin": [False, True, 2**63 - 1, -(2**63), 7, 8],  # equal to `ints` as values
    "lines": ["a", "", "é \udcff", "\\n", "b", "c"],
    "a newline": ["a\nb", "c", "d", "e", "f", "g"],
    "mixed": [1, 2.5, "x", None, True, [1]],
    "bools": [True, False, True, True, False, False],
    "nan": [math.nan, 1.0, 2.0, 3.0, 4.0, 5.0],
    "none and floats": [None, T, None, T + 1, None, None],
}


def palette(distinct: int, rows: int) -> list[str | None]:
    return [None if i % 7 == 0 else f"v{i % distinct}" for i in range(rows)]


@pytest.mark.parametrize("order", ["native", "swapped"])
def test_every_way_a_column_is_stored_reads_back_as_written(order: str) -> None:
    cols = dict(COLUMNS)
    cols["palette B"] = palette(3, 40)  # few distinct values: a byte each
    wide = {"palette H": palette(1000, 8000), "palette q": palette(70_000, 280_000)}
    for name, col in [*cols.items(), *wide.items()]:
        toc, body = colstore.encoded({name: col, name + " again": list(col)})
        encodings = [encoding for _, encoding, _ in toc]
        byteorder = sys.byteorder
        if order == "swapped":
            body, byteorder = swapped(toc, body), "big" if sys.byteorder == "little" else "little"
        stored = colstore.Stored(b"".join(body), toc, byteorder)
        for key in (name, name + " again"):
            back = stored[key]
            if isinstance(back, columns.Repeated):
                back = back.sized(len(col))
            assert list(map(repr, back)) == list(map(repr, col)), (name, encodings)
            assert list(map(type, back)) == list(map(type, col)), (name, encodings)
        assert encodings[1] in ("same", "all", "all!"), encodings
        assert encodings[0] == EXPECTED_ENCODING.get(name, encodings[0]), (name, encodings)


EXPECTED_ENCODING = {
    "floats": "f64",
    "ints": "i64",
    "past 64 bits": "json!",
    "one past 64 bits": "all!",
    "one value": "all",
    "lines": "lines",
    "a newline": "json",
    "mixed": "json",
    "nan": "f64",
    "palette B": "palette",
    "palette H": "palette",
    "palette q": "palette",
}


def swapped(toc: list[list[Any]], body: list[bytes]) -> list[bytes]:
    """The body as a machine of the other byte order writes it: its binary numbers swapped."""
    joined, out, at = b"".join(body), [], 0
    for _, encoding, length in toc:
        piece = joined[at : at + length]
        at += length
        if encoding in ("f64", "i64"):
            values = array("d" if encoding == "f64" else "q", piece)
            values.byteswap()
            piece = values.tobytes()
        elif encoding == "palette":
            cut = piece.index(b"\n")
            codes = array(piece[cut + 1 : cut + 2].decode(), piece[cut + 2 :])
            codes.byteswap()
            piece = piece[: cut + 2] + codes.tobytes()
        out.append(piece)
    return out


@pytest.mark.parametrize(
    ("toc", "body", "why"),
    [
        ([["a", "i64", 9]], b"\x00" * 9, "multiple of item size"),
        ([["a", "f64", 8]], b"\x00" * 7, "do not fill"),
        ([["a", "gzip", 0]], b"", "damaged table entry"),
        ([["a", "json", 2], ["a", "json", 2]], b"[][]", "twice"),
        ([["a", "same", 3]], b'"a"', "before it"),
        ([["a", "palette", 6]], b'["x"]\n', "bad typecode"),
        ([["a", "palette", 8]], b'["x"]\nB\x01', "out of its palette"),
        ([["a", "lines", 2]], b"[]", "not a string"),
        ([["a", "json", 2]], b"{}", "not a list"),
        ("no table", b"", "no table"),
    ],
)
def test_a_damaged_body_is_refused(toc: Any, body: bytes, why: str) -> None:
    try:
        stored = colstore.Stored(body, toc, sys.byteorder)
        stored["a"]
    except (ValueError, KeyError) as exc:
        assert why in str(exc) or (why == "bad typecode" and "column 'a'" in str(exc)), exc
    else:
        raise AssertionError("read")
