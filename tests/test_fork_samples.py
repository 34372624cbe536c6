"""Forks at every forkable line of the sample runs (runs/), with the real openai client against
the fake server: the parent's bytes never change, no tool whose result was recorded before the
fork point runs again, and the fork completes with the edited value in what the model is sent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, function_tool
from agentor.engine.events import GENERATION, RUN_START, TOOL_RESULT, Event
from agentor.engine.history import canonical_args
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from tests.conftest import ROOT
from tests.openai_server import FakeOpenAI

SAMPLES = json.loads((ROOT / "runs" / "manifest.json").read_text())
LIMA = "What is the weather in Lima?"


class Tools:
    """The sample agents' tools, counting each real execution as (name, canonical arguments)."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []
        ran = self.ran

        @function_tool
        def get_weather(city: str) -> str:
            """Get the current weather for a city.

            Args:
                city: The city to look up.
            """
            ran.append(("get_weather", canonical_args({"city": city})))
            return f"The weather in {city} is sunny and 22C."

        @function_tool
        def get_forecast(city: str, days: int = 3) -> str:
            """The forecast for a city."""
            ran.append(("get_forecast", canonical_args({"city": city, "days": days})))
            return f"{city}: clear"

        @function_tool
        def find_hotel(city: str) -> str:
            """A hotel in a city."""
            ran.append(("find_hotel", canonical_args({"city": city})))
            return f"Hotel Central, {city}"

        self.tools = [get_weather, get_forecast, find_hotel]


def forkable(events: list[Event]) -> list[tuple[int, str]]:
    return [
        (n, e.type)
        for n, e in enumerate(events, 1)
        if e.type in (RUN_START, GENERATION, TOOL_RESULT)
    ]


def recorded_before(events: list[Event], line: int) -> set[tuple[str, str]]:
    """The calls whose results the parent recorded before `line`."""
    return {
        (e.name or "", canonical_args(e.args)) for e in events[: line - 1] if e.type == TOOL_RESULT
    }


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_a_fork_at_every_forkable_line_of_a_sample_run(sample: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(ROOT / "runs", runs)
    store = FileStore(runs)
    parent = SAMPLES[sample]["run_id"]
    before = (runs / f"{parent}.jsonl").read_bytes()
    events = store.load(parent)
    assert len(events) == len(before.splitlines()), "every line of a sample is an event"
    with FakeOpenAI() as srv:
        tools = Tools()
        agent = Agentor(
            "Weather Agent",
            model="gpt-4o-mini",
            tools=tools.tools,
            store=store,
            base_url=srv.url,
            api_key="sk-test",
            max_retries=0,
        )
        for line, kind in forkable(events):
            asked, ran = len(srv.requests), len(tools.ran)
            fork = _fork_at(agent, parent, line, kind)
            assert fork.status == COMPLETED, (sample, line, fork.error)
            new_requests = srv.requests[asked:]
            _check_seen(kind, line, new_requests)
            executed = tools.ran[ran:]
            assert not set(executed) & recorded_before(events, line), (sample, line, executed)
            if kind == GENERATION:
                assert executed == [("get_weather", canonical_args({"city": "Quito"}))]
            elif kind == RUN_START:
                assert executed == [("get_weather", canonical_args({"city": "Lima"}))]
            assert (runs / f"{parent}.jsonl").read_bytes() == before, (sample, line)
            if kind == TOOL_RESULT:
                assert f"EDITED {line}" in (fork.final_output or "")


def _fork_at(agent: Agentor, parent: str, line: int, kind: str) -> Any:
    if kind == TOOL_RESULT:
        return agent.fork(parent, at=line, result=f"EDITED {line}")
    if kind == GENERATION:
        return agent.fork(parent, "And Quito?", at=line, model="gpt-4o")
    return agent.fork(parent, LIMA, at=line)


def _check_seen(kind: str, line: int, requests: list[dict[str, Any]]) -> None:
    """What the model was sent shows the edit: the new result, the added message, the prompt."""
    assert requests, "the fork asked the model"
    first = requests[0]["messages"]
    if kind == TOOL_RESULT:
        seen = [m["content"] for r in requests for m in r["messages"] if m.get("role") == "tool"]
        assert f"EDITED {line}" in seen
    elif kind == GENERATION:
        assert requests[0]["model"] == "gpt-4o"
        assert first[-1] == {"role": "user", "content": "And Quito?"}
    elif line == 1:  # the prompt replaced
        assert [m["content"] for m in first if m["role"] == "user"] == [LIMA]
    else:  # a later segment's run_start: the message added where that segment began
        assert first[-1] == {"role": "user", "content": LIMA}
