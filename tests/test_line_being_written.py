"""A line its writer is still writing (no newline yet) in a run the writer holds: the run list
says the run is running, and `agentor show` / `ls` count that line as no bad line; once nobody
holds the run, a line left without its newline is what a crash tore, and `show` says so. The
holder is another process (a real flock)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from agentor.sources.directory import source as directory_source
from agentor.sources.directory.source import DirectorySource
from tests.conftest import FIXTURES, ROOT
from tests.test_agentor_command import ENV, agentor

RUN = "a" * 32
HOLDER = """
import sys
from agentor.engine.store.file import FileStore
store = FileStore(sys.argv[1])
with store.lock(sys.argv[2]):
    with open(store.path(sys.argv[2]), "ab") as f:
        f.write(sys.stdin.buffer.readline().rstrip(b"\\n"))  # a line without its newline
    print("holding", flush=True)
    sys.stdin.read()  # until the test lets go
"""
FIRST_LINE_BEGUN = b'{"type": "run_start", "agent": "Weather Agent", "mess'


class Holder:
    """Another process holding the run, having written `begun` to it without a newline."""

    started: ClassVar[list[Holder]] = []

    def __init__(self, runs: Path, begun: bytes) -> None:
        Holder.started.append(self)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(runs), RUN],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
            env=ENV,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(begun + b"\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == b"holding\n"

    def let_go(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Path]:
    runs = tmp_path / "runs"
    runs.mkdir()
    yield runs
    for holder in Holder.started:  # a test that failed before letting go
        if holder.proc.poll() is None:
            holder.proc.kill()
            holder.proc.wait()
    Holder.started.clear()


def listed_status(runs: Path) -> tuple[str, str | None]:
    source = DirectorySource(runs)
    source.scan()
    row = source.get(RUN)
    assert row is not None
    return row.status, row.error


@pytest.mark.parametrize("quick", [False, True], ids=["read whole", "quick rows"])
def test_a_first_line_being_written_lists_as_running_while_held(
    runs: Path, monkeypatch: pytest.MonkeyPatch, quick: bool
) -> None:
    if quick:
        monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 0)
    holder = Holder(runs, FIRST_LINE_BEGUN)
    assert listed_status(runs) == ("running", None)
    watching = DirectorySource(runs)
    watching.scan()
    with open(runs / f"{RUN}.jsonl", "ab") as f:
        f.write(b'ages": [')  # more of the same line
    watching.refresh()
    assert watching.get(RUN).status == "running"  # type: ignore[union-attr]
    holder.let_go()
    assert listed_status(runs) == ("unreadable", "no complete line")


def test_show_and_ls_count_no_line_being_written_as_bad(runs: Path) -> None:
    whole = (FIXTURES / "b9ba499c543548d886efde61e1f1c8e3.jsonl").read_bytes()  # interrupted
    (runs / f"{RUN}.jsonl").write_bytes(whole)
    holder = Holder(runs, b'{"type": "message", "text": "The weath')
    shown = agentor("show", RUN, "--store", str(runs))
    assert shown.returncode == 0, shown.stderr
    assert "status   running" in shown.stdout
    assert "unreadable" not in shown.stdout and "error" not in shown.stdout
    [row] = json.loads(agentor("ls", str(runs), "--json").stdout)
    assert (row["status"], row["error"]) == ("running", None)
    holder.let_go()

    torn = agentor("show", RUN, "--store", str(runs))  # nobody writes it now: a crash tore it
    assert "status   interrupted" in torn.stdout
    assert "unreadable  line 4 (byte 831)" in torn.stdout and "torn line" in torn.stdout
    # The run's row is the run list's: interrupted, its whole lines read (the torn one is what
    # a resume cuts before it appends).
    [row] = json.loads(agentor("ls", str(runs), "--json").stdout)
    assert (row["status"], row["error"]) == ("interrupted", None) == listed_status(runs)
