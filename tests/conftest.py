"""Shared fixtures: the fake OpenAI server, a weather agent, a scripted model, child processes.

Child processes are real interpreters running `CHILD_AGENT` (the seed page's weather agent on a
FileStore) against the fake server through `OPENAI_BASE_URL` / `OPENAI_API_KEY`, so crash tests
kill a process that really holds the log open and resume from nothing but the run id.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from agentor import Agentor, function_tool
from tests import settled_pilot
from tests.openai_server import FakeOpenAI
from tests.pg_support import pg_dsn, pg_stores  # noqa: F401 (fixtures for every test module)

ROOT = Path(__file__).resolve().parent.parent
# Real logs written by upstream Agentor 0.1.1 (a copy of shared/fixtures, read-only).
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "upstream-agentor-0.1.1"

INSTRUCTIONS = "You are a helpful weather assistant."

# Property tests draw the same examples on every run and every machine (derandomize: a seed
# derived from each test), and replay none from a local examples database that another checkout
# lacks: a failure in CI reproduces with a plain `make test`. bench/fuzz_loader.py explores
# with fresh seeds instead.
settings.register_profile("agentor", derandomize=True, database=None)
settings.load_profile("agentor")
# Pilot's pauses wait for the app's messages, not for the CPU to look idle (a busy machine's
# processes always look idle): tests/settled_pilot.py.
settled_pilot.install()


# The events of a finished one-tool run, in order.
FULL_RUN = [
    "run_start",
    "generation",
    "tool_call",
    "tool_result",
    "generation",
    "message",
    "run_end",
]


def crash_after_tool_result(path: Path) -> None:
    """Cut a finished one-tool log back to what a kill before the reply leaves."""
    lines = path.read_bytes().splitlines(keepends=True)
    assert [json.loads(line)["type"] for line in lines] == FULL_RUN
    path.write_bytes(b"".join(lines[:4]))


def weather_text(city: str) -> str:
    return f"The weather in {city} is sunny and 22C."


# -- the fake server and agents on it ------------------------------------------------------------


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running FakeOpenAI (weather script by default; assign `.script` to change it)."""
    with FakeOpenAI() as srv:
        yield srv


class WeatherAgents:
    """Builds the seed page's weather agent on the fake server; counts tool executions."""

    def __init__(self, srv: FakeOpenAI) -> None:
        self.srv = srv
        self.executed: list[str] = []  # cities, one entry per real execution of get_weather

    def __call__(self, store: Any = None, tools: Sequence[Any] = (), **kwargs: Any) -> Agentor:
        executed = self.executed

        @function_tool
        def get_weather(city: str) -> str:
            """Get the current weather for a city.

            Args:
                city: The city to look up.
            """
            executed.append(city)
            return weather_text(city)

        kwargs.setdefault("max_retries", 0)
        kwargs.setdefault("base_url", self.srv.url)
        kwargs.setdefault("api_key", "sk-test")
        kwargs.setdefault("instructions", INSTRUCTIONS)
        return Agentor(
            name="Weather Agent",
            model="gpt-4o-mini",
            tools=[get_weather, *tools],
            store=store,
            **kwargs,
        )


@pytest.fixture
def weather_agent(fake_openai: FakeOpenAI) -> WeatherAgents:
    """`weather_agent(store=..., tools=[...], **kw)` -> Agentor; `.executed` lists tool runs."""
    return WeatherAgents(fake_openai)


# -- files and waiting ---------------------------------------------------------------------------


def wait_for(predicate: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll until `predicate()` is truthy; its value is returned."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def log_lines(path: Path) -> list[dict[str, Any]]:
    """The whole lines of a log, decoded (raises if one is not JSON)."""
    data = path.read_bytes() if path.exists() else b""
    return [json.loads(line) for line in data.splitlines(keepends=True) if line.endswith(b"\n")]


def log_types(path: Path) -> list[str]:
    return [d["type"] for d in log_lines(path)]


def only_run(directory: Path) -> str:
    """The id of the single run in a FileStore directory (waits for it to appear)."""
    files = wait_for(lambda: sorted(directory.glob("*.jsonl")), what=f"a run file in {directory}")
    assert len(files) == 1, files
    return files[0].name.removesuffix(".jsonl")


def counted(path: Path) -> list[str]:
    """Lines of a tool-execution count file (one line per execution)."""
    return path.read_text().splitlines() if path.exists() else []


# -- child processes -------------------------------------------------------------------------------

# The seed page's agent.py, parameterised by environment variables:
#   RUNS_DIR     FileStore directory
#   COUNT_FILE   get_weather appends "<city>" here each time it really runs
#   BLOCK_CITY   get_weather blocks forever (after counting) for these cities (comma-separated)
#   BLOCK_AFTER  the store blocks forever once an event of this type is durably saved
CHILD_AGENT = textwrap.dedent(
    """
    import os, sys, time
    from agentor import Agentor, function_tool
    from agentor.engine.store.file import FileStore

    BLOCK_CITY = set(filter(None, os.environ.get("BLOCK_CITY", "").split(",")))
    BLOCK_AFTER = os.environ.get("BLOCK_AFTER")

    @function_tool
    def get_weather(city: str) -> str:
        \"\"\"Get the current weather for a city.

        Args:
            city: The city to look up.
        \"\"\"
        with open(os.environ["COUNT_FILE"], "a") as f:
            f.write(city + "\\n")
        if city in BLOCK_CITY:
            time.sleep(3600)
        return f"The weather in {city} is sunny and 22C."

    class Store(FileStore):
        def append_many(self, run_id, events):
            events = list(events)
            super().append_many(run_id, events)
            if BLOCK_AFTER and any(e.type == BLOCK_AFTER for e in events):
                time.sleep(3600)

    agent = Agentor(
        name="Weather Agent",
        model="gpt-4o-mini",
        instructions="You are a helpful weather assistant.",
        tools=[get_weather],
        store=Store(os.environ["RUNS_DIR"]),
        max_retries=0,
    )
    """
)


class Children:
    """Starts `python -c CODE` children with the fake server in their environment."""

    def __init__(self, srv: FakeOpenAI, tmp_path: Path) -> None:
        self.runs_dir = tmp_path / "runs"
        self.count_file = tmp_path / "tool-runs.txt"
        self.env = {
            **os.environ,
            "OPENAI_BASE_URL": srv.url,
            "OPENAI_API_KEY": "sk-test",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "RUNS_DIR": str(self.runs_dir),
            "COUNT_FILE": str(self.count_file),
        }
        self.started: list[subprocess.Popen[str]] = []

    def _env(self, extra: dict[str, str]) -> dict[str, str]:
        return {**self.env, **extra}

    def run(self, code: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
        """Run to the end; fail the test (with the child's stderr) if it exits non-zero."""
        proc = subprocess.run(
            [sys.executable, "-c", code],
            env=self._env(env),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert proc.returncode == 0, f"child failed ({proc.returncode}):\n{proc.stderr}"
        return proc

    def spawn(self, code: str, **env: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", code],
            env=self._env(env),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.started.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen[str]) -> None:
        """SIGKILL the child and reap it."""
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""

    def close(self) -> None:
        for proc in self.started:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def children(fake_openai: FakeOpenAI, tmp_path: Path) -> Iterator[Children]:
    """`children.run(code, **env)` / `.spawn(code, **env)`: Python children on the fake server."""
    kids = Children(fake_openai, tmp_path)
    yield kids
    kids.close()


# -- notes on screen -----------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def notes_outlast_a_busy_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test app's toasts stay up until a newer note of their kind (or the few-at-most
    rule) takes them down, never by their timer: on a busy machine a 5-second note could leave
    before the test looks. What the app asked of each note's life is kept in
    `app.shown_notes.asked` (tests/test_notices.py checks the limits on a `ShownNotes` of its
    own)."""
    import tui.app
    from tui.shown_notes import ShownNotes

    class LastingNotes(ShownNotes):
        def __init__(self) -> None:
            super().__init__()
            self.asked: list[float] = []

        def notification(self, note: Any) -> Any:
            made = super().notification(note)
            self.asked.append(made.timeout)
            made.timeout = 3600.0
            return made

    monkeypatch.setattr(tui.app, "ShownNotes", LastingNotes)
