"""Stop means stop: a cancelled run never lets go of the run while one of its tool threads is
still running, and records that thread's result first, so no recorded step runs twice.

(`x` in the TUI, `q`, an abandoned `stream_chat`, ^C: every caller cancels the run's task.)
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from agentor import Agentor, function_tool
from agentor.engine.events import Event
from agentor.engine.store import FileStore
from agentor.testing import ScriptedModel
from tests.conftest import log_lines


class SlowTools:
    """A sync tool that blocks until released, and an async one that sleeps; both counted."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.sync_runs: list[str] = []
        self.async_runs: list[str] = []
        self.async_done: list[str] = []

        @function_tool
        def get_weather(city: str) -> str:
            """Look the weather up (slowly)."""
            self.sync_runs.append(city)
            self.started.set()
            assert self.release.wait(20), "never released"
            return f"Sunny in {city}."

        @function_tool
        async def get_news(city: str) -> str:
            """Read the news (slowly)."""
            self.async_runs.append(city)
            await asyncio.sleep(30)
            self.async_done.append(city)
            return f"Nothing new in {city}."

        self.tools = [get_weather, get_news]


def agent_on(store: FileStore, tools: SlowTools, *replies) -> tuple[Agentor, ScriptedModel]:
    model = ScriptedModel(list(replies))
    return Agentor("Weather Agent", model=model, tools=tools.tools, store=store), model


async def started(tools: SlowTools) -> None:
    assert await asyncio.to_thread(tools.started.wait, 10)


async def test_a_run_cancelled_during_a_sync_tool_holds_the_run_until_the_result_is_recorded(
    tmp_path: Path,
) -> None:
    tools = SlowTools()
    store = FileStore(tmp_path)
    script = ScriptedModel([])
    agent, _ = agent_on(store, tools, script.calls(("get_weather", {"city": "Oslo"})))
    seen: list[Event] = []
    task = asyncio.create_task(agent.arun("Weather in Oslo?"))
    await started(tools)
    run_id = store.list_runs()[0]

    task.cancel()
    await asyncio.sleep(0.3)
    task.cancel()  # asked again: a thread still cannot be interrupted
    await asyncio.sleep(0.2)
    # Still held: another store (another process would see the same flock) is refused.
    assert not task.done()
    assert FileStore(tmp_path).is_locked(run_id)
    assert [d["type"] for d in log_lines(store.path(run_id))] == [
        "run_start",
        "generation",
        "tool_call",
    ]

    tools.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    lines = log_lines(store.path(run_id))
    assert [d["type"] for d in lines][-1] == "tool_result"
    assert lines[-1]["result"] == "Sunny in Oslo."
    assert not store.is_locked(run_id)

    # The next resume replays the recorded result: the tool does not run again.
    resumer, model = agent_on(FileStore(tmp_path), tools, ScriptedModel.text("Sunny."))
    result = await resumer.aresume(run_id, listener=seen.append)
    assert result.status == "completed"
    assert tools.sync_runs == ["Oslo"]
    assert len(model.requests) == 1
    assert model.requests[0][-1] == {
        "role": "tool",
        "tool_call_id": lines[-1]["call_id"],
        "content": "Sunny in Oslo.",
    }


async def test_an_abandoned_stream_waits_for_the_tool_thread_before_it_closes(
    tmp_path: Path,
) -> None:
    tools = SlowTools()
    store = FileStore(tmp_path)
    script = ScriptedModel([])
    agent, _ = agent_on(store, tools, script.calls(("get_weather", {"city": "Oslo"})))
    seen: list[Event] = []
    stream = agent.stream_chat("Weather in Oslo?")

    async def read() -> None:
        async for event in stream:
            seen.append(event)

    reader = asyncio.create_task(read())
    await started(tools)
    reader.cancel()  # the stream's reader goes away: `aclose` cancels the run
    await asyncio.sleep(0.2)
    assert not reader.done()  # the stream's close waits for the tool's thread
    tools.release.set()
    with pytest.raises(asyncio.CancelledError):
        await reader
    run_id = store.list_runs()[0]
    assert [d["type"] for d in log_lines(store.path(run_id))][-1] == "tool_result"
    assert not store.is_locked(run_id)


def interrupted_run(store: FileStore, run_id: str, prompt: str) -> None:
    """A log killed right after its run_start: a resume asks the model from the start."""
    start = Event("run_start", agent="Weather Agent", model="scripted")
    start.messages = [{"role": "user", "content": prompt}]
    store.append(run_id, start)


async def test_a_stopping_run_tells_its_listener_which_tool_it_waits_for(tmp_path: Path) -> None:
    tools = SlowTools()
    store = FileStore(tmp_path)
    interrupted_run(store, "job-1", "Weather in Rome?")
    script = ScriptedModel([])
    agent, _ = agent_on(store, tools, script.calls(("get_weather", {"city": "Rome"})))
    seen: list[Event] = []
    task = asyncio.create_task(agent.aresume("job-1", listener=seen.append))
    await started(tools)
    task.cancel()
    await asyncio.sleep(0.1)
    waits = [e for e in seen if e.type == "tool_wait"]
    assert [(e.name, e.call_id, e.turn) for e in waits] == [("get_weather", "c1_0", 1)]
    assert waits[0].transient
    tools.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Announced after it was saved, like every event; the wait itself is never saved.
    assert seen[-1].type == "tool_result"
    types = [d["type"] for d in log_lines(store.path("job-1"))]
    assert "tool_wait" not in types and types[-1] == "tool_result"


async def test_async_tools_are_cancelled_and_sync_ones_of_the_same_turn_recorded(
    tmp_path: Path,
) -> None:
    tools = SlowTools()
    store = FileStore(tmp_path)
    script = ScriptedModel([])
    agent, _ = agent_on(
        store,
        tools,
        script.calls(("get_news", {"city": "Oslo"}), ("get_weather", {"city": "Oslo"})),
    )
    task = asyncio.create_task(agent.arun("News and weather in Oslo?"))
    await started(tools)
    task.cancel()
    await asyncio.sleep(0.2)
    assert not task.done()
    tools.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    run_id = store.list_runs()[0]
    results = [d for d in log_lines(store.path(run_id)) if d["type"] == "tool_result"]
    assert [r["name"] for r in results] == ["get_weather"]  # the async call left no result
    assert tools.async_done == []

    # The resume rewinds (one call had no result) and answers the same weather call from the
    # record: only the news runs again.
    resumer, _ = agent_on(
        FileStore(tmp_path),
        tools,
        script.calls(("get_news", {"city": "Oslo"}), ("get_weather", {"city": "Oslo"})),
        ScriptedModel.text("Quiet and sunny."),
    )
    tools.async_runs.clear()
    resume = asyncio.create_task(resumer.aresume(run_id))
    for _ in range(200):
        if tools.async_runs:
            break
        await asyncio.sleep(0.01)
    assert tools.async_runs == ["Oslo"] and tools.sync_runs == ["Oslo"]
    resume.cancel()
    with pytest.raises(asyncio.CancelledError):
        await resume
