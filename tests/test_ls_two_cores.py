"""A listing that reads many logs whole does so on two cores (`agentor.sources.directory.
forkread`): a forked worker reads part of the files and hands its rows back as the run index's
columns, taken as an index's rows are. The rows are the ones one process reads, field for field,
on a directory of every kind of log (every outcome, a fork, bad and torn lines, a log over 64 KiB,
one awaiting approval, one held by a live process, empty, garbage, a directory and a name that
is no run id); the worker is not used while another thread runs, and its files are read here when
it fails. A large index save is forked too (`listing.table_listed`, `agentor.sources.apart`), and
`agentor ls --json` prints the same listing either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.store.file import FileStore
from agentor.sources import listing
from agentor.sources.directory import forkread
from agentor.sources.directory.rowread import TAIL_FIELDS
from agentor.sources.directory.runindex import RunIndex
from agentor.sources.directory.source import DirectorySource
from agentor.sources.listing import list_rows, list_table, table_listed
from agentor.sources.runrow import ROW_FIELDS
from tests.app_support import write_log
from tests.test_ls_table import assert_same, directory_of_every_kind

T = 1796039000.5
ROOT = Path(__file__).resolve().parent.parent


def directory_of_all_sorts(runs: Path) -> dict[str, str]:
    """`directory_of_every_kind`, and more: a long log, a torn last line, a run awaiting
    approval, garbage, a directory and a name that is no run id."""
    ids = directory_of_every_kind(runs)
    long_events: list[dict[str, Any]] = [{"type": "run_start", "agent": "L", "started_at": T}]
    for turn in range(1, 120):
        long_events.append({"type": "generation", "turn": turn, "model": "m", "ts": T + turn,
                            "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
                            "text": "x" * 600})  # fmt: skip
        long_events.append({"type": "tool_call", "turn": turn, "name": "f", "ts": T + turn})
    write_log(runs, "1" * 32, long_events)
    assert (runs / ("1" * 32 + ".jsonl")).stat().st_size > 64 * 1024
    torn = write_log(runs, "2" * 32, [{"type": "run_start", "agent": "T", "started_at": T + 3}])
    with torn.open("ab") as f:
        f.write(b'{"type": "generation", "turn": 1, "ts": 1796039004.5')  # no newline yet
    write_log(runs, "3" * 32, [
        {"type": "run_start", "agent": "W", "started_at": T + 5},
        {"type": "generation", "turn": 1, "ts": T + 6},
        {"type": "tool_call", "turn": 1, "name": "rm", "call_id": "c1", "args": {}},
        {"type": "approval_request", "turn": 1, "name": "rm", "call_id": "c1", "args": {},
         "deadline": T + 9999, "ts": T + 6},
        {"type": "run_end", "status": "awaiting_approval", "ts": T + 6},
    ])  # fmt: skip
    (runs / ("4" * 32 + ".jsonl")).write_bytes(bytes(range(256)) * 8)
    (runs / ("5" * 32 + ".jsonl")).mkdir()
    (runs / "not-a-run.jsonl").write_text('{"type": "run_start"}\n')
    return ids


def read(runs: Path) -> DirectorySource:
    """A listing's scan (every file read whole), with no index to read or write."""
    source = DirectorySource(runs)
    source.index.places = lambda: []  # type: ignore[method-assign]
    source.whole_at_scan = True
    source.scan()
    return source


def rows_of(source: DirectorySource) -> dict[str, tuple[Any, ...]]:
    """Every field of each row and its tail (but when this process saw a run free: now)."""
    out = {}
    for row in source.rows():
        tail = source._tails[row.run_id]
        fields = [getattr(row, n) for n in ROW_FIELDS if n != "seen_free_at"]
        out[row.run_id] = (*fields, *(getattr(tail, n) for n in (*TAIL_FIELDS, "path")))
    return out


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker for a few files (not thousands), as if the machine had two CPUs, and as if
    this process ran no other thread, as `agentor ls`, a process of its own, runs none: the
    suite's worker process keeps threads earlier tests left (idle, or even started anew by
    what they left: counting them once before the test was not enough). The thread check
    itself is `test_no_worker_while_another_thread_runs`'."""
    monkeypatch.setattr(forkread, "PARALLEL_FROM", 2)
    monkeypatch.setattr("agentor.sources.apart.cpus", lambda: 2)
    monkeypatch.setattr(threading, "active_count", lambda: 1)


def serial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forkread, "PARALLEL_FROM", 10**9)


def test_rows_read_by_a_worker_are_the_rows_one_process_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    runs = tmp_path / "runs"
    ids = directory_of_all_sorts(runs)
    with FileStore(runs).lock(ids["interrupted"]):  # a live process holds it: running
        both = read(runs)
        with monkeypatch.context() as m:
            serial(m)
            one = read(runs)
    listed = len(os.listdir(runs))
    worker_files = int(listed * forkread.WORKER_SHARE)
    assert one.from_worker == 0 and both.read_at_scan == one.read_at_scan == listed
    # Every file the worker read came back as a row, but those not read from a file (the
    # directory, the name that is no run id, both unreadable rows): read here again.
    assert 0 < both.from_worker <= worker_files
    assert both.from_worker >= worker_files - 2
    assert both.bytes_read == one.bytes_read and both.lines_decoded == one.lines_decoded
    assert rows_of(both) == rows_of(one)
    assert both.get(ids["interrupted"]).status == "running"  # type: ignore[union-attr]
    assert both.get("3" * 32).asks_approval is True  # type: ignore[union-attr]


def test_a_listing_on_two_cores_is_the_listing_of_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    """`list_table` (the worker's rows left as columns), `list_rows` (built): the same as
    one process lists, and the index they save lists the same again, reading nothing."""
    runs = tmp_path / "runs"
    directory_of_all_sorts(runs)
    source = DirectorySource(runs)
    table = list_table(source)
    assert source.from_worker > 0 and source.aside is not None and source.aside.apart
    warm = DirectorySource(runs)
    assert_same(list_table(warm), table)
    assert warm.bytes_read == 0 and warm.from_worker == 0

    with monkeypatch.context() as m:
        serial(m)
        one = DirectorySource(runs)
        one.index.places = lambda: [tmp_path / "elsewhere.json"]  # type: ignore[method-assign]
        assert_same(list_table(one), table)
    (runs / ".agentor-index" / "runs.json").unlink()
    built = DirectorySource(runs)
    rows = list_rows(built)
    assert built.from_worker > 0 and built.aside is None
    assert [r.run_id for r in rows] == table.run_id
    assert_same(list_table(DirectorySource(runs)), table)  # from the index list_rows saved


def test_no_worker_while_another_thread_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    runs = tmp_path / "runs"
    directory_of_all_sorts(runs)
    monkeypatch.undo()  # the real count of threads (the fixture's as-if made again below)
    monkeypatch.setattr(forkread, "PARALLEL_FROM", 2)
    monkeypatch.setattr("agentor.sources.apart.cpus", lambda: 2)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        alone = read(runs)
    finally:
        stop.set()
        other.join()
    assert alone.from_worker == 0
    assert rows_of(alone) == rows_of(read(runs))


def test_new_logs_beside_an_index_are_read_on_two_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    """Rows left aside from the index, and new logs: the worker's rows are built then
    (`take_fresh`), the listing and the index saved are those of one process."""
    runs = tmp_path / "runs"
    directory_of_all_sorts(runs)
    list_table(DirectorySource(runs))  # the index of these
    for n, path in enumerate(sorted(runs.glob("*.jsonl"))):
        if path.is_file() and len(path.stem) == 32:
            (runs / f"{n:04d}{path.stem[4:]}.jsonl").write_bytes(path.read_bytes())
    source = DirectorySource(runs)
    table = list_table(source)
    assert source.from_index > 0 and source.from_worker > 0
    assert source.aside is not None and not source.aside.apart
    with monkeypatch.context() as m:
        serial(m)
        one = DirectorySource(runs)
        one.index.places = lambda: [tmp_path / "elsewhere.json"]  # type: ignore[method-assign]
        assert_same(list_table(one), table)
    warm = DirectorySource(runs)
    assert_same(list_table(warm), table)
    assert warm.bytes_read == 0


@pytest.mark.parametrize("why", ["no fork", "one CPU", "macOS"])
def test_no_worker_where_none_can_be_forked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None, why: str
) -> None:
    runs = tmp_path / "runs"
    directory_of_all_sorts(runs)
    both = read(runs)
    if why == "no fork":
        monkeypatch.delattr(os, "fork")
    elif why == "one CPU":
        monkeypatch.setattr("agentor.sources.apart.cpus", lambda: 1)
    else:
        monkeypatch.setattr(sys, "platform", "darwin")
    alone = read(runs)
    assert alone.from_worker == 0 and both.from_worker > 0
    assert rows_of(alone) == rows_of(both)


def test_what_a_failed_worker_read_is_read_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    runs = tmp_path / "runs"
    directory_of_all_sorts(runs)
    good = read(runs)

    def fail(*args: Any) -> list[bytes]:
        raise RuntimeError("the worker breaks")  # in the worker: it ends with status 1

    monkeypatch.setattr(forkread, "_payload", fail)
    failed = read(runs)
    assert failed.from_worker == 0 and good.from_worker > 0
    assert rows_of(failed) == rows_of(good)
    assert failed.bytes_read == good.bytes_read


def test_a_large_index_save_is_forked_and_done_when_the_listing_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, two_cores: None
) -> None:
    runs = tmp_path / "runs"
    directory_of_all_sorts(runs)
    monkeypatch.setattr(listing, "SAVE_APART_FROM", 2)
    saved: list[int] = []
    fork_off = listing.fork_off
    monkeypatch.setattr(listing, "fork_off", lambda work: saved.append(1) or fork_off(work))
    source = DirectorySource(runs)
    with table_listed(source) as table:
        assert saved == [1] and not source.index_stale
    assert RunIndex(runs).load().count == len(table) - 1  # not the directory (unreadable)
    warm = DirectorySource(runs)
    assert_same(list_table(warm), table)
    assert warm.bytes_read == 0  # but the unreadable entries' nothing


def ls_json(runs: Path, forks: bool) -> list[dict[str, Any]]:
    """`agentor ls --json` in a process of its own: with a worker and a forked save for a
    few files (`forks`), or neither."""
    limit = 2 if forks else 10**9
    code = (
        "import agentor.sources.apart as a, agentor.sources.directory.forkread as f,"
        " agentor.sources.listing as l\n"
        f"a.cpus = lambda: 2; f.PARALLEL_FROM = l.SAVE_APART_FROM = {limit}\n"
        "from agentor.cli import main\nraise SystemExit(main())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path[1:]])}
    proc = subprocess.run(
        [sys.executable, "-c", code, "ls", str(runs), "--json"], capture_output=True, env=env
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    got: list[dict[str, Any]] = json.loads(proc.stdout)
    for run in got:
        run.pop("age")  # now, less when it started: a moment later in one of them
    return got


def test_agentor_ls_json_prints_the_same_on_two_cores(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    directory_of_all_sorts(runs)
    forked = ls_json(runs, forks=True)
    index = runs / ".agentor-index" / "runs.json"
    assert index.exists()  # saved by the forked process before `ls` exited
    index.unlink()
    assert ls_json(runs, forks=False) == forked
    assert len(forked) == len(os.listdir(runs)) - 1  # every entry but the index's directory
