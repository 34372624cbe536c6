"""Fleet kit: workers in child processes, killed at chosen moments (tests/test_fleet_crash.py).

The agent is crashkit's "parallel" scenario: one turn asks `get_weather` for London and Paris at
once, the next answers. Its model is in process (`crashkit.scripted_model`, stateless: any
process resumes the run) and writes a line to `model_log` per request; every execution of a
tool is a line in `tool_log`, so a test counts both across processes.

- `Place`: where a test's runs live, a FileStore directory or a schema of the test server;
  `open()` opens it in this process, `cfg()` names it for a child.
- `run_child(cfg)`: a `Worker` in a child (forked from a `crashkit.Zygote`, or a fresh
  interpreter: `python -m tests.fleetkit child CFG`). Its store SIGKILLs the process right
  after its `kill_after`-th event is durable (one event per write: every prefix of the log is
  a crash point); its reports are lines of `out`; each look for runs adds a line to `looks`.
  SIGTERM stops it as `agentor worker` stops.
- `parallel()` / `poison()`: the agents `agentor worker --agent tests/fleetkit.py:parallel`
  loads, configured by environment variables (`agent_env`).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentor import Agentor, function_tool
from agentor.engine.models import ModelResponse
from agentor.engine.store.api import Store
from agentor.engine.store.postgres import PostgresStore
from agentor.fleet.worker import Report, Worker
from tests import crashkit

WEATHER_AGENT = "parallel agent"


@dataclass(frozen=True)
class Place:
    """A FileStore directory (`dsn` None) or a schema of a PostgreSQL server."""

    directory: str | None = None
    dsn: str | None = None
    schema: str | None = None

    @property
    def spec(self) -> str:
        """What `agentor --store` takes."""
        return self.dsn if self.dsn is not None else str(self.directory)

    def cli(self) -> list[str]:
        return ["--store", self.spec] + (["--schema", self.schema] if self.schema else [])

    def cfg(self) -> dict[str, Any]:
        return {"directory": self.directory, "dsn": self.dsn, "schema": self.schema}

    def open(self, kill_after: int | None = None) -> Store:
        if self.dsn is not None:
            return KillingPgStore(self.dsn, self.schema, kill_after)
        return crashkit.KillingStore(str(self.directory), kill_after)


class KillingPgStore(crashkit.KillsAfter, PostgresStore):
    """crashkit.KillingStore's twin on PostgreSQL: SIGKILL after the `kill_after`-th event is
    committed."""

    def __init__(self, dsn: str, schema: str | None, kill_after: int | None) -> None:
        super().__init__(dsn, schema=schema or "agentor")
        self.kill_after = kill_after


# -- the agents ------------------------------------------------------------------------------


def _note(path: str | None, line: str) -> None:
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


class NotedModel:
    """`crashkit.scripted_model()`, noting each request in `log`; while the file `gate` is
    missing a request waits for it (after noting that it started, in `started`)."""

    def __init__(self, log: str | None, gate: str | None = None, started: str | None = None):
        self.model = crashkit.scripted_model()
        self.name = self.model.name
        self.log, self.gate, self.started = log, gate, started

    async def generate(self, messages: Any, tools: Any, on_text: Any = None) -> ModelResponse:
        _note(self.log, "generate")
        if self.gate is not None:
            _note(self.started, "generate")
            while not os.path.exists(self.gate):
                await asyncio.sleep(0.005)
        return await self.model.generate(messages, tools, on_text)


def weather_agent(store: Store | None, cfg: dict[str, Any], name: str = WEATHER_AGENT) -> Agentor:
    """The parallel scenario's agent; cfg: tool_log, model_log, hang_on, tool_started,
    release (crashkit.build_agent), model_gate, model_started (NotedModel)."""
    model = NotedModel(cfg.get("model_log"), cfg.get("model_gate"), cfg.get("model_started"))
    agent = crashkit.build_agent(
        "parallel",
        store,
        "http://127.0.0.1:9/v1",  # never asked: the model is in process
        tool_log=cfg.get("tool_log"),
        hang_on=cfg.get("hang_on"),
        tool_started=cfg.get("tool_started"),
        model=model,
        release=cfg.get("release"),
    )
    return agent.clone(name=name)


def agent_env(**cfg: str) -> dict[str, str]:
    """Environment variables configuring `parallel()` / `poison()` in a child."""
    return {"FLEETKIT": json.dumps(cfg)}


def _env_cfg() -> dict[str, Any]:
    return json.loads(os.environ.get("FLEETKIT", "{}"))


def parallel() -> Agentor:
    return weather_agent(None, _env_cfg())


def poison() -> Agentor:
    """An agent whose tool kills its own process, every time (after noting it ran)."""
    cfg = _env_cfg()

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: The city to look up.
        """
        _note(cfg.get("tool_log"), f"get_weather {city}")
        os.kill(os.getpid(), signal.SIGKILL)
        return "unreachable"

    return Agentor(
        WEATHER_AGENT,
        model=NotedModel(cfg.get("model_log")),
        tools=[get_weather],
        instructions="You are a careful assistant.",
    )


# -- a worker in a child ------------------------------------------------------------------------


def run_child(cfg: dict[str, Any]) -> None:
    """See the module. cfg: the Place's fields, kill_after, concurrency, poll, agents (names),
    out, looks, ready (a file made once the worker runs), barrier (a file to wait for first),
    and the agent's (`weather_agent`)."""
    place = Place(cfg.get("directory"), cfg.get("dsn"), cfg.get("schema"))
    store = place.open(cfg.get("kill_after"))
    agents = [weather_agent(store, cfg, name) for name in cfg.get("agents", [WEATHER_AGENT])]
    worker = Worker(
        store,
        agents,
        concurrency=cfg.get("concurrency", 1),
        poll_interval=cfg.get("poll", 0.2),
        report=lambda r: _note(cfg.get("out"), _report_line(r)),
    )
    looking = worker.finder.candidates

    def counted(limit: int) -> Any:
        found = looking(limit)
        _note(cfg.get("looks"), str(len(found)))
        return found

    worker.finder.candidates = counted  # type: ignore[method-assign]
    if cfg.get("barrier"):
        Path(cfg["ready"]).touch()
        while not os.path.exists(cfg["barrier"]):
            time.sleep(0.002)
    asyncio.run(_serve(worker))
    _note(cfg.get("out"), "exited")


async def _serve(worker: Worker) -> None:
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, worker.stop)
    await worker.run()


def _report_line(r: Report) -> str:
    return json.dumps({"kind": r.kind, "run_id": r.run_id, "text": r.text, "pid": os.getpid()})


def spawn(cfg: dict[str, Any]) -> subprocess.Popen[bytes]:
    """`run_child(cfg)` in a fresh interpreter (for workers that must start together)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fleetkit", "child", json.dumps(cfg)],
        cwd=crashkit.ROOT,
        env=crashkit.child_env(),
        stdin=subprocess.DEVNULL,
    )


def reports(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The reports a child wrote to `out` about runs (not "exited", nor that it was stopping)."""
    try:
        lines = Path(path).read_text().splitlines()
    except FileNotFoundError:
        return []
    found = [json.loads(line) for line in lines if line.startswith("{")]
    return [r for r in found if r["kind"] != "stopping"]


def file_lines(path: str | os.PathLike[str]) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except FileNotFoundError:
        return []


if __name__ == "__main__":
    if sys.argv[1] == "child":
        run_child(json.loads(sys.argv[2]))
    elif sys.argv[1] == "zygote":
        crashkit.zygote_main(run_child)
    else:
        raise SystemExit(f"unknown command {sys.argv[1]!r}")
