"""The run index (`agentor.sources.directory.runindex`): a directory listed again takes the rows
of unchanged files from the index and reads no log; anything stale, damaged, foreign or of other
fields is ignored and rebuilt, and a changed file is read again.

Real runs written by the real engine (`tests.test_runs_index.engine_runs`); every row is
compared with what a fresh read of the directory gives.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import os
import shutil
import sys
from pathlib import Path

import pytest

from agentor.engine.store.file import FileStore
from agentor.ops.run_search import search
from agentor.sources.directory import runindex
from agentor.sources.directory import source as directory_source
from agentor.sources.directory.rowread import TAIL_FIELDS
from agentor.sources.directory.source import DirectorySource
from agentor.sources.runrow import ROW_FIELDS, RunRow
from tests.test_runs_index import EXPECTED, calls, engine_runs, text
from tests.test_runs_index import agent as weather_agent


def fresh_read(directory: Path) -> DirectorySource:
    """The directory read from its logs alone (no index is looked at), every row read whole
    and priced (`fill`), as the rows an index is saved from are once the app has filled them."""
    source = DirectorySource(directory)
    source.index.places = lambda: []  # type: ignore[method-assign]
    source.scan()
    assert source.from_index == 0
    source.fill()
    return source


def saved(directory: Path, fill: bool = True) -> DirectorySource:
    source = DirectorySource(directory)
    source.scan()
    if fill:
        source.fill()
    source.save_index()
    return source


def listed(directory: Path) -> DirectorySource:
    source = DirectorySource(directory)
    source.scan()
    return source


def assert_same_rows(got: DirectorySource, want: DirectorySource) -> None:
    got.fill()  # rows read again since (changed files) are read whole and priced too
    assert [r.run_id for r in got.rows()] == [r.run_id for r in want.rows()]
    for row in want.rows():
        other = got.get(row.run_id)
        assert other is not None
        for name in ROW_FIELDS:
            if name == "seen_free_at":
                continue  # when this read saw the run free: now, for either
            assert getattr(other, name) == getattr(row, name), (row.run_id, name)
        tail, other_tail = want._tails[row.run_id], got._tails[row.run_id]
        for name in (*TAIL_FIELDS, "path"):
            assert getattr(other_tail, name) == getattr(tail, name), (row.run_id, name)


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    directory = tmp_path / "runs"
    ids = asyncio.run(engine_runs(directory))
    return directory, ids


def index_file(directory: Path) -> Path:
    return directory / runindex.INDEX_DIR / runindex.INDEX_FILE


# -- a warm start ---------------------------------------------------------------------------------


def test_a_warm_listing_reads_no_log_and_gives_the_rows_a_fresh_read_gives(runs) -> None:
    directory, ids = runs
    saved(directory)
    warm = listed(directory)
    assert warm.index.problem is None and warm.index.path == index_file(directory)
    assert warm.from_index == len(ids) and not warm.index_stale
    assert (warm.bytes_read, warm.lines_decoded) == (0, 0)
    assert {n: warm.get(r).status for n, r in ids.items()} == EXPECTED  # type: ignore[union-attr]
    assert warm.fill() == []  # rows came complete and priced: nothing to read
    assert all(row.cost is not None for row in warm.rows())
    assert_same_rows(warm, fresh_read(directory))


def test_quick_rows_from_the_index_are_filled_where_their_read_stopped(runs, monkeypatch) -> None:
    directory, _ = runs
    monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 0)  # quick rows, as at 10,000
    saved(directory, fill=False)
    warm = listed(directory)
    assert warm.bytes_read == 0 and warm.incomplete > 0
    warm.fill()
    filled = fresh_read(directory)
    filled.fill()
    assert_same_rows(warm, filled)


def test_the_index_lives_in_a_hidden_directory_that_no_reader_lists(runs) -> None:
    directory, ids = runs
    saved(directory)
    assert sorted(os.listdir(directory / runindex.INDEX_DIR)) == [runindex.INDEX_FILE]
    assert index_file(directory).stat().st_mode & 0o777 == 0o600  # rows hold prompts
    assert sorted(FileStore(directory).list_runs()) == sorted(ids.values())
    assert {r.run_id for r in listed(directory).rows()} == set(ids.values())
    # The index holds the prompts too; `agentor search` finds them in the logs alone.
    assert b"Paris and Oslo?" in index_file(directory).read_bytes()
    hits = list(search(directory, "Paris and Oslo?"))
    assert hits and {h.run_id for h in hits} == {ids["parallel"]}


# -- stale, damaged, foreign ----------------------------------------------------------------------


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif how == "truncated":
        path.write_bytes(data[: len(data) * 2 // 3])
    elif how == "flipped":  # one byte of the body: the header still parses
        at = len(data) - 10
        path.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    elif how == "version":
        head, _, body = data.partition(b"\n")
        header = json.loads(head)
        header["version"] = runindex.VERSION + 1
        path.write_bytes(json.dumps(header).encode() + b"\n" + body)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "directory":
        path.unlink()
        path.mkdir()


@pytest.mark.parametrize(
    ("how", "why"),
    [
        ("garbage", ""),
        ("truncated", "truncated"),
        ("flipped", "checksum"),
        ("version", "version"),
        ("empty", "no header"),
        ("directory", "directory"),
    ],
)
def test_a_damaged_index_is_ignored_and_rebuilt(runs, how: str, why: str) -> None:
    directory, ids = runs
    saved(directory)
    damage(index_file(directory), how)
    source = listed(directory)
    assert source.from_index == 0 and source.index_stale
    assert why in (source.index.problem or "")
    assert_same_rows(source, fresh_read(directory))
    if how == "directory":
        shutil.rmtree(index_file(directory))
    source.save_index()
    again = listed(directory)
    assert again.from_index == len(ids) and again.bytes_read == 0


def test_a_changed_file_is_read_again_and_the_rest_comes_from_the_index(runs) -> None:
    directory, ids = runs
    saved(directory)
    run_id = ids["interrupted"]
    asyncio.run(weather_agent(FileStore(directory), text("Oslo is sunny.")).aresume(run_id))
    source = listed(directory)
    assert source.from_index == len(ids) - 1 and source.index_stale
    assert source.bytes_read > 0
    assert source.get(run_id).status == "completed"  # type: ignore[union-attr]
    assert_same_rows(source, fresh_read(directory))


def test_a_file_replaced_under_the_same_name_is_read_again(runs) -> None:
    directory, ids = runs
    saved(directory)
    # A copy with one byte changed renamed over it: same name, size and mtime, a new inode.
    failed = ids["failed"]
    path = directory / f"{failed}.jsonl"
    before = path.stat()
    tmp = directory / "swap.tmp"
    tmp.write_bytes(path.read_bytes().replace(b"HTTP 500", b"HTTP 502"))
    os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(tmp, path)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ino != before.st_ino
    source = listed(directory)
    assert source.from_index == len(ids) - 1
    assert "HTTP 502" in (source.get(failed).summary.error or "")  # type: ignore[union-attr]
    assert_same_rows(source, fresh_read(directory))


def test_a_deleted_run_is_not_listed_and_a_new_one_is_read(runs) -> None:
    directory, ids = runs
    saved(directory)
    (directory / f"{ids['failed']}.jsonl").unlink()
    result = asyncio.run(weather_agent(FileStore(directory), text("Hi.")).arun("Hello?"))
    source = listed(directory)
    assert ids["failed"] not in {r.run_id for r in source.rows()}
    assert source.get(result.run_id) is not None  # type: ignore[arg-type]
    assert source.from_index == len(ids) - 1 and source.index_stale
    assert_same_rows(source, fresh_read(directory))


def test_an_index_of_another_directory_copied_in_is_ignored(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    asyncio.run(engine_runs(one))
    shutil.copytree(one, two)  # the same names, other files
    saved(one)
    shutil.copytree(one / runindex.INDEX_DIR, two / runindex.INDEX_DIR)
    source = listed(two)
    assert source.from_index == 0 and "another directory" in (source.index.problem or "")
    assert_same_rows(source, fresh_read(two))


def test_a_running_run_is_asked_who_holds_it_not_told_by_the_index(runs) -> None:
    directory, ids = runs
    saved(directory)
    store = FileStore(directory)
    with store.lock(ids["interrupted"]):
        held = listed(directory)
        assert held.bytes_read == 0
        assert held.get(ids["interrupted"]).status == "running"  # type: ignore[union-attr]
        held.save_index()
    free = listed(directory)
    assert free.from_index == len(ids)
    assert free.get(ids["interrupted"]).status == "interrupted"  # type: ignore[union-attr]


# -- rows of other fields -------------------------------------------------------------------------


@dataclasses.dataclass(slots=True, eq=False)
class CostlyRow(RunRow):
    """A RunRow as another branch may grow it: one field more."""

    budget: float | None = None


def test_an_index_of_rows_with_other_fields_is_ignored_both_ways(runs, monkeypatch) -> None:
    directory, ids = runs
    plain = saved(directory)
    with monkeypatch.context() as m:
        m.setattr(runindex, "RunRow", CostlyRow)  # read by a RunRow grown since it was written
        index = runindex.RunIndex(directory)
        assert index.read() == {} and "other fields" in (index.problem or "")
        # Written by that RunRow, read by ours: ignored too.
        rows = [CostlyRow(**{f: getattr(r, f) for f in RunRow.__dataclass_fields__}, budget=0.01)
                for r in plain.rows()]  # fmt: skip
        tails = [plain._tails[r.run_id] for r in rows]
        index.write(runindex.columns_of(list(zip(rows, tails, strict=True))), len(rows))
        assert len(runindex.RunIndex(directory).read()) == len(ids)
    index = runindex.RunIndex(directory)
    assert index.read() == {} and "other fields" in (index.problem or "")
    source = listed(directory)
    assert source.from_index == 0 and source.index_stale
    assert_same_rows(source, fresh_read(directory))


# -- where it lives -------------------------------------------------------------------------------


def test_a_directory_that_cannot_hold_the_index_uses_the_cache(runs, tmp_path, monkeypatch) -> None:
    directory, ids = runs
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    (directory / runindex.INDEX_DIR).write_text("not a directory")  # mkdir there fails
    written = saved(directory).index.path
    assert written is not None and written.parent == cache / "agentor-tui"
    assert (directory / runindex.INDEX_DIR).read_text() == "not a directory"
    warm = listed(directory)
    assert warm.index.path == written and warm.from_index == len(ids) and warm.bytes_read == 0


def test_saving_leaves_no_temporary_file_and_replaces_the_old_index(runs) -> None:
    directory, ids = runs
    saved(directory)
    first = index_file(directory).stat().st_ino
    (directory / f"{ids['failed']}.jsonl").unlink()
    saved(directory)
    assert index_file(directory).stat().st_ino != first  # renamed over, not rewritten
    assert os.listdir(directory / runindex.INDEX_DIR) == [runindex.INDEX_FILE]
    assert len(runindex.RunIndex(directory).read()) == len(ids) - 1


def test_values_json_cannot_say_plainly_come_back_as_they_were(tmp_path: Path) -> None:
    """A log may hold Infinity, huge integers, lone surrogates and bad lines: rows keep them."""
    directory = tmp_path / "runs"
    asyncio.run(weather_agent(FileStore(directory), calls(("get_weather", {"city": "Oslo"})),
                              text("ok")).arun("Hi \udcff?"))  # fmt: skip
    (run_id,) = FileStore(directory).list_runs()
    with open(directory / f"{run_id}.jsonl", "ab") as f:
        f.write(b'{"type": "message", "turn": 2, "ts": Infinity, "usage": {"output_tokens": 1}}\n')
        big = b'{"input_tokens": 99999999999999999999999, "total_tokens": 1}'
        f.write(b'{"type": "generation", "turn": 3, "usage": ' + big + b"}\n")
        f.write(b"\xff\xfe not json\n")
    saved(directory)
    warm = listed(directory)
    assert warm.from_index == 1 and warm.bytes_read == 0
    want = fresh_read(directory)
    assert want.get(run_id).error  # type: ignore[union-attr]
    assert_same_rows(warm, want)
    body = index_file(directory).read_bytes()
    loaded = runindex.RunIndex(directory).load()  # a time past any clock: a double, as it was
    assert loaded.values("row.summary.last_event_at") == [math.inf]
    assert b"100000000000000000000" in body  # the usage summed past 2**64
    assert b"\\udcff" in body


def test_locked_among_answers_for_many_runs_as_is_locked_does_for_one(runs) -> None:
    directory, ids = runs
    holder, prober = FileStore(directory), FileStore(directory)
    held = ids["interrupted"]
    with holder.lock(held):
        assert prober.locked_among(ids.values()) == {held}  # another process's lock (flock)
        assert {r for r in ids.values() if prober.is_locked(r)} == {held}
        assert holder.locked_among([held, ids["failed"]]) == {held}  # this store's own hold
    assert prober.locked_among(ids.values()) == set()
    assert prober.locked_among(["no-such-run"]) == set()
    with pytest.raises(ValueError):
        prober.locked_among(["../etc/passwd"])  # refused before anything is opened


def test_a_priced_row_keeps_its_exact_cost_through_the_index(tmp_path: Path) -> None:
    from decimal import Decimal

    from agentor.engine.history import RunSummary
    from agentor.ops.pricing import RunCost
    from agentor.sources.directory.colstore import Stored, encoded
    from agentor.sources.directory.columns import from_columns, sub_columns
    from agentor.sources.directory.rowread import LogTail

    cost = RunCost(Decimal("0.000123456789012345678901"), priced=2, unpriced=1)
    row = RunRow("r1", summary=RunSummary("r1"), cost=cost, complete=True)
    cols = runindex.columns_of([(row, LogTail("x", inode=1, mtime_ns=1))])
    toc, body = encoded(cols)
    stored = Stored(b"".join(body), toc, sys.byteorder)
    (back,) = from_columns(RunRow, sub_columns(stored, "row."), 1)
    assert back.cost == cost and isinstance(back.cost.total, Decimal)
