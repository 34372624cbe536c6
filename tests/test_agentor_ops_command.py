"""`agentor prune`, `pin`, `unpin`, `export` and `search` on a runs directory, run as the
installed console script: what they print, their exit status, and what is left on disk."""

from __future__ import annotations

import hashlib
import json
import os
import pty
import shutil
import subprocess
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from agentor.cli import PRUNABLE
from agentor.engine.events import TOOL_RESULT, Event
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.file import FileStore
from agentor.ops import retention
from agentor.ops.run_export import export
from agentor.ops.run_search import search
from tests.conftest import ROOT
from tests.retention_support import held_by_another_process, write_run
from tests.test_agentor_command import ENV, SCRIPT, agentor, refused

SAMPLES = ROOT / "runs"


def snapshot(directory: Path) -> dict[str, str]:
    """Every file under the directory (pins too) and a hash of its bytes."""
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def kept_and_old(tmp_path: Path) -> Path:
    """Runs of every kind prune must tell apart, on the real clock: two old ones to remove, a
    young one, and old ones that must stay (pinned, awaiting, a parent of a young fork)."""
    runs = tmp_path / "runs"
    store = FileStore(runs)
    now = time.time()
    write_run(store, "old-done", age_days=40, now=now)
    write_run(store, "old-failed", age_days=45, ending="failed", now=now)
    write_run(store, "young", age_days=1, now=now)
    write_run(store, "old-pinned", age_days=50, now=now)
    write_run(store, "old-awaiting", age_days=60, ending=AWAITING_APPROVAL, now=now)
    write_run(store, "old-held", age_days=70, now=now)
    write_run(store, "old-parent", age_days=80, now=now)
    write_run(store, "young-fork", age_days=2, forked_from="old-parent", now=now)
    retention.pin(store, "old-pinned")
    return runs


def test_prune_removes_old_runs_and_says_why_each_other_one_stays(kept_and_old: Path) -> None:
    runs = kept_and_old
    size = sum((runs / f"{r}.jsonl").stat().st_size for r in ("old-done", "old-failed"))
    with held_by_another_process(runs, "old-held") as holder:
        proc = agentor("prune", str(runs), "--older-than", "30d")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    removed = [line.split()[1] for line in lines if line.startswith("removed  ")]
    assert sorted(removed) == ["old-done", "old-failed"]
    # Columns: what, run, status, when (run ids and statuses padded to line up).
    assert "removed  old-failed    failed     last active 45d ago" in lines
    kept = {line.split()[1]: line.split(None, 2)[2] for line in lines if line.startswith("kept")}
    assert kept == {
        "old-held": f"held by process {holder.pid}",
        "old-awaiting": "awaiting approval",
        "old-pinned": "pinned",
        "old-parent": "its fork young-fork is kept",
    }
    assert lines[-1] == f"removed 2 runs, kept 4; freed {size / 1000:.1f} kB in {runs}"
    left = {p.name for p in runs.glob("*.jsonl")}
    assert left == {
        f"{r}.jsonl"
        for r in ("old-awaiting", "old-held", "old-parent", "old-pinned", "young", "young-fork")
    }


def test_a_dry_run_says_the_same_and_leaves_every_byte(kept_and_old: Path) -> None:
    runs = kept_and_old
    before = snapshot(runs)
    gone = ("old-done", "old-failed", "old-held")  # nobody holds old-held this time
    size = sum((runs / f"{r}.jsonl").stat().st_size for r in gone)
    proc = agentor("prune", "--store", str(runs), "--older-than", "30d", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert sorted(line.split()[2] for line in lines if line.startswith("would remove")) == [*gone]
    assert "kept          old-pinned    pinned" in lines
    assert lines[-1] == (
        f"dry run: would remove 3 runs ({size / 1000:.1f} kB), kept 3; nothing was removed "
        f"from {runs}"
    )
    assert snapshot(runs) == before


def test_prune_json_is_one_document_for_scripts(kept_and_old: Path) -> None:
    runs = kept_and_old
    size = sum((runs / f"{r}.jsonl").stat().st_size for r in ("old-done", "old-failed"))
    with held_by_another_process(runs, "old-held"):
        proc = agentor("prune", str(runs), "--older-than", "30d", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert list(doc) == ["store", "dry_run", "removed", "kept", "freed"]
    assert doc["store"] == str(runs) and doc["dry_run"] is False and doc["freed"] == size
    assert sorted(r["run_id"] for r in doc["removed"]) == ["old-done", "old-failed"]
    assert {r["run_id"]: r["status"] for r in doc["removed"]} == {
        "old-done": "completed",
        "old-failed": "failed",
    }
    assert all(isinstance(r["last_active"], float) for r in doc["removed"])
    assert {k["run_id"]: k["reason"] for k in doc["kept"]} == {
        "old-held": "held",
        "old-awaiting": "awaiting_approval",
        "old-pinned": "pinned",
        "old-parent": "has_kept_forks",
    }


def test_status_and_keep_last_narrow_what_goes(kept_and_old: Path) -> None:
    runs = kept_and_old
    proc = agentor("prune", str(runs), "--older-than", "30d", "--status", "failed")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("removed 1 run; freed ")
    assert not (runs / "old-failed.jsonl").exists() and (runs / "old-done.jsonl").exists()

    proc = agentor("prune", str(runs), "--status", "completed", "--keep-last", "3", "--json")
    doc = json.loads(proc.stdout)
    # completed, newest first: young, young-fork, old-done | old-pinned, old-held, old-parent
    assert [r["run_id"] for r in doc["removed"]] == ["old-held"]
    assert {k["run_id"]: k["reason"] for k in doc["kept"]} == {
        "young": "newest",
        "young-fork": "newest",
        "old-done": "newest",
        "old-pinned": "pinned",
        "old-parent": "has_kept_forks",
    }

    proc = agentor("prune", str(runs), "--older-than", "1000d")
    assert proc.returncode == 0
    assert proc.stdout == f"nothing removed from {runs}\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--older-than", "30x"], "not an age: '30x'; use a number and a unit"),
        (["--older-than=-3d"], "not an age: '-3d'"),
        (["--status", "completed,finished"], "unknown status finished: use one or more of"),
        ([], "say what to prune: --older-than AGE, --keep-last N or --status S"),
        (["--keep-last", "-1"], "argument --keep-last: must be 0 or more: -1"),
        (["--keep-last", "x"], "argument --keep-last: not a whole number: 'x'"),
    ],
)
def test_bad_prune_input_is_one_line_exit_2_and_removes_nothing(
    kept_and_old: Path, args: list[str], says: str
) -> None:
    before = snapshot(kept_and_old)
    proc = agentor("prune", str(kept_and_old), *args)
    assert says in refused(proc, 2)
    assert snapshot(kept_and_old) == before


def test_a_store_that_is_not_there_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    for given, says in ((tmp_path / "nope", "no such"), (tmp_path / "file", "not a")):
        proc = agentor("prune", str(given), "--older-than", "1d")
        assert refused(proc, 1) == f"agentor prune: {says} directory: {given}"
    assert not (tmp_path / "nope").exists()


def test_prune_names_the_statuses_the_engine_takes() -> None:
    assert PRUNABLE == retention.STATUSES
    proc = agentor("prune", "--help")
    assert proc.returncode == 0
    assert "only these: completed, failed, max_turns, interrupted, running," in " ".join(
        proc.stdout.split()
    )


# -- pin / unpin ---------------------------------------------------------------------------------


def test_pin_and_unpin_say_what_changed(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    store = FileStore(runs)
    write_run(store, "3f2a9c-weather", age_days=40, now=time.time())
    log = (runs / "3f2a9c-weather.jsonl").read_bytes()
    steps = [
        ("pin", "pinned 3f2a9c-weather: prune keeps it\n", True),
        ("pin", "3f2a9c-weather is already pinned\n", True),
        ("unpin", "unpinned 3f2a9c-weather: prune may remove it again\n", False),
        ("unpin", "3f2a9c-weather was not pinned\n", False),
    ]
    for verb, says, is_pinned in steps:
        proc = agentor(verb, "3f2a", "--store", str(runs))  # a unique prefix names the run
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, says, ""), verb
        assert (runs / ".pins" / "3f2a9c-weather").exists() is is_pinned
    assert (runs / "3f2a9c-weather.jsonl").read_bytes() == log  # the log is never touched

    agentor("pin", "3f2a9c-weather", "--dir", str(runs))
    proc = agentor("prune", str(runs), "--older-than", "1d")
    assert proc.stdout.splitlines()[0] == "kept     3f2a9c-weather  pinned"
    assert (runs / "3f2a9c-weather.jsonl").exists()


def test_ls_and_show_mark_the_pinned_runs(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    store = FileStore(runs)
    now = time.time()
    write_run(store, "kept-run", age_days=2, now=now)
    write_run(store, "other-run", age_days=1, now=now)
    agentor("pin", "kept-run", "--store", str(runs))
    rows = json.loads(agentor("ls", str(runs), "--json").stdout)
    assert {r["run_id"]: r["pinned"] for r in rows} == {"kept-run": True, "other-run": False}
    table = agentor("ls", str(runs)).stdout.splitlines()
    assert table[0].split()[:7] == ["STATUS", "RUN", "AGENT", "MODEL", "AGE", "PENDING", "PINNED"]
    assert [line.split()[1] for line in table if " yes " in line] == ["kept-run"]
    shown = agentor("show", "kept-run", "--store", str(runs)).stdout
    assert "pinned   yes: prune keeps it (agentor unpin lets it go)" in shown.splitlines()
    assert json.loads(agentor("show", "kept", "--store", str(runs), "--json").stdout)["run"][
        "pinned"
    ]
    assert "pinned" not in agentor("show", "other-run", "--store", str(runs)).stdout


def test_pinning_an_unknown_run_is_refused(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for verb in ("pin", "unpin"):
        proc = agentor(verb, "nosuchrun", "--store", str(runs))
        assert refused(proc) == f"agentor {verb}: no run nosuchrun in {runs}"
        proc = agentor(verb, "../x", "--store", str(runs))
        assert "is not in the store" in refused(proc, 2)
    assert not (runs / ".pins").exists()


# -- export --------------------------------------------------------------------------------------


def test_export_writes_each_format_to_stdout_as_the_library_renders_it() -> None:
    store = FileStore(SAMPLES)
    for run_id in store.list_runs():
        for fmt in ("md", "json", "html"):
            proc = agentor("export", run_id, "--store", str(SAMPLES), "--format", fmt)
            assert proc.returncode == 0, proc.stderr
            assert proc.stdout == export(store, run_id, fmt), (run_id, fmt)


def test_export_to_a_file_says_where_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    run_id = "c0f1f8ee98b55cb8bc6b29804e73ad07"
    out = tmp_path / "report.html"
    out.write_text("an older export")
    out.chmod(0o640)
    proc = agentor("export", run_id, "--store", str(SAMPLES), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    html = export(FileStore(SAMPLES), run_id, "html")  # the format from the suffix
    assert out.read_text(encoding="utf-8") == html
    size = len(html.encode("utf-8"))
    assert proc.stdout == f"wrote run {run_id} as html to {out} ({size / 1000:.1f} kB)\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    assert out.stat().st_mode & 0o777 == 0o640  # written over, its permissions kept

    proc = agentor("export", run_id[:6], "--dir", str(SAMPLES), "--format", "json", "-o", str(out))
    assert json.loads(out.read_text())["run_id"] == run_id  # --format wins over the suffix


def test_a_failed_export_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    out.write_text("keep me")
    cases = [
        (["nosuchrun", "--store", str(SAMPLES), "-o", str(out)], 1, "no run nosuchrun in"),
        (["c0f1f8ee", "--store", str(SAMPLES), "-o", str(tmp_path)], 2, "is a directory"),
        (["c0f1f8ee", "--store", str(SAMPLES), "-o", str(tmp_path / "no" / "x.md")], 2, "no such"),
        (["c0f1f8ee", "--store", str(SAMPLES), "--format", "pdf"], 2, "invalid choice: 'pdf'"),
    ]
    for args, status, says in cases:
        assert says in refused(agentor("export", *args), status)
    assert out.read_text() == "keep me"
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLES, runs)
    before = snapshot(runs)
    log = runs / "ec39b58cb7a550f3aeaf1abcce1419bf.jsonl"  # another run's log
    proc = agentor("export", "c0f1f8ee", "--store", str(runs), "--format", "json", "-o", str(log))
    assert refused(proc, 2) == (
        f"agentor export: error: -o {log}: a run log of the store; it is never written over"
    )
    assert snapshot(runs) == before
    shutil.rmtree(runs)
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentor.cli import main

    out = tmp_path / "report.md"
    out.write_text("keep me")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert main(["export", "c0f1f8ee", "--store", str(SAMPLES), "-o", str(out)]) == 1
    assert capsys.readouterr().err == (
        f"agentor export: cannot write {out}: No space left on device\n"
    )
    assert out.read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


# -- search --------------------------------------------------------------------------------------


def hit_line(h: object) -> str:
    d = asdict(h)  # type: ignore[call-overload]
    return f"{d['run_id']}:{d['line']}  {d['type']}  {d['field']}  {d['snippet']}"


def test_search_prints_run_line_and_snippet_one_hit_a_line(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLES, runs)
    proc = agentor("search", str(runs), "oslo")
    assert proc.returncode == 0, proc.stderr
    expected = [hit_line(h) for h in search(FileStore(runs), "oslo")]
    assert proc.stdout.splitlines() == expected and len(expected) >= 5
    for line in expected:  # each names a line of a log that holds the text
        where, _, _ = line.partition("  ")
        run_id, _, number = where.partition(":")
        text = (runs / f"{run_id}.jsonl").read_text().splitlines()[int(number) - 1]
        assert "oslo" in text.lower()

    proc = agentor("search", "--store", str(runs), "Hel+sinki", "--regex", "--json")
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)
    assert hits == [asdict(h) for h in search(FileStore(runs), "Hel+sinki", regex=True)]
    assert hits and all(h["snippet"][h["start"] : h["end"]] == "Helsinki" for h in hits)


def test_no_hit_is_exit_1_and_an_error_exit_2(tmp_path: Path) -> None:
    proc = agentor("search", str(SAMPLES), "no such text anywhere")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "")
    proc = agentor("search", str(SAMPLES), "nothing", "--json")
    assert (proc.returncode, proc.stdout) == (1, "[]\n")
    cases = [
        (["search", str(SAMPLES), "(unclosed", "--regex"], "not a regular expression: '(unclosed'"),
        (["search", str(tmp_path / "nope"), "x"], f"no such directory: {tmp_path / 'nope'}"),
        (["search", str(SAMPLES), ""], "search for what? give a non-empty query"),
    ]
    for args, says in cases:
        assert refused(agentor(*args), 2).startswith(f"agentor search: error: {says}")


def test_search_takes_its_options_anywhere_and_a_query_after_dashes(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    store = FileStore(runs)
    write_run(store, "r1", age_days=1, now=time.time(), prompt="What is --verbose in Oslo?")
    expected = "r1:1  run_start  messages[0].content  What is --verbose in Oslo?\n"
    for args in (
        [str(runs), "oslo"],
        ["oslo", "--store", str(runs)],
        ["--store", str(runs), "oslo"],
        [f"--store={runs}", "oslo"],
        [str(runs), "--", "--verbose"],
        ["--store", str(runs), "--", "--verbose"],
    ):
        proc = agentor("search", *args)
        assert (proc.returncode, proc.stdout.splitlines(True)[:1]) == (0, [expected]), args
    assert "unrecognized arguments: --verbose" in refused(
        agentor("search", str(runs), "--verbose"), 2
    )


def test_escape_sequences_in_a_log_never_reach_the_terminal(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    store = FileStore(runs)
    write_run(store, "evil", age_days=1, now=time.time())
    evil = "weather\x1b[2J\x1b]52;c;cHduZWQ=\x07 report\x9b31m\u202eok"
    store.append("evil", Event(TOOL_RESULT, call_id="c1", name="get\x1b[31mweather", result=evil))
    proc = agentor("search", str(runs), "report")
    assert proc.returncode == 0, proc.stderr
    assert not set(proc.stdout) & {"\x1b", "\x07", "\x9b", "\u202e"}
    line = proc.stdout.splitlines()[-1]
    assert line.startswith("evil:4  tool_result  result  weather␛[2J␛]52;c;cHduZWQ=␇ report")


def on_a_terminal(*args: str, env: dict[str, str] | None = None) -> str:
    """What the command writes to a terminal (a pty) as its stdout."""
    primary, secondary = pty.openpty()
    try:
        proc = subprocess.Popen(
            [str(SCRIPT), *args],
            cwd=ROOT,
            env={**ENV, **(env or {})},
            stdout=secondary,
            stderr=subprocess.DEVNULL,
        )
        os.close(secondary)
        out = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            out += chunk
        assert proc.wait(timeout=30) == 0
    finally:
        os.close(primary)
    return out.decode()


def test_matches_are_bold_on_a_terminal_only() -> None:
    lines = on_a_terminal("search", str(SAMPLES), "helsinki").splitlines()
    assert lines and all("\x1b[1mHelsinki\x1b[0m" in line for line in lines), lines
    assert "\x1b" not in agentor("search", str(SAMPLES), "helsinki").stdout  # a pipe: none
    plain = on_a_terminal("search", str(SAMPLES), "helsinki", env={"NO_COLOR": "1"})
    assert "Helsinki" in plain and "\x1b" not in plain


def test_a_directory_that_cannot_be_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentor.cli import main
    from agentor.ops import run_search as search_module

    def denied(*args: object) -> list[str]:
        raise PermissionError(13, "Permission denied")

    runs = tmp_path / "runs"
    write_run(FileStore(runs), "r1", age_days=40, now=time.time())
    monkeypatch.setattr(FileStore, "list_runs", denied)
    monkeypatch.setattr(search_module, "run_files", denied)
    assert main(["prune", str(runs), "--older-than", "1d"]) == 1
    assert capsys.readouterr().err == f"agentor prune: cannot prune {runs}: Permission denied\n"
    assert main(["search", str(runs), "weather"]) == 2
    assert capsys.readouterr().err == (
        f"agentor search: error: cannot search {runs}: Permission denied\n"
    )
    assert (runs / "r1.jsonl").exists()
