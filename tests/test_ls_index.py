"""`agentor ls` lists a directory from its run index, as the TUI does: with a fresh index it
reads no log (but those of runs whose latest turn asked for approval, for their waiting
calls), and a listing that read logs saves the index for the next one. `--limit`, `--since` and
`--agent` narrow the listing; a bad value is one line and exit status 2."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentor.sources.directory.runindex import INDEX_DIR, INDEX_FILE
from tests.app_support import SAMPLE_MANIFEST, copy_samples, write_log
from tests.test_agentor_command import agentor
from tests.test_ls_lists_what_the_tui_lists import without_age

AWAITING = SAMPLE_MANIFEST["awaiting_approval"]["run_id"]


@pytest.fixture
def log_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The run logs read in this process (`os.pread` / `os.read` of a `*.jsonl` file), by run
    id, once per read (probing a run's lock opens its log but reads nothing: not counted)."""
    read: list[str] = []

    def counted(real: Callable[..., bytes]) -> Callable[..., bytes]:
        def reading(fd: int, *args: Any) -> bytes:
            name = os.readlink(f"/proc/self/fd/{fd}")
            if name.endswith(".jsonl"):
                read.append(os.path.basename(name)[: -len(".jsonl")])
            return real(fd, *args)

        return reading

    monkeypatch.setattr(os, "pread", counted(os.pread))
    monkeypatch.setattr(os, "read", counted(os.read))
    yield read


def ls_json(runs: Path, *more: str) -> list[dict[str, Any]]:
    proc = agentor("ls", str(runs), "--json", *more)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def scrambled(runs: Path) -> None:
    """Every log's bytes replaced by as many others, its inode, size and mtime kept: what the
    index keys a file by says it is unchanged, and a listing that read it would find no run.
    (But the run that waits for approval: its waiting call is read from its log.)"""
    for path in runs.glob("*.jsonl"):
        if path.stem == AWAITING:
            continue
        st = path.stat()
        with path.open("r+b") as f:
            f.write(b"\xff" * st.st_size)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_ls_saves_the_index_it_built_and_then_lists_from_it_without_reading_a_log(
    tmp_path: Path,
) -> None:
    runs = copy_samples(tmp_path / "runs")
    index = runs / INDEX_DIR / INDEX_FILE
    cold = ls_json(runs)
    assert index.exists()  # the logs read once are not read again
    saved = index.stat().st_mtime_ns

    scrambled(runs)
    warm = ls_json(runs)
    assert without_age(warm) == without_age(cold)
    table = agentor("ls", str(runs))
    assert table.returncode == 0, table.stderr
    assert "unreadable" not in table.stdout and "bad line" not in table.stdout
    assert index.stat().st_mtime_ns == saved  # nothing read: nothing to save


def test_ls_reads_only_the_logs_of_runs_that_asked_for_approval(
    tmp_path: Path, log_reads: list[str]
) -> None:
    runs = copy_samples(tmp_path / "runs")
    cold = ls_json(runs)
    assert sorted(set(log_reads)) == sorted(p.stem for p in runs.glob("*.jsonl"))
    log_reads.clear()

    warm = ls_json(runs)
    assert without_age(warm) == without_age(cold)
    assert set(log_reads) == {AWAITING}  # its waiting call: the one log a fresh index leaves
    assert {r["run_id"]: r["pending"] for r in warm if r["pending"]} == {AWAITING: 1}
    statuses = {r["status"] for r in warm}
    assert {"interrupted", "awaiting_approval", "completed"} <= statuses  # and none read


def test_a_listing_that_cannot_save_the_index_still_lists(tmp_path: Path) -> None:
    runs = copy_samples(tmp_path / "runs")
    (runs / INDEX_DIR).write_text("not a directory")  # the index cannot go there
    cache = tmp_path / "cache"
    cache.write_text("nor there")  # nor in the cache
    proc = agentor("ls", str(runs), "--json", env={"XDG_CACHE_HOME": str(cache)})
    assert proc.returncode == 0 and proc.stderr == ""
    assert len(json.loads(proc.stdout)) == len(SAMPLE_MANIFEST)


# -- --limit, --since, --agent ------------------------------------------------------------------


def runs_of_ages(runs: Path, now: float) -> None:
    """Four runs started 10 min, 3 h, 2 days and 10 days ago, of two agents."""
    for run_id, agent, ago in (
        ("a" * 32, "Scout", 600),
        ("b" * 32, "Pilot", 3 * 3600),
        ("c" * 32, "Scout", 2 * 86400),
        ("d" * 32, "Scout", 10 * 86400),
    ):
        write_log(
            runs,
            run_id,
            [
                {"type": "run_start", "agent": agent, "model": "m", "started_at": now - ago},
                {"type": "run_end", "status": "completed", "ended_at": now - ago + 1},
            ],
        )


def ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["run_id"][0] for r in rows]


def test_ls_limit_since_and_agent_narrow_the_listing(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    runs_of_ages(runs, time.time())
    assert ids(ls_json(runs)) == ["a", "b", "c", "d"]  # newest first
    assert ids(ls_json(runs, "--limit", "2")) == ["a", "b"]
    assert ids(ls_json(runs, "--limit", "9")) == ["a", "b", "c", "d"]
    assert ids(ls_json(runs, "--since", "1h")) == ["a"]
    assert ids(ls_json(runs, "--since", "7d")) == ["a", "b", "c"]
    assert ids(ls_json(runs, "--since", "30m")) == ["a"]
    assert ids(ls_json(runs, "--agent", "Scout")) == ["a", "c", "d"]
    assert ids(ls_json(runs, "--agent", "Scout", "--since", "2w", "--limit", "2")) == ["a", "c"]
    assert ids(ls_json(runs, "--agent", "scout")) == []  # a name is matched exactly

    table = agentor("ls", str(runs), "--agent", "Pilot")
    assert table.returncode == 0 and table.stdout.count("\n") == 2  # the header and one run
    none = agentor("ls", str(runs), "--agent", "Nobody", "--since", "2h")
    assert none.returncode == 0
    assert none.stdout.startswith("no runs of agent Nobody started in the last 2h in ")


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--limit", "0", "must be at least 1: 0"),
        ("--limit", "-3", "must be at least 1: -3"),
        ("--limit", "ten", "not a whole number: 'ten'"),
        ("--since", "3x", "not an age: '3x'"),
        ("--since", "", "not an age: ''"),
        ("--since=-2h", None, "not an age: '-2h'"),
        ("--since", "1e9999w", "not an age: '1e9999w'"),
        ("--since", "99999999999w", "an age too long: '99999999999w'; at most 999999999d"),
    ],
)
def test_ls_refuses_a_bad_limit_or_age_in_one_line(
    tmp_path: Path, option: str, value: str | None, said: str
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    proc = agentor("ls", str(runs), option, *([] if value is None else [value]))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and said in proc.stderr, proc.stderr
    assert proc.stderr.startswith("agentor ls: error: argument --")


def test_a_row_read_whole_sums_up_odd_numbers_as_the_engines_loader_reads_them(
    tmp_path: Path,
) -> None:
    """Lines are parsed by orjson first, which makes a float of an integer past 64 bits and
    refuses NaN: such lines fold as the engine's own loader reads them (`json`)."""
    from agentor.engine.history import summarize
    from agentor.engine.store.file import FileStore
    from agentor.sources.directory.source import DirectorySource

    runs = tmp_path / "runs"
    runs.mkdir()
    big = 2**64 + 1
    lines = [
        '{"type": "run_start", "agent": "A", "started_at": 1796039000.5, "messages": '
        '[{"role": "user", "content": "Hi"}]}',
        f'{{"type": "generation", "turn": {big}, "usage": {{"input_tokens": {big}, '
        f'"output_tokens": 1, "total_tokens": {big + 1}}}, "ts": 1796039001}}',
        f'{{"type": "tool_call", "name": "t", "ts": {-big}}}',
        '{"type": "tool_result", "ts": NaN, "started_at": true, "ended_at": 1796039002.25}',
        f'{{"type": "message", "ts": {big}}}',
        '{"type": "message", "text": "\\ud800", "ts": 1e400}',
        '{"type": "run_end", "status": "completed", "ended_at": 1796039003, "text": "ok"}',
    ]
    run_id = "e" * 32
    (runs / f"{run_id}.jsonl").write_text("".join(line + "\n" for line in lines))
    source = DirectorySource(runs)
    source.whole_at_scan = True
    source.scan()
    row = source.get(run_id)
    events, bad = FileStore(runs).load_with_errors(run_id)
    assert row is not None and row.complete and not bad
    assert row.summary == summarize(run_id, events)
    assert row.summary is not None and row.summary.turns == big
    assert row.summary.usage.input_tokens == big
