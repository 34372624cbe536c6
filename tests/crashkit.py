"""Crash kit for the reliability suite: scripted agents, a store that kills its own process, and
ways to run an agent in a child process that can be SIGKILLed at a chosen moment.

Two scenarios, both served by `script` through `tests.openai_server.FakeOpenAI`:

- "parallel": one generation asks `get_weather` for London and Paris at once, then answers.
  Events: run_start, generation, tool_call x2, tool_result x2, generation, message, run_end (9).
- "three_turn": `step(n=1)`, then `step(n=2)`, then the answer.
  Events: run_start, (generation, tool_call, tool_result) x2, generation, message, run_end (10).

Every tool execution appends one line ("get_weather London") to a file, so a test can count
executions across processes.

Children are started either as a fresh interpreter (`spawn`, for races that need separate
processes started together) or forked from a `Zygote`: one interpreter that has already paid
for the imports (openai alone is about a second) and forks a child per case, so killing after
every event stays cheap. The zygote never starts a thread or an event loop before it forks.

Run as `python -m tests.crashkit child CONFIG_JSON` or `python -m tests.crashkit zygote`.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agentor import Agentor, function_tool
from agentor.engine.events import Event, Usage
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.errors import RunLockedError
from agentor.testing import ScriptedModel, tool_call

from .openai_server import weather_script

ROOT = Path(__file__).resolve().parents[1]

WEATHER_PROMPT = "What is the weather in London and Paris?"
WEATHER_ANSWER = "The weather in London is sunny and 22C. The weather in Paris is sunny and 22C."
STEPS_PROMPT = "Run the steps."
STEPS_ANSWER = "finished: step 1 done, step 2 done"
PROMPTS = {"parallel": WEATHER_PROMPT, "three_turn": STEPS_PROMPT}
ANSWERS = {"parallel": WEATHER_ANSWER, "three_turn": STEPS_ANSWER}
EVENT_COUNTS = {"parallel": 9, "three_turn": 10}


# -- the model side ---------------------------------------------------------------------------


def script(request: dict[str, Any]) -> dict[str, Any]:
    """Both scenarios, told apart by the tools offered; stateless, so any process can resume."""
    tools = [t.get("function", {}).get("name") for t in request.get("tools") or []]
    if "step" not in tools:
        return weather_script(request)
    results = [m["content"] for m in request.get("messages", []) if m.get("role") == "tool"]
    if len(results) < 2:
        return {"calls": [["step", {"n": len(results) + 1}]]}
    return {"text": "finished: " + ", ".join(results)}


class Script:
    """`script`, except that the next `hang` requests never get an answer, every answer
    waits `delay` seconds, and, while `gate` is set to an unset Event, for that Event."""

    def __init__(self) -> None:
        self.hang = 0
        self.delay = 0.0
        self.gate: threading.Event | None = None

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.hang:
            self.hang -= 1
            return {"hang": True}
        if self.gate is not None:
            self.gate.wait(60)
        reply = script(request)
        if self.delay:
            reply = {**reply, "delay": self.delay}
        return reply


def scripted_model() -> ScriptedModel:
    """`script` as an in-process model (no HTTP), for building real logs quickly."""
    ids = itertools.count(1)

    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        answer = script({"messages": messages, "tools": model.tools_seen[-1]})
        n = next(ids)
        calls = [
            tool_call(name, args, f"call_{n}_{i}")
            for i, (name, args) in enumerate(answer.get("calls", []))
        ]
        return ModelResponse(text=answer.get("text"), calls=calls, usage=Usage(40, 12, 52))

    model = ScriptedModel(reply)
    return model


# -- the agent side ---------------------------------------------------------------------------


def _note(path: str | None, line: str) -> None:
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


def build_agent(
    scenario: str,
    store: Any,
    url: str,
    tool_log: str | None = None,
    hang_on: str | None = None,
    tool_started: str | None = None,
    model: Any = None,
    release: str | None = None,
) -> Agentor:
    """The scenario's agent, on the model at `url` (or `model`). A tool called with `hang_on`
    as its argument notes that it started (in `tool_started`) and then blocks: until the file
    `release` exists when one is named, else for good."""

    def record(key: str, arg: str) -> None:
        _note(tool_log, key)
        if hang_on is not None and arg == hang_on:
            _note(tool_started, key)
            deadline = time.monotonic() + (60 if release else 3600)
            while not (release and os.path.exists(release)) and time.monotonic() < deadline:
                time.sleep(0.005)

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: The city to look up.
        """
        record(f"get_weather {city}", city)
        return f"The weather in {city} is sunny and 22C."

    @function_tool
    def step(n: int) -> str:
        """Do step n.

        Args:
            n: Which step.
        """
        record(f"step {n}", str(n))
        return f"step {n} done"

    tools = {"parallel": [get_weather], "three_turn": [step]}[scenario]
    return Agentor(
        name=f"{scenario} agent",
        model=model or "gpt-4o-mini",
        instructions="You are a careful assistant.",
        tools=tools,
        store=store,
        base_url=url,
        api_key="sk-test",
        max_retries=0,
        timeout=60,
    )


class KillsAfter:
    """A store mixin that writes one event at a time and SIGKILLs its own process right after
    the `kill_after`-th event it wrote is durable.

    One event per write makes every prefix of the log a crash point: a superset of what the
    engine's batched writes (a generation with its tool calls) can leave behind."""

    kill_after: int | None = None
    written = 0

    def append_many(self, run_id: str, events: Iterable[Event]) -> None:
        for event in events:
            if event.transient:
                continue
            super().append_many(run_id, [event])  # type: ignore[misc]
            self.written += 1
            if self.written == self.kill_after:
                os.kill(os.getpid(), signal.SIGKILL)


class KillingStore(KillsAfter, FileStore):
    """A FileStore that dies after its `kill_after`-th event is appended and fsynced."""

    def __init__(self, directory: str | os.PathLike[str], kill_after: int | None) -> None:
        super().__init__(directory)
        self.kill_after = kill_after


def run_child(cfg: dict[str, Any]) -> None:
    """What a child process does: start or resume a run, write the outcome to cfg["out"].

    cfg: dir, url, scenario, action ("start" | "resume" | "cancel_in_tool"), run_id,
    kill_after, tool_log, hang_on, tool_started, release, cancelled, ready (a file to create
    once imports are done), barrier (a file to wait for before acting), out.

    "cancel_in_tool" starts the run and cancels its task once the `hang_on` tool has started,
    as the TUI's `x` cancels a resume; `cancelled` is created right after the cancel.
    """
    store = KillingStore(cfg["dir"], cfg.get("kill_after"))
    agent = build_agent(
        cfg["scenario"],
        store,
        cfg["url"],
        cfg.get("tool_log"),
        cfg.get("hang_on"),
        cfg.get("tool_started"),
        release=cfg.get("release"),
    )
    if cfg.get("ready"):
        Path(cfg["ready"]).touch()
    if cfg.get("barrier"):
        while not os.path.exists(cfg["barrier"]):
            time.sleep(0.002)
    outcome: dict[str, Any] = {"pid": os.getpid()}
    try:
        if cfg["action"] == "cancel_in_tool":
            outcome["ended"] = asyncio.run(_cancel_in_tool(agent, cfg))
        else:
            if cfg["action"] == "start":
                work = agent.arun(PROMPTS[cfg["scenario"]])
            else:
                work = agent.aresume(cfg["run_id"])
            result = asyncio.run(work)
            outcome.update(
                status=result.status, final_output=result.final_output, run_id=result.run_id
            )
    except RunLockedError as exc:
        outcome.update(error="RunLockedError", holder=exc.pid, message=str(exc))
    except Exception as exc:
        outcome.update(error=type(exc).__name__, message=str(exc))
    if cfg.get("out"):
        Path(cfg["out"]).write_text(json.dumps(outcome))


async def _cancel_in_tool(agent: Agentor, cfg: dict[str, Any]) -> str:
    """Run the scenario, cancel its task while the `hang_on` tool runs; how the task ended."""
    task = asyncio.ensure_future(agent.arun(PROMPTS[cfg["scenario"]]))
    while not os.path.exists(cfg["tool_started"]):
        if task.done():
            return "finished before the tool started"
        await asyncio.sleep(0.005)
    task.cancel()
    Path(cfg["cancelled"]).touch()
    try:
        await task
    except asyncio.CancelledError:
        return "cancelled"
    return "returned"


# -- the parent side ---------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("OPENAI_API_KEY", None)
    return env


def spawn(cfg: dict[str, Any]) -> subprocess.Popen[bytes]:
    """A fresh interpreter running `run_child(cfg)`."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.crashkit", "child", json.dumps(cfg)],
        cwd=ROOT,
        env=child_env(),
        stdin=subprocess.DEVNULL,
    )


class Zygote:
    """A pre-imported interpreter that forks one child per `fork(cfg)`; each child runs
    `run_child(cfg)` of `module` (a kit whose `__main__` calls `zygote_main(run_child)`)."""

    def __init__(self, module: str = "tests.crashkit") -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, "zygote"],
            cwd=ROOT,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def fork(self, cfg: dict[str, Any]) -> int:
        """Start a child; returns its pid at once (it runs while you wait or kill it)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(cfg) + "\n")
        self.proc.stdin.flush()
        return int(json.loads(self.proc.stdout.readline())["pid"])

    def wait(self) -> int | None:
        """Wait for the last forked child; the signal that ended it (None: it exited)."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the zygote died")
        return json.loads(line)["signal"]

    def run(self, cfg: dict[str, Any]) -> int | None:
        self.fork(cfg)
        return self.wait()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def zygote_main(run: Callable[[dict[str, Any]], None]) -> None:
    """The zygote's loop: fork a child running `run(cfg)` for each line of config read."""
    import openai  # noqa: F401  (paid once here, not in every child)

    for line in sys.stdin:
        cfg = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                sys.stdin.close()
                run(cfg)
            except BaseException:
                code = 1
                import traceback

                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        print(json.dumps({"pid": pid, "signal": sig}), flush=True)


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.005)


def tool_runs(path: str | os.PathLike[str]) -> collections.Counter[str]:
    """How many times each tool execution key was noted."""
    try:
        return collections.Counter(Path(path).read_text().splitlines())
    except FileNotFoundError:
        return collections.Counter()


def recorded_results(events: Iterable[Event]) -> set[str]:
    """Execution keys ("get_weather London") of every successful tool result in `events`."""
    keys = set()
    for e in events:
        if e.type == "tool_result" and e.error is None and isinstance(e.args, dict):
            arg = next(iter(e.args.values()), None)
            keys.add(f"{e.name} {arg}")
    return keys


def only_run(directory: str | os.PathLike[str]) -> str:
    runs = FileStore(directory).list_runs()
    assert len(runs) == 1, runs
    return runs[0]


if __name__ == "__main__":
    if sys.argv[1] == "child":
        run_child(json.loads(sys.argv[2]))
    elif sys.argv[1] == "zygote":
        zygote_main(run_child)
    else:
        raise SystemExit(f"unknown command {sys.argv[1]!r}")
