"""`agentor ls` lists what the TUI lists: the same rows, in the same order, with the same
statuses and the same reasons, for every kind of entry a directory may hold (good runs of each
status, a run held by a live process, a name that is no run id, a directory, a symlink, an
empty file, random bytes) and for a PostgreSQL schema; `agentor show` says of a run what its
row says. The installed console script in subprocesses beside the app under `run_test`; the
holder is another process (a real flock), the database a real server."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.statuses import (
    AWAITING_APPROVAL,
    COMPLETED,
    FAILED,
    INTERRUPTED,
    MAX_TURNS,
    RUNNING,
    UNREADABLE,
)
from agentor.engine.store.copy import copy_runs
from agentor.engine.store.file import FileStore
from agentor.sources.directory.quickread import TAIL_BYTES
from agentor.sources.directory.runindex import INDEX_DIR
from agentor.sources.directory.source import DirectorySource
from agentor.sources.listing import list_rows
from agentor.sources.postgres.source import PostgresSource
from tests.app_support import IDS, SIZE, copy_fixtures, fixed_clock, wait_until, write_log
from tests.approvalkit import TRAVEL_PROMPT, Travel
from tests.conftest import ROOT
from tests.pg_support import PgStores
from tests.test_agentor_command import ENV, agentor
from tui.app import RunsApp
from tui.text.run_line import run_line

HELD = "held" + "0" * 28  # an interrupted log that a live process holds: running
GATED_CRASH = "gatedcrash"  # killed once it asked for approval, before it paused
HOLDER = """
import sys
from agentor.engine.store.file import FileStore
with FileStore(sys.argv[1]).lock(sys.argv[2]):
    print("holding", flush=True)
    sys.stdin.read()  # until the test lets go
"""


@pytest.fixture
def holder() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def hold(runs: Path, run_id: str, started: list[subprocess.Popen[bytes]]) -> None:
    """Another process takes the run's lock (and keeps it until the test ends)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(runs), run_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env=ENV,
    )
    started.append(proc)
    assert proc.stdout is not None and proc.stdout.readline() == b"holding\n"


async def gated_runs(store: Any) -> str:
    """A run paused for approval (its id), and GATED_CRASH: such a run killed once it asked
    for approval, before its segment ended (interrupted, the call still waiting): the first
    five events of another, which is then removed."""
    waiting = (await Travel(store).agent.arun(TRAVEL_PROMPT)).run_id
    whole = (await Travel(store).agent.arun(TRAVEL_PROMPT)).run_id
    for event in store.load(whole)[:5]:
        store.append(GATED_CRASH, event)
    store.delete(whole)
    return waiting


async def every_kind_of_entry(runs: Path, holders: list[subprocess.Popen[bytes]]) -> str:
    """The directory: the upstream logs (completed, failed, max_turns, interrupted, a fork),
    runs waiting for approval, a held run, and entries that are no readable run. Returns the
    run waiting for approval."""
    copy_fixtures(runs)
    store = FileStore(runs)
    waiting = await gated_runs(store)
    shutil.copy(runs / f"{IDS['half_finished_crash']}.jsonl", runs / f"{HELD}.jsonl")
    (runs / "bad name!.jsonl").write_text('{"type": "run_start"}\n')
    (runs / "a-directory.jsonl").mkdir()
    (runs / "a-symlink.jsonl").symlink_to(runs / f"{IDS['completed']}.jsonl")
    (runs / "empty.jsonl").write_bytes(b"")
    (runs / "noise.jsonl").write_bytes(random.Random(7).randbytes(20_000))
    (runs / "notes.txt").write_text("not a log\n")  # listed by neither
    hold(runs, HELD, holders)
    return waiting


async def tui_rows(app: RunsApp) -> list[tuple[str, str, str]]:
    """(run id, status, the line the run list draws) of every row the app lists, in order."""
    async with app.run_test(size=SIZE) as pilot:
        run_list = app.runs_screen.run_list

        def shown_whole() -> bool:
            # Filled, and the list drawn from the filled rows: a fork's lineage, read with its
            # row, may move it up (it sorts by when it was made).
            listed = [r.run_id for r in run_list.rows]
            return not app.source.incomplete and listed == [r.run_id for r in app.source.rows()]

        await wait_until(pilot, shown_whole, what="the rows filled and shown")
        return [
            (r.run_id, r.status, run_line(r, fixed_clock()).plain)
            for r in app.runs_screen.run_list.rows
        ]


def listed(*args: str) -> list[dict[str, Any]]:
    proc = agentor("ls", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert isinstance(rows, list)
    return rows


def assert_same_rows(ls_rows: list[dict[str, Any]], tui: list[tuple[str, str, str]]) -> None:
    """The same ids in the same order, the same statuses, and each reason `ls` gives drawn on
    the TUI's line of that run (a run without one: no reason drawn either)."""
    assert [(r["run_id"], r["status"]) for r in ls_rows] == [(i, s) for i, s, _ in tui]
    for row, (_, _, line) in zip(ls_rows, tui, strict=True):
        if row["error"] is not None:
            assert row["error"] in line, (row["run_id"], row["error"], line)
        else:
            assert "⚠" not in line, line


async def test_ls_lists_every_entry_the_tui_lists_with_its_status_and_reason(
    tmp_path: Path, holder: list[subprocess.Popen[bytes]]
) -> None:
    runs = tmp_path / "runs"
    waiting = await every_kind_of_entry(runs, holder)
    ls_rows = listed(str(runs))
    assert_same_rows(ls_rows, await tui_rows(RunsApp(runs, watch=False, clock=fixed_clock)))
    # Listed again from the index the first listing saved (the held run told by its lock, the
    # waiting ones read for their calls): the same.
    assert (runs / INDEX_DIR).is_dir()
    assert without_age(listed(str(runs))) == without_age(ls_rows)

    by_id = {r["run_id"]: r for r in ls_rows}
    assert len(by_id) == len(ls_rows) == 16  # 8 upstream logs, 3 of ours, 5 unreadable
    expected = {
        IDS["completed"]: (COMPLETED, None),
        IDS["failed"]: (FAILED, "InternalServerError: Error code: 500 - scripted failure"),
        IDS["max_turns"]: (MAX_TURNS, "Reached max_turns (2) without a final answer."),
        IDS["half_finished_crash"]: (INTERRUPTED, None),
        HELD: (RUNNING, None),
        waiting: (AWAITING_APPROVAL, None),
        GATED_CRASH: (INTERRUPTED, None),
        "a-directory": (UNREADABLE, "is a directory"),
        "a-symlink": (UNREADABLE, "is a symlink (not followed)"),
        "empty": (UNREADABLE, "empty file"),
    }
    for run_id, (status, error) in expected.items():
        assert (by_id[run_id]["status"], by_id[run_id]["error"]) == (status, error), run_id
    bad_name = by_id["bad name!.jsonl"]  # `agentor ls` once left it out without a word
    assert bad_name["status"] == UNREADABLE
    assert bad_name["error"].startswith("not a valid run id: 'bad name!' (use 1 to 128")
    assert by_id["noise"]["status"] == UNREADABLE
    assert by_id["noise"]["error"].startswith("no events: ")
    # Calls a person can decide: the paused run's, and the crashed one's (asked, undecided).
    assert {r["run_id"]: r["pending"] for r in ls_rows if r["pending"]} == {
        waiting: 1,
        GATED_CRASH: 1,
    }
    assert (by_id[waiting]["turns"], by_id[waiting]["tool_calls"]) == (1, 2)
    assert by_id[waiting]["total_tokens"] == 6

    # The table: the same rows, each reason in place of a prompt.
    table = agentor("ls", str(runs)).stdout.splitlines()[1:]
    assert [line.split()[:2] for line in table][:3] == [
        [r["status"], r["run_id"].split()[0]] for r in ls_rows[:3]
    ]
    assert any("is a directory" in line for line in table)
    # `show`: a run's status and reason are its row's.
    shown = agentor("show", "a-directory", "--store", str(runs))
    assert shown.returncode == 0, shown.stderr
    assert "status   unreadable\n" in shown.stdout and "error    is a directory\n" in shown.stdout
    assert "status   running\n" in agentor("show", HELD, "--store", str(runs)).stdout


async def test_ls_lists_a_database_as_the_tui_lists_it(pg_stores: PgStores, tmp_path: Path) -> None:
    with pg_stores() as store:
        report = copy_runs(FileStore(copy_fixtures(tmp_path / "runs")), store)
        assert not report.skipped, report.skipped
        waiting = await gated_runs(store)
        with store.lock("begun-and-left"):  # a run taken, and let go before its first event
            pass
    holder = pg_stores()  # another session holds it while both look
    with holder.lock(IDS["half_finished_crash"]):
        ls_rows = listed(pg_stores.dsn, "--schema", pg_stores.schema)
        source = PostgresSource(pg_stores.dsn, schema=pg_stores.schema, clock=fixed_clock)
        tui = await tui_rows(RunsApp(source, watch=False, clock=fixed_clock))
    assert_same_rows(ls_rows, tui)

    by_id = {r["run_id"]: r for r in ls_rows}
    assert len(by_id) == 11
    assert by_id[IDS["half_finished_crash"]]["status"] == RUNNING
    assert by_id[IDS["crash_after_tool_result"]]["status"] == INTERRUPTED
    assert (by_id[IDS["failed"]]["status"], by_id[IDS["max_turns"]]["status"]) == (
        FAILED,
        MAX_TURNS,
    )
    # A run with no event, nobody holding it: nothing to show or resume (the store alone
    # would call it interrupted).
    assert (by_id["begun-and-left"]["status"], by_id["begun-and-left"]["error"]) == (
        UNREADABLE,
        "no events",
    )
    assert {r["run_id"]: r["pending"] for r in ls_rows if r["pending"]} == {
        waiting: 1,
        GATED_CRASH: 1,
    }
    assert by_id[waiting]["status"] == AWAITING_APPROVAL
    assert (by_id[waiting]["turns"], by_id[waiting]["tool_calls"]) == (1, 2)


def test_ls_reads_the_run_index_the_tui_saved_and_saves_one_only_when_it_read_logs(
    tmp_path: Path,
) -> None:
    """A listing that read logs saves the index where the TUI does (`show` writes none), and
    lists from one the TUI saved without reading a log, rows not priced yet included (the app
    saves before its fill has priced them), leaving it as it is."""
    runs = copy_fixtures(tmp_path / "runs")
    cache = tmp_path / "cache"  # where an index goes when the directory cannot take it
    env = {"XDG_CACHE_HOME": str(cache)}
    assert agentor("show", IDS["completed"], "--store", str(runs), env=env).returncode == 0
    assert not (runs / INDEX_DIR).exists() and not cache.exists()
    cold = agentor("ls", str(runs), "--json", env=env)
    assert cold.returncode == 0, cold.stderr
    assert (runs / INDEX_DIR).exists() and not cache.exists()
    shutil.rmtree(runs / INDEX_DIR)

    saved = DirectorySource(runs)
    saved.scan()  # small files are read whole at once: complete, not priced
    saved.save_index()
    warm = DirectorySource(runs)
    rows = list_rows(warm)
    assert warm.from_index == len(rows) == 8 and warm.bytes_read == 0
    index = runs / INDEX_DIR / "runs.json"
    saved_at = index.stat().st_mtime_ns
    again = agentor("ls", str(runs), "--json", env=env)
    assert without_age(json.loads(again.stdout)) == without_age(json.loads(cold.stdout))
    assert index.stat().st_mtime_ns == saved_at  # nothing read: the TUI's index left as it is

    # A run added since (too long to be read whole at once: sketched, then filled) is the
    # only log read: as many bytes as for a directory of it alone.
    for directory in (runs, tmp_path / "alone"):
        long_run(directory)
    alone = DirectorySource(tmp_path / "alone")
    list_rows(alone)
    warm = DirectorySource(runs)
    rows = list_rows(warm)
    assert warm.from_index == 8 and len(rows) == 9 and all(r.complete for r in rows)
    assert warm.bytes_read == alone.bytes_read > TAIL_BYTES


def long_run(directory: Path) -> None:
    """A run whose lines between its first and its last a quick read does not reach."""
    directory.mkdir(exist_ok=True)
    start = {"type": "run_start", "agent": "A", "started_at": 1796039000.0}
    said = [{"type": "message", "text": "x" * 1000}] * (2 * TAIL_BYTES // 1000)
    write_log(directory, "long", [start, *said, {"type": "run_end", "status": "completed"}])


def without_age(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "age"} for r in rows]


def test_a_file_name_from_the_directory_is_printed_literally(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "\x1b[2J\x1b]52;c;aGk=\x07.jsonl").write_text("{}\n")  # listed: no run id
    proc = agentor("ls", str(runs))
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "␛[2J␛]52;c;aGk=␇.jsonl" in proc.stdout
