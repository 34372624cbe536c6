"""Approval kit for real-process tests: a travel agent whose `book_hotel` needs approval, on the
real openai client against `tests.openai_server.FakeOpenAI`, run in children that can be
SIGKILLed after any event they write (`crashkit.KillingStore`).

The scenario ("gated"): the model asks `book_hotel(Rome)` (gated) and `get_weather(Rome)` at
once, then answers with what the tools said, joined by " | ". Events:

    start   run_start, generation, tool_call x2, approval_request, tool_result, run_end (7)
    decide  approval (1)
    resume  run_start, tool_start, tool_result, generation, message, run_end (6; a rejected
            call has no tool_start: 5). An approved call's start is saved before it runs: a
            crash during it then waits for a person (agentor.engine.interrupted).

Every tool execution appends one line ("book_hotel Rome") to `TOOL_LOG` (or cfg["tool_log"]).
`make_agent` is also an `--agent` spec for the `agentor` command
(`tests/approvalkit.py:make_agent`), reading `TOOL_LOG` and `OPENAI_BASE_URL` from the
environment.

Run as `python -m tests.approvalkit child CONFIG_JSON` or `python -m tests.approvalkit zygote`.

`Travel` is the same kind of agent in process, on a `ScriptedModel`, for fast tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentor import Agentor, approve, function_tool, reject
from agentor.engine.models import ModelResponse
from agentor.testing import ScriptedModel
from tests import crashkit

PROMPT = "Book a hotel in Rome for me."
TRAVEL_PROMPT = "Book a hotel in Rome and check the weather there."
EVENTS = {"start": 7, "decide": 1, "resume": 6}


def script(request: dict[str, Any]) -> dict[str, Any]:
    """Stateless, so any process can resume: both calls first, then the tools' words."""
    messages = request.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        return {"text": " | ".join(m["content"] for m in messages if m.get("role") == "tool")}
    return {"calls": [["book_hotel", {"city": "Rome"}], ["get_weather", {"city": "Rome"}]]}


def answer(hotel: str) -> str:
    """The final answer once book_hotel answered `hotel` (its result or its error text)."""
    return f"{hotel} | The weather in Rome is sunny and 22C."


def make_agent(
    store: Any = None,
    url: str | None = None,
    tool_log: str | None = None,
    hang_on: str | None = None,
    tool_started: str | None = None,
) -> Agentor:
    """The travel agent. `book_hotel` called for `hang_on` notes that it started, then hangs."""
    log = tool_log or os.environ.get("TOOL_LOG")

    def note(key: str) -> None:
        crashkit._note(log, key)

    @function_tool(needs_approval=True)
    def book_hotel(city: str) -> str:
        """Book a hotel room in a city.

        Args:
            city: Where to stay.
        """
        note(f"book_hotel {city}")
        if city == hang_on:
            crashkit._note(tool_started, city)
            time.sleep(3600)
        return f"Booked a room in {city}."

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: The city to look up.
        """
        note(f"get_weather {city}")
        return f"The weather in {city} is sunny and 22C."

    return Agentor(
        name="Travel Agent",
        model="gpt-4o-mini",
        instructions="You book travel carefully.",
        tools=[book_hotel, get_weather],
        store=store,
        base_url=url,
        api_key="sk-test",
        max_retries=0,
        timeout=60,
    )


class KitStore(crashkit.KillingStore):
    """`KillingStore` that also touches the file `tried` each time it is asked for a run's
    lock: a test can tell when every decider is in the race for it."""

    def __init__(self, directory: str, kill_after: int | None, tried: str | None) -> None:
        super().__init__(directory, kill_after)
        self.tried = tried

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        if self.tried:
            Path(self.tried).touch()
        with super().lock(run_id):
            yield


# -- in process: a scripted travel agent ---------------------------------------------------------


def summary(messages: list[dict[str, Any]]) -> ModelResponse:
    """The final answer: every tool message of the conversation, joined."""
    return ScriptedModel.text(" | ".join(m["content"] for m in messages if m["role"] == "tool"))


class Travel:
    """In process (ScriptedModel, any store): an agent with a gated `book_hotel` (by `gate`)
    and an ungated `get_weather`, asked both at once (`asks`); counts executions (`ran`)."""

    def __init__(self, store: Any, gate: Any = True, **agent_kw: Any) -> None:
        self.ran: list[tuple[str, str, int]] = []
        ran = self.ran

        @function_tool(needs_approval=gate)
        def book_hotel(city: str, nights: int = 1) -> str:
            """Book a hotel room.

            Args:
                city: Where.
                nights: How many nights.
            """
            ran.append(("book_hotel", city, nights))
            return f"Booked {nights} night(s) in {city}."

        @function_tool
        def get_weather(city: str) -> str:
            """Get the weather."""
            ran.append(("get_weather", city, 0))
            return f"Sunny in {city}."

        self.model = ScriptedModel(self.reply)
        self.agent = Agentor(
            "Travel Agent",
            model=self.model,
            tools=[book_hotel, get_weather],
            store=store,
            **agent_kw,
        )
        self.asks: list[tuple[str, dict[str, Any]]] = [
            ("book_hotel", {"city": "Rome", "nights": 2}),
            ("get_weather", {"city": "Rome"}),
        ]

    def reply(self, messages: list[dict[str, Any]]) -> ModelResponse:
        if messages[-1]["role"] == "tool":
            return summary(messages)
        return self.model.calls(*self.asks)

    def executed(self, name: str) -> list[tuple[str, str, int]]:
        return [r for r in self.ran if r[0] == name]


# -- in child processes --------------------------------------------------------------------------


def run_child(cfg: dict[str, Any]) -> None:
    """What a child does: cfg["action"] is "start", "resume", "approve" or "reject"; the
    outcome (status, or the error's class and message) goes to cfg["out"].

    cfg: dir, url, run_id, call_id, args (an edit), by, reason, kill_after, tool_log, hang_on,
    tool_started, ready (created once imports are done), barrier (waited for), tried (touched
    at each attempt to lock the run), out."""
    store = KitStore(cfg["dir"], cfg.get("kill_after"), cfg.get("tried"))
    agent = make_agent(
        store, cfg.get("url"), cfg.get("tool_log"), cfg.get("hang_on"), cfg.get("tool_started")
    )
    if cfg.get("ready"):
        Path(cfg["ready"]).touch()
    while cfg.get("barrier") and not os.path.exists(cfg["barrier"]):
        time.sleep(0.001)
    outcome: dict[str, Any] = {"pid": os.getpid()}
    try:
        outcome.update(_act(agent, store, cfg))
    except Exception as exc:
        outcome.update(error=type(exc).__name__, message=str(exc), by=getattr(exc, "by", None))
    if cfg.get("out"):
        Path(cfg["out"]).write_text(json.dumps(outcome))


def _act(agent: Agentor, store: Any, cfg: dict[str, Any]) -> dict[str, Any]:
    action = cfg["action"]
    if action in ("approve", "reject"):
        if action == "approve":
            made = approve(
                store, cfg["run_id"], cfg.get("call_id"), args=cfg.get("args"), by=cfg.get("by")
            )
        else:
            made = reject(
                store, cfg["run_id"], cfg.get("call_id"), reason=cfg["reason"], by=cfg.get("by")
            )
        return {"decided": [d.call_id for d in made], "by": made[0].by}
    if action == "start":
        result = asyncio.run(agent.arun(PROMPT))
    else:
        result = asyncio.run(agent.aresume(cfg["run_id"]))
    return {
        "status": result.status,
        "final_output": result.final_output,
        "run_id": result.run_id,
        "pending": [p.call_id for p in result.pending],
    }


if __name__ == "__main__":
    if sys.argv[1] == "child":
        run_child(json.loads(sys.argv[2]))
    elif sys.argv[1] == "zygote":
        crashkit.zygote_main(run_child)
    else:
        raise SystemExit(f"unknown command {sys.argv[1]!r}")
