"""`agentor-tui` as a user runs it: a real process in a real terminal (tmux), keys sent to it.

A resume is abandoned while its tool's thread runs (`r`, `q`, `q`): the process must end at once
(a non-daemon thread would otherwise keep it alive), say on stderr what was lost, restore the
terminal, and leave the run free for the next resume.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentor.engine.events import Event
from agentor.engine.store.file import FileStore
from tests.conftest import ROOT

TMUX = shutil.which("tmux") or "/usr/bin/tmux"
SCRIPT = Path(sys.executable).parent / "agentor-tui"

AGENT_FILE = '''
import os, time
from agentor import Agentor, function_tool
from agentor.engine.events import Usage
from agentor.engine.models import ModelResponse

def note(line):
    with open(os.environ["TOOL_LOG"], "a") as f:
        f.write(line + "\\n")

@function_tool
def get_weather(city: str) -> str:
    """The weather in a city (blocks until the test releases it)."""
    note("start " + city)
    deadline = time.time() + 60
    while not os.path.exists(os.environ["RELEASE"]) and time.time() < deadline:
        time.sleep(0.02)
    note("end " + city)
    return "Sunny in " + city + "."

class AsksForTheTool:
    name = "scripted"

    async def generate(self, messages, tools, on_text=None):
        if messages[-1]["role"] == "tool":
            return ModelResponse(text="Sunny.", usage=Usage(1, 1, 2))
        call = {"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
        return ModelResponse(calls=[call], usage=Usage(1, 1, 2))

agent = Agentor(name="Weather Agent", model=AsksForTheTool(), tools=[get_weather])
'''


class Terminal:
    """A tmux server of our own (its own socket) running one command in a 120x35 window."""

    def __init__(self, tmp: Path) -> None:
        if not Path(TMUX).exists():
            pytest.fail(f"this test needs tmux (looked for {TMUX}): install it (apt install tmux)")
        self.socket = f"agentor-test-{os.getpid()}-{id(self):x}"

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def start(self, command: str, env: dict[str, str]) -> None:
        # COLUMNS and LINES (set under pytest) would override the terminal's real size.
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        self.tmux(
            "new-session", "-d", "-s", "tui", "-x", "120", "-y", "35",
            f"cd {ROOT} && env -u COLUMNS -u LINES {exports} {command}",
        )  # fmt: skip

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "tui", *keys)

    def screen(self) -> str:
        """What the window shows, lines the terminal wrapped joined again."""
        return self.tmux("capture-pane", "-p", "-J", "-t", "tui")

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path)
    try:
        yield term
    finally:
        term.close()


def wait(check: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_resume_abandoned_during_a_tool_ends_the_process_with_a_warning_and_frees_the_run(
    tmp_path: Path, terminal: Terminal
) -> None:
    runs = tmp_path / "runs"
    run_id = "oslo-job"
    start = Event("run_start", agent="Weather Agent", model="scripted")
    start.messages = [{"role": "user", "content": "Weather in Oslo?"}]
    FileStore(runs).append(run_id, start)
    (tmp_path / "agent_x9.py").write_text(AGENT_FILE)
    tool_log, release = tmp_path / "tool.log", tmp_path / "release"
    status = tmp_path / "status.txt"
    tui = str(SCRIPT) if SCRIPT.exists() else f"{sys.executable} -m tui"
    # (Textual draws on stderr: the warning is read where the user reads it, on the terminal.)
    command = (
        f"{tui} {runs} --agent {tmp_path / 'agent_x9.py'}:agent --no-watch; "
        f"echo $? >{status}; sleep 60"
    )
    try:
        terminal.start(command, {"TOOL_LOG": str(tool_log), "RELEASE": str(release)})
        wait(lambda: "oslo-job" in terminal.screen(), 20, "the run list")
        terminal.keys("r")
        wait(lambda: tool_log.exists() and "start Oslo" in tool_log.read_text(), 20, "the tool")
        terminal.keys("q")
        waiting = "quitting: waiting for get_weather to finish"
        wait(lambda: waiting in terminal.screen(), 10, "the screen to say what it waits for")
        assert FileStore(runs).is_locked(run_id)  # still held: the tool runs

        terminal.keys("q")
        pressed = time.monotonic()
        wait(lambda: status.exists() and status.read_text().strip(), 10, "the process to end")
        took = time.monotonic() - pressed
    finally:
        release.touch()
    assert took < 5, f"the process took {took:.1f}s to end"
    assert status.read_text().strip() == "1"
    # The terminal is back to the shell (no alternate screen), and the warning is on it.
    assert terminal.tmux("display", "-p", "-t", "tui", "#{alternate_on}").strip() == "0"
    shown = terminal.screen()
    assert (
        "agentor-tui: warning: quit without waiting for get_weather to finish (resume of run "
        "oslo-job): its result will not be recorded, and the run will run get_weather again on "
        "the next resume."
    ) in shown
    assert "Traceback" not in shown
    # The tool's thread died with the process; the run is free, its call left without result.
    assert tool_log.read_text() == "start Oslo\n"
    assert not FileStore(runs).is_locked(run_id)
    assert [e.type for e in FileStore(runs).load(run_id)][-1] == "tool_call"


def test_ctrl_c_quits_the_app_in_a_terminal_without_a_traceback(
    tmp_path: Path, terminal: Terminal
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    status = tmp_path / "status.txt"
    tui = str(SCRIPT) if SCRIPT.exists() else f"{sys.executable} -m tui"
    terminal.start(f"{tui} {runs} --no-watch; echo $? >{status}; sleep 60", {})
    wait(lambda: "No runs yet" in terminal.screen(), 20, "the app")
    terminal.keys("C-c")
    wait(lambda: status.exists() and status.read_text().strip(), 10, "the process to end")
    assert status.read_text().strip() == "0"
    assert terminal.tmux("display", "-p", "-t", "tui", "#{alternate_on}").strip() == "0"
    assert terminal.screen().strip() == ""  # nothing printed: no hint, no traceback
