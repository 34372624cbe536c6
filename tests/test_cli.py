"""The command line: `agentor-tui [DIR] [--agent SPEC]... [--no-watch] [--version] [--help]`
(a database as the store: tests/test_cli_postgres.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import agentor
from agentor.sources.directory.source import DirectorySource
from tui.cli import main

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "agentor-tui"


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`python -m tui ARGS` in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_version_is_the_engine_version_and_exits_0() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"agentor-tui {agentor.__version__}\n"


@pytest.mark.skipif(not SCRIPT.exists(), reason="the console script is not installed")
def test_the_console_script_prints_the_version() -> None:
    proc = subprocess.run([str(SCRIPT), "--version"], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, f"agentor-tui {agentor.__version__}\n")


def test_version_and_help_import_neither_openai_nor_textual_nor_the_engine() -> None:
    for flag in ("--version", "--help"):
        code = (
            "import sys\n"
            "from tui.cli import main\n"
            "try:\n"
            f"    main([{flag!r}])\n"
            "except SystemExit as exc:\n"
            "    assert exc.code == 0, exc.code\n"
            "heavy = ('openai', 'textual', 'pydantic', 'agentor')\n"
            "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.strip() == "[]", flag


def test_help_lists_the_options() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    words = ("STORE", "--agent SPEC", "--any-agent", "--by NAME", "--no-watch", "--version")
    for word in (*words, "default: runs"):
        assert word in proc.stdout


def test_a_missing_directory_is_a_one_line_error(tmp_path: Path) -> None:
    proc = run_cli(str(tmp_path / "nope"))
    assert proc.returncode == 2
    assert proc.stderr == f"agentor-tui: error: no such directory: {tmp_path / 'nope'}\n"
    assert proc.stdout == ""


def test_dir_defaults_to_runs(tmp_path: Path) -> None:
    proc = run_cli(cwd=tmp_path)  # no ./runs here
    assert (proc.returncode, proc.stderr) == (2, "agentor-tui: error: no such directory: runs\n")


def test_a_file_that_is_not_a_run_log_is_a_one_line_error_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "bad name!.jsonl").write_text('{"type": "run_start"}\n')
    (tmp_path / "data.jsonl").write_text('[1, 2]\n{"type": "run_start"}\n')
    (tmp_path / "fifo.jsonl").unlink(missing_ok=True)
    os.mkfifo(tmp_path / "fifo.jsonl")
    cases = {
        "notes.txt": "a run log is named <run id>.jsonl, in a FileStore directory",
        "bad name!.jsonl": "'bad name!' is not a run id (use 1 to 128 characters",
        "data.jsonl": "its first line is not an event (",
        "fifo.jsonl": "not a regular file",
    }
    for name, why in cases.items():
        path = tmp_path / name
        assert main([str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"agentor-tui: error: not a run log: {path}: {why}"), err
        assert err.count("\n") == 1


def test_a_run_log_opens_its_directory_with_that_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = fake_app(monkeypatch)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "job-42.jsonl").write_text('{"type": "run_start", "agent": "A"}\n')
    (runs / "starting.jsonl").write_text("")  # a run being created: nothing written yet
    (tmp_path / "latest.jsonl").symlink_to(runs / "job-42.jsonl")
    for arg, run_id in (("runs/job-42.jsonl", "job-42"), ("latest.jsonl", "job-42")):
        monkeypatch.chdir(tmp_path)
        assert main([arg, "--no-watch"]) == 0
        source = started[-1]["source"]
        assert isinstance(source, DirectorySource) and source.directory == runs.resolve()
        assert started[-1]["run_id"] == run_id
    assert main([str(runs / "starting.jsonl")]) == 0
    assert started[-1]["run_id"] == "starting" and started[-1]["watch"] is True
    assert main([str(runs)]) == 0
    assert started[-1]["run_id"] is None


def test_bad_agent_specs_are_one_line_errors_naming_the_cause(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken_cli_x1.py").write_text("import missing_dependency_x1\n")
    (tmp_path / "plain_cli_x2.py").write_text("agent = 'not an agent'\n")
    cases = {
        f"{tmp_path / 'nope.py'}:agent": "no such file",
        f"{tmp_path / 'plain_cli_x2.py'}:agnt": "no attribute 'agnt'",
        f"{tmp_path / 'plain_cli_x2.py'}:agent": "not an Agentor: agent is a str",
        f"{tmp_path / 'broken_cli_x1.py'}:agent": "import error: ModuleNotFoundError",
        "no_such_package_x3.mod:agent": "no module named 'no_such_package_x3'",
        "noseparator": "expected path/to/file.py:name",
    }
    for spec, cause in cases.items():
        assert main([str(tmp_path), "--agent", spec]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"agentor-tui: error: --agent {spec}: "), err
        assert cause in err and err.count("\n") == 1, err


def test_bad_agent_in_a_fresh_process_exits_2(tmp_path: Path) -> None:
    proc = run_cli(str(tmp_path), "--agent", "missing.py:agent", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "agentor-tui: error: --agent missing.py:agent: no such file: missing.py\n"


def fake_app(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """`RunsApp` replaced: what each start was given."""
    started: list[dict[str, Any]] = []

    class FakeApp:
        return_code = 0

        def __init__(self, **kwargs: Any) -> None:
            self.kwargs = kwargs

        async def run_async(self) -> None:
            started.append(self.kwargs)

    fake = types.ModuleType("tui.app")
    fake.RunsApp = FakeApp  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tui.app", fake)
    return started


def test_good_arguments_start_the_app_with_the_directory_and_agents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = fake_app(monkeypatch)
    (tmp_path / "my_agent_cli_x4.py").write_text(
        "from agentor import Agentor\nagent = Agentor(name='Mine', model='gpt-4o-mini')\n"
    )
    monkeypatch.setattr(sys, "path", list(sys.path))

    assert main([str(tmp_path), "--agent", f"{tmp_path / 'my_agent_cli_x4.py'}:agent"]) == 0
    assert main([str(tmp_path), "--no-watch"]) == 0
    spec = f"{tmp_path / 'my_agent_cli_x4.py'}:agent"
    assert main([str(tmp_path), "--agent", spec, "--any-agent"]) == 0
    assert main([str(tmp_path), "--by", "alice"]) == 0
    first, second, third, fourth = started
    assert first["source"].directory == tmp_path and first["watch"] is True
    assert first["agents"].names == ["Mine"] and first["agents"].any_agent is False
    assert first["by"] is None  # decisions are recorded as user@host
    assert second["watch"] is False and len(second["agents"]) == 0
    assert third["agents"].any_agent is True
    assert fourth["by"] == "alice"


def test_a_blank_by_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--by", " "]) == 2
    expected = "agentor-tui: error: --by names who decides; give a non-empty name or leave it out\n"
    assert capsys.readouterr().err == expected


def test_any_agent_needs_exactly_one_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = (
        "agentor-tui: error: --any-agent needs exactly one --agent (the agent to resume "
        "every run with)\n"
    )
    assert main([str(tmp_path), "--any-agent"]) == 2
    assert capsys.readouterr().err == expected
    spec = f"{ROOT / 'examples' / 'weather.py'}:agent"
    assert main([str(tmp_path), "--any-agent", "--agent", spec, "--agent", spec]) == 2
    assert capsys.readouterr().err == expected
