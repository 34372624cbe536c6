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
from agentor.engine.store.file import FileStore
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


async def waiting(seen: list[Event]) -> Event:
    """Once the cancelled run says it waits for a tool thread (its transient `tool_wait`): a
    positive sign that the cancel arrived, so what is checked next cannot pass just because a
    slow machine has not got round to the cancel yet."""
    for _ in range(1000):
        waits = [e for e in seen if e.type == "tool_wait"]
        if waits:
            return waits[0]
        await asyncio.sleep(0.01)
    raise AssertionError("the cancelled run never said it waits for its tool")


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
    wait = await waiting(seen)
    assert (wait.name, wait.call_id, wait.turn) == ("get_weather", "c1_0", 1)
    assert wait.transient
    assert not task.done() and FileStore(tmp_path).is_locked("job-1")
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


async def test_after_the_cancel_arrived_the_run_stays_held_until_its_tool_thread_ends(
    tmp_path: Path,
) -> None:
    """The same promise, checked from the moment the run says it waits (never after a fixed
    sleep): held, and no result yet, for as long as the thread runs."""
    tools = SlowTools()
    store = FileStore(tmp_path)
    interrupted_run(store, "job-2", "Weather in Oslo?")
    script = ScriptedModel([])
    agent, _ = agent_on(store, tools, script.calls(("get_weather", {"city": "Oslo"})))
    seen: list[Event] = []
    task = asyncio.create_task(agent.aresume("job-2", listener=seen.append))
    await started(tools)
    task.cancel()
    await waiting(seen)
    for _ in range(5):  # at every look while the thread runs: held, not done, no result
        assert not task.done()
        assert FileStore(tmp_path).is_locked("job-2")
        assert "tool_result" not in [d["type"] for d in log_lines(store.path("job-2"))]
        await asyncio.sleep(0.02)
    tools.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [d["type"] for d in log_lines(store.path("job-2"))][-1] == "tool_result"
    assert not store.is_locked("job-2")


async def test_an_async_result_that_arrived_before_the_cancel_is_kept(tmp_path: Path) -> None:
    """Async tools are cancelled, but one whose result already arrived keeps it: the resume
    runs neither tool again."""
    tools = SlowTools()
    quick_runs: list[str] = []

    @function_tool
    async def get_time(city: str) -> str:
        """The local time (at once)."""
        quick_runs.append(city)
        return f"Noon in {city}."

    store = FileStore(tmp_path)
    interrupted_run(store, "job-3", "Time and weather in Oslo?")
    script = ScriptedModel([])
    turn = script.calls(("get_time", {"city": "Oslo"}), ("get_weather", {"city": "Oslo"}))
    model = ScriptedModel([turn])
    agent = Agentor("Weather Agent", model=model, tools=[get_time, *tools.tools], store=store)
    seen: list[Event] = []
    task = asyncio.create_task(agent.aresume("job-3", listener=seen.append))
    await started(tools)
    for _ in range(1000):  # the quick result is recorded while the slow tool still runs
        if any(e.type == "tool_result" for e in seen):
            break
        await asyncio.sleep(0.01)
    task.cancel()
    await waiting(seen)
    tools.release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = {
        d["name"]: d["result"] for d in log_lines(store.path("job-3")) if d["type"] == "tool_result"
    }
    assert results == {"get_time": "Noon in Oslo.", "get_weather": "Sunny in Oslo."}

    resumer, again = agent_on(FileStore(tmp_path), tools, ScriptedModel.text("Noon, sunny."))
    # No get_time on the resumer: both results are recorded, neither tool may run again.
    result = await resumer.aresume("job-3")
    assert result.status == "completed"
    assert quick_runs == ["Oslo"] and tools.sync_runs == ["Oslo"]
    tool_messages = [m for m in again.requests[0] if m.get("role") == "tool"]
    assert [m["content"] for m in tool_messages] == ["Noon in Oslo.", "Sunny in Oslo."]
