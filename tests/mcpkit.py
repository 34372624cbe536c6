"""MCP kit: the test tool servers (`tests/mcp_tool_server.py`, written with the `mcp` package's
own server API) started for tests, and agents that use them, in process or in child processes
that a test SIGKILLs while a call is in flight.

- `HttpToolServer`: a server process over Streamable HTTP on a free port of 127.0.0.1; every
  request must carry `Authorization: Bearer TOKEN`.
- `stdio_server(cfg)`: an `MCPServerStdio` the agent starts (a child process per segment).
- `calls(cfg)`: every `tools/call` the server received, as it noted it (across processes).

Children (`python -m tests.mcpkit zygote`, forked by `crashkit.Zygote("tests.mcpkit")`) run
the "sender" agent on the real openai client against `tests.openai_server.FakeOpenAI`
(`script`): it asks for one call of its sending tool (`send` on the HTTP server's, or the
function tool `send_letter` with `on_interrupt="ask"`), then answers with what the tool said.
The first `send_letter` call for a recipient notes itself in cfg["letters"] and blocks (until
cfg["release"] exists), as the server's `send` does: the test kills the child there.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2  # noqa: F401  (imported once in the zygote, not in every child)
import mcp  # noqa: F401

from agentor import Agentor, MCPServer, MCPServerStdio, approve, function_tool, reject
from agentor.engine.store.file import FileStore
from tests import crashkit

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "tok-9f8e7d6c5b4a39281706"  # the HTTP server's bearer token: never in a log
PROMPT = "Send the news to {to}."


def server_config(directory: Path, name: str, **extra: Any) -> dict[str, Any]:
    """A test server's config: its calls file (and whatever `extra` adds) under `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    return {"calls": str(directory / f"{name}-calls.jsonl"), "token": TOKEN, **extra}


def calls(cfg: dict[str, Any], tool: str | None = None) -> list[dict[str, Any]]:
    """The calls the server received ({"tool", "args"} each), of `tool` only when named."""
    try:
        lines = Path(cfg["calls"]).read_text().splitlines()
    except FileNotFoundError:
        return []
    made = [json.loads(line) for line in lines]
    return [c for c in made if tool is None or c["tool"] == tool]


class HttpToolServer:
    """The test server over Streamable HTTP, in a process of its own (`stop` kills it)."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = {**cfg, "port_file": cfg["calls"] + ".port"}
        Path(self.cfg["port_file"]).unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.mcp_tool_server", "http", json.dumps(self.cfg)],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port = crashkit.wait_for(self._port, timeout=60, what="the MCP server to listen")
        self.url = f"http://127.0.0.1:{port}/mcp"

    def _port(self) -> str | None:
        if self.proc.poll() is not None:
            raise RuntimeError(f"the MCP test server exited with {self.proc.returncode}")
        try:
            return Path(self.cfg["port_file"]).read_text() or None
        except FileNotFoundError:
            return None

    def server(self, **kw: Any) -> MCPServer:
        """An `MCPServer` for it, with its token."""
        return MCPServer(self.url, headers={"Authorization": f"Bearer {TOKEN}"}, **kw)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()  # a call it holds (a killed agent's) never ends by itself
        self.proc.wait()

    def __enter__(self) -> HttpToolServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def stdio_server(cfg: dict[str, Any], *extra_args: str, **kw: Any) -> MCPServerStdio:
    """An `MCPServerStdio` running the test server (`extra_args` after its config). The HTTP
    server's token stays out of its command line: the agent cannot know it is a secret."""
    own = {k: v for k, v in cfg.items() if k != "token"}
    args = ["-m", "tests.mcp_tool_server", "stdio", json.dumps(own), *extra_args]
    return MCPServerStdio(sys.executable, args, cwd=ROOT, **kw)


# -- the sender agent, in child processes ---------------------------------------------------------


def script(request: dict[str, Any]) -> dict[str, Any]:
    """Stateless, so any process can resume: call the sending tool offered (`send` or
    `send_letter`) for the prompt's recipient, else `add`; then say what the tools said."""
    messages = request.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        said = " | ".join(m["content"] for m in messages if m.get("role") == "tool")
        return {"text": f"done: {said}"}
    prompt = next(m["content"] for m in messages if m.get("role") == "user")
    to = prompt.removeprefix("Send the news to ").removesuffix(".")
    offered = [t["function"]["name"] for t in request.get("tools") or []]
    for name in ("send", "send_letter"):
        if name in offered:
            return {"calls": [[name, {"to": to}]]}
    return {"calls": [["add", {"a": 2, "b": 3}]]}


def sender(cfg: dict[str, Any], store: Any) -> Agentor:
    """The agent: cfg["mcp_url"] names the HTTP server to use, else it has `send_letter`."""
    letters = cfg.get("letters")

    @function_tool(on_interrupt="ask")
    def send_letter(to: str) -> str:
        """Send a letter (a side effect).

        Args:
            to: Who gets it.
        """
        crashkit._note(letters, f"send_letter {to}")
        if crashkit.tool_runs(letters)[f"send_letter {to}"] == 1:
            crashkit._note(cfg.get("started"), to)
            while not os.path.exists(cfg.get("release") or ""):
                time.sleep(0.005)
        return f"a letter went to {to}"

    tools: list[Any] = [send_letter]
    if cfg.get("mcp_url"):
        headers = {"Authorization": f"Bearer {TOKEN}"}
        tools = [MCPServer(cfg["mcp_url"], headers=headers, name="remote")]
    return Agentor(
        name="Sender",
        model="gpt-4o-mini",
        tools=tools,
        store=store,
        base_url=cfg["url"],
        api_key="sk-test",
        max_retries=0,
        timeout=60,
    )


def run_child(cfg: dict[str, Any]) -> None:
    """cfg["action"]: "start" (the prompt for cfg["to"]) or "resume" (cfg["run_id"]), in a
    `KillingStore` (cfg["kill_after"]); the outcome goes to cfg["out"]."""
    store = crashkit.KillingStore(cfg["dir"], cfg.get("kill_after"))
    agent = sender(cfg, store)
    outcome: dict[str, Any] = {"pid": os.getpid()}
    try:
        if cfg["action"] == "start":
            result = asyncio.run(agent.arun(PROMPT.format(to=cfg["to"])))
        else:
            result = asyncio.run(agent.aresume(cfg["run_id"]))
        outcome.update(
            status=result.status,
            final_output=result.final_output,
            run_id=result.run_id,
            pending=[p.call_id for p in result.pending],
        )
    except Exception as exc:
        outcome.update(error=type(exc).__name__, message=str(exc))
    if cfg.get("out"):
        Path(cfg["out"]).write_text(json.dumps(outcome))


def decide(directory: str, run_id: str, call_id: str, decision: str) -> None:
    """One of the three decisions on an interrupted call, as alice."""
    store = FileStore(directory)
    if decision == "approve":
        approve(store, run_id, call_id, by="alice")
    elif decision == "result":
        approve(store, run_id, call_id, by="alice", result="delivered (checked by hand)")
    else:
        reject(store, run_id, call_id, by="alice", reason="it may have gone: do not retry")


if __name__ == "__main__":
    if sys.argv[1] == "child":
        run_child(json.loads(sys.argv[2]))
    elif sys.argv[1] == "zygote":
        crashkit.zygote_main(run_child)
    else:
        raise SystemExit(f"unknown command {sys.argv[1]!r}")
