"""`Agentor` over real HTTP (the openai client against FakeOpenAI): run, arun, stream_chat,
resume, aresume, and the stores a run can be given."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, RunLockedError, RunResult, function_tool
from agentor.engine.events import Event
from agentor.engine.loop import Recorder
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.testing import ScriptedModel
from tests.conftest import (
    CHILD_AGENT,
    FULL_RUN,
    Children,
    WeatherAgents,
    counted,
    crash_after_tool_result,
    log_lines,
    log_types,
    weather_text,
)
from tests.openai_server import FakeOpenAI


def test_run_over_http_records_every_step(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    result = weather_agent(store=store).run("What is the weather in London?")

    assert isinstance(result, RunResult)
    assert result.status == "completed" and result.error is None
    assert result.final_output == weather_text("London")
    assert result.run_id is not None and len(result.run_id) == 32
    assert [e.type for e in result.events] == FULL_RUN
    assert result.events[0].run_id == result.run_id
    assert result.events[0].agent == "Weather Agent" and result.events[0].model == "gpt-4o-mini"
    assert weather_agent.executed == ["London"]
    assert fake_openai.calls == 2
    # The usage is the sum of what the server reported for both requests.
    gens = [e for e in result.events if e.type == "generation"]
    assert result.usage.total_tokens == sum(g.usage.total_tokens for g in gens) > 0
    assert result.messages[-1] == {"role": "assistant", "content": result.final_output}
    assert result.messages[:-1] == fake_openai.requests[-1]["messages"]
    # One line per event, in order, and the store gives back the same events.
    path = tmp_path / f"{result.run_id}.jsonl"
    assert log_types(path) == FULL_RUN
    assert [e.to_dict() for e in store.load(result.run_id)] == [e.to_dict() for e in result.events]
    assert store.list_runs() == [result.run_id]


async def test_arun_and_aresume(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    agent = weather_agent(store=store)
    first = await agent.arun("What is the weather in Oslo?")
    assert first.status == "completed"
    crash_after_tool_result(store.path(first.run_id))

    result = await agent.aresume(first.run_id)

    assert (result.status, result.final_output) == ("completed", weather_text("Oslo"))
    assert weather_agent.executed == ["Oslo"], "a recorded result was run again"
    assert fake_openai.calls == 3, "one request, for the reply"
    assert fake_openai.requests[2]["messages"] == fake_openai.requests[1]["messages"]
    assert log_types(store.path(first.run_id)) == [*FULL_RUN[:4], *FULL_RUN[:1], *FULL_RUN[4:]]
    assert result.events[-1].type == "run_end"


def test_finished_run_resume_makes_no_call_and_writes_nothing(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    agent = weather_agent(store=store)
    first = agent.run("What is the weather in Oslo?")
    path = store.path(first.run_id)
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns

    again = weather_agent(store=FileStore(tmp_path)).resume(first.run_id)

    assert fake_openai.calls == 2 and weather_agent.executed == ["Oslo"]
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    assert (again.status, again.final_output, again.run_id) == (
        "completed",
        first.final_output,
        first.run_id,
    )
    assert again.messages == first.messages
    assert again.usage == first.usage
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_without_a_store_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weather_agent: WeatherAgents
) -> None:
    monkeypatch.chdir(tmp_path)
    result = weather_agent().run("What is the weather in Oslo?")
    assert result.status == "completed"
    assert result.run_id is None
    assert [e.type for e in result.events] == FULL_RUN
    assert list(tmp_path.iterdir()) == []


async def test_resume_needs_a_store_and_a_known_valid_id(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    with pytest.raises(ValueError, match="store"):
        await weather_agent().aresume("abc123")
    agent = weather_agent(store=FileStore(tmp_path))
    with pytest.raises(KeyError, match="0123456789abcdef"):
        await agent.aresume("0123456789abcdef")
    with pytest.raises(ValueError, match="invalid run id"):
        await agent.aresume("../x")
    assert fake_openai.calls == 0
    assert list(tmp_path.iterdir()) == []


def test_sync_resume_without_store_raises_value_error(weather_agent: WeatherAgents) -> None:
    with pytest.raises(ValueError):
        weather_agent().resume("abc123")


async def test_run_inside_a_running_loop_says_to_use_arun(
    fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    agent = weather_agent(store=MemoryStore())
    with pytest.raises(RuntimeError, match=r"await agent\.arun"):
        agent.run("What is the weather in Oslo?")
    with pytest.raises(RuntimeError, match=r"await agent\.aresume"):
        agent.resume("abc")
    assert fake_openai.calls == 0


def test_memory_store(fake_openai: FakeOpenAI, weather_agent: WeatherAgents) -> None:
    store = MemoryStore()
    agent = weather_agent(store=store)
    result = agent.run("What is the weather in Oslo?")
    assert store.list_runs() == [result.run_id]
    assert store.load(result.run_id) == result.events
    assert not store.is_locked(result.run_id)

    again = agent.resume(result.run_id)
    assert again.final_output == result.final_output
    assert fake_openai.calls == 2

    # An interrupted run in memory resumes like one on disk.
    store._runs[result.run_id] = result.events[:4]  # as a crash before the reply leaves it
    resumed = agent.resume(result.run_id)
    assert resumed.status == "completed" and weather_agent.executed == ["Oslo"]
    assert fake_openai.calls == 3


class ListStore:
    """The seed page's "your own" store: exactly the three methods, no append_many, no lock."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}
        self.threads: set[str] = set()

    def append(self, run_id: str, event: Event) -> None:
        self.threads.add(threading.current_thread().name)
        self.lines.setdefault(run_id, []).append(event.to_json())

    def load(self, run_id: str) -> list[Event]:
        return [Event.from_dict(json.loads(line)) for line in self.lines[run_id]]

    def list_runs(self) -> list[str]:
        return list(self.lines)


def test_a_custom_three_method_store(fake_openai: FakeOpenAI, weather_agent: WeatherAgents) -> None:
    store = ListStore()
    agent = weather_agent(store=store)
    result = agent.run("What is the weather in Oslo?")

    assert result.status == "completed"
    lines = [json.loads(line) for line in store.lines[result.run_id]]
    assert [d["type"] for d in lines] == FULL_RUN
    # A custom store gets full events: every generation carries its whole request.
    gens = [d for d in lines if d["type"] == "generation"]
    assert [g["messages"] for g in gens] == [r["messages"] for r in fake_openai.requests]
    # Stores are called off the event loop.
    assert threading.main_thread().name not in store.threads

    store.lines[result.run_id] = store.lines[result.run_id][:4]
    resumed = agent.resume(result.run_id)
    assert resumed.status == "completed" and weather_agent.executed == ["Oslo"]
    assert len(store.lines[result.run_id]) == 4 + 4


class FailingStore:
    def append(self, run_id: str, event: Event) -> None:
        raise OSError("disk on fire")

    def load(self, run_id: str) -> list[Event]:
        raise KeyError(run_id)

    def list_runs(self) -> list[str]:
        return []


def test_a_failing_store_is_logged_and_the_run_carries_on(
    caplog: pytest.LogCaptureFixture, weather_agent: WeatherAgents
) -> None:
    caplog.set_level(logging.ERROR, logger="agentor")
    result = weather_agent(store=FailingStore()).run("What is the weather in Oslo?")

    assert result.status == "completed"
    assert result.final_output == weather_text("Oslo")
    assert result.run_id is not None
    assert [e.type for e in result.events] == FULL_RUN
    records = [r for r in caplog.records if r.name == "agentor"]
    assert records, "the failure was not logged"
    for record in records:
        assert record.levelno == logging.ERROR
        assert record.exc_info is not None and isinstance(record.exc_info[1], OSError)
        assert "disk on fire" in record.getMessage()
        assert result.run_id in record.getMessage()


async def test_stream_chat_is_persisted(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    streamed = [
        e async for e in weather_agent(store=store).stream_chat("What is the weather in Oslo?")
    ]

    assert streamed[0].type == "run_start" and streamed[0].run_id
    run_id = streamed[0].run_id
    deltas = [e for e in streamed if e.type == "text_delta"]
    durable = [e for e in streamed if e.type != "text_delta"]
    assert deltas, "streamed tokens were not shown"
    assert "".join(d.text for d in deltas) == weather_text("Oslo")
    assert [e.type for e in durable] == FULL_RUN
    # What the stream showed is what the log holds, minus the transient deltas.
    assert [e.to_dict() for e in store.load(run_id)] == [e.to_dict() for e in durable]
    assert "text_delta" not in store.path(run_id).read_text()
    assert all(r.get("stream") is True for r in fake_openai.requests)
    assert not store.is_locked(run_id)


async def test_an_abandoned_stream_leaves_a_resumable_run(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    fake_openai.script = [
        {"calls": [["get_weather", {"city": "Oslo"}]]},
        {"hang": True},  # the client walks away while the reply is being generated
        {"text": "Sunny in Oslo."},
    ]
    store = FileStore(tmp_path)
    agent = weather_agent(store=store)
    stream = agent.stream_chat("What is the weather in Oslo?")
    seen = []
    async for event in stream:
        seen.append(event.type)
        if event.type == "tool_result":
            break
    # The run goes on without a reader; walk away once it is waiting for the reply.
    for _ in range(2000):
        if fake_openai.calls == 2:
            break
        await asyncio.sleep(0.01)
    assert fake_openai.calls == 2
    await stream.aclose()
    run_id = store.list_runs()[0]
    assert seen == FULL_RUN[:4]
    assert log_types(store.path(run_id)) == FULL_RUN[:4]
    assert not store.is_locked(run_id)

    result = await agent.aresume(run_id)
    assert (result.status, result.final_output) == ("completed", "Sunny in Oslo.")
    assert weather_agent.executed == ["Oslo"]
    assert fake_openai.calls == 3


async def test_stream_resume_yields_the_new_segment(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    agent = weather_agent(store=store)
    first = await agent.arun("What is the weather in Oslo?")
    crash_after_tool_result(store.path(first.run_id))
    streamed = [e async for e in agent.stream_resume(first.run_id)]
    assert [e.type for e in streamed if not e.transient] == [
        "run_start",
        "generation",
        "message",
        "run_end",
    ]
    assert any(e.type == "text_delta" for e in streamed)
    # The segment's run_start is saved (and so announced) with its first step, the generation:
    # the first turn's text deltas stream before it.
    recorded = [e for e in streamed if not e.transient]
    assert recorded[0].run_id == first.run_id and not recorded[0].replayed


async def test_calls_of_one_generation_run_concurrently(
    fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    # Each async tool waits for the other to have started: sequential calls would time out.
    ping_started, pong_started = asyncio.Event(), asyncio.Event()

    @function_tool
    async def ping() -> str:
        ping_started.set()
        await asyncio.wait_for(pong_started.wait(), 5)
        return "ping done"

    @function_tool
    async def pong() -> str:
        pong_started.set()
        await asyncio.wait_for(ping_started.wait(), 5)
        return "pong done"

    # The same for sync tools, which run in threads.
    barrier = threading.Barrier(2, timeout=5)
    threads: list[str] = []

    @function_tool
    def left() -> str:
        threads.append(threading.current_thread().name)
        barrier.wait()
        return "left done"

    @function_tool
    def right() -> str:
        threads.append(threading.current_thread().name)
        barrier.wait()
        return "right done"

    fake_openai.script = [
        {"calls": [["ping", {}], ["pong", {}], ["left", {}], ["right", {}]]},
        {"text": "all done"},
    ]
    result = await weather_agent(tools=[ping, pong, left, right]).arun("go")

    results = {e.name: e for e in result.events if e.type == "tool_result"}
    assert {n: (r.result, r.error) for n, r in results.items()} == {
        "ping": ("ping done", None),
        "pong": ("pong done", None),
        "left": ("left done", None),
        "right": ("right done", None),
    }
    assert threading.main_thread().name not in threads
    assert result.final_output == "all done"
    # The tool messages go back in the order of the calls.
    tool_msgs = [m for m in fake_openai.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_msgs] == [
        "ping done",
        "pong done",
        "left done",
        "right done",
    ]


def test_http_500_fails_the_run_without_leaking_the_key_and_it_can_be_resumed(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    secret = "sk-very-secret-1234"
    fake_openai.script = [{"status": 500, "message": f"upstream broke for key {secret}"}]
    store = FileStore(tmp_path)
    agent = weather_agent(store=store, api_key=secret)
    failed = agent.run("What is the weather in Oslo?")

    assert failed.status == "failed" and failed.final_output is None
    assert "500" in failed.error and "upstream broke" in failed.error
    assert secret not in failed.error
    assert secret not in store.path(failed.run_id).read_text()
    assert log_types(store.path(failed.run_id)) == ["run_start", "run_end"]

    from tests.openai_server import weather_script

    fake_openai.script = weather_script
    resumed = agent.resume(failed.run_id)
    assert resumed.status == "completed"
    assert resumed.final_output == weather_text("Oslo")
    assert log_types(store.path(failed.run_id)) == ["run_start", "run_end", *FULL_RUN]


async def test_a_max_turns_run_is_continued_by_resume(tmp_path: Path) -> None:
    state = {"answer": False}
    model = ScriptedModel(
        lambda messages: (
            ScriptedModel.text("enough") if state["answer"] else model.calls(("noop", {}))
        )
    )

    @function_tool
    def noop() -> str:
        return "nothing"

    store = FileStore(tmp_path)
    agent = Agentor("Looper", model=model, tools=[noop], store=store, max_turns=2)
    first = await agent.arun("loop")
    assert first.status == "max_turns" and "max_turns" in first.error

    state["answer"] = True
    result = await agent.aresume(first.run_id)
    assert (result.status, result.final_output) == ("completed", "enough")
    gens = [d for d in log_lines(store.path(first.run_id)) if d["type"] == "generation"]
    assert [g["turn"] for g in gens] == [1, 2, 3]
    # The continued request carries the whole conversation so far.
    assert len(model.requests[-1]) == len(model.requests[-2]) + 2


async def test_memory_store_refuses_a_second_runner_in_process(
    weather_agent: WeatherAgents,
) -> None:
    release = asyncio.Event()

    @function_tool
    async def wait() -> str:
        await release.wait()
        return "released"

    weather_agent.srv.script = [{"calls": [["wait", {}]]}, {"text": "done"}]
    store = MemoryStore()
    agent = weather_agent(store=store, tools=[wait])
    stream = agent.stream_chat("hold it")
    run_id = (await anext(stream)).run_id
    events: list[Any] = []
    while (event := await anext(stream)).type != "tool_call":
        events.append(event)
    assert store.is_locked(run_id)
    with pytest.raises(RunLockedError):
        await agent.aresume(run_id)
    release.set()
    rest = [e async for e in stream]
    assert rest[-1].type == "run_end" and rest[-1].status == "completed"
    assert not store.is_locked(run_id)


def test_run_called_again_in_one_process_leaves_no_dangling_connections(children) -> None:
    # Each run() owns an event loop; the openai client's connections must close with it, or
    # they are torn down later on a closed loop ("Event loop is closed" tracebacks). The
    # server lives in the child so that it closes the connections while the child runs on.
    proc = children.run(
        "from agentor import Agentor, function_tool\n"
        "from tests.openai_server import FakeOpenAI\n"
        "@function_tool\n"
        "def get_weather(city: str) -> str:\n"
        "    return f'sunny in {city}'\n"
        "with FakeOpenAI() as srv:\n"
        "    agent = Agentor('W', tools=[get_weather], base_url=srv.url, api_key='sk-t',\n"
        "                    max_retries=0)\n"
        "    for _ in range(3):\n"
        "        print(agent.run('What is the weather in Oslo?').final_output)\n"
    )
    assert proc.stdout.splitlines() == ["sunny in Oslo"] * 3
    assert "Event loop is closed" not in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_an_unexpected_error_quoting_the_key_is_redacted() -> None:
    from agentor.engine.models import OpenAIModel
    from agentor.errors import ModelError

    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", api_key="sk-very-secret-key")

    def broken_client() -> None:
        raise RuntimeError("client setup failed with key sk-very-secret-key")

    model._get_client = broken_client  # an error from outside the SDK that quotes the key
    with pytest.raises(ModelError) as caught:
        await model.generate([{"role": "user", "content": "hi"}], [])
    assert "sk-very-secret-key" not in str(caught.value)
    assert "***" in str(caught.value)


class GatedStore(FileStore):
    """Holds the save of a `holds` event (a tool result) at the gate, before it reaches the
    store's mutex; `order` says when that save landed and when the run was let go."""

    def __init__(self, directory: Path, holds: str = "tool_result") -> None:
        super().__init__(directory)
        self.holds = holds
        self.waiting = threading.Event()
        self.gate = threading.Event()
        self.order: list[str] = []

    def append_many(self, run_id, events) -> None:
        events = list(events)
        held = any(e.type == self.holds for e in events)
        if held:
            self.waiting.set()
            self.gate.wait(10)
        super().append_many(run_id, events)
        if held:
            self.order.append(f"{self.holds} saved")

    @contextlib.contextmanager
    def lock(self, run_id: str):
        with super().lock(run_id):
            yield
        self.order.append("let go")


async def unwound_or_done(task: asyncio.Future, unwound: asyncio.Event) -> None:
    """Until the cancelled run waits for its saves (`Recorder.drain`) or has ended."""
    waiting = asyncio.ensure_future(unwound.wait())
    try:
        await asyncio.wait({task, waiting}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()


@pytest.fixture
def unwound(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Set once a run has done all it does before waiting for its saves still under way."""
    reached = asyncio.Event()
    drain = Recorder.drain

    async def observed_drain(self: Recorder, timeout: float = 10.0) -> None:
        reached.set()
        await drain(self, timeout)

    monkeypatch.setattr(Recorder, "drain", observed_drain)
    return reached


async def test_a_cancelled_run_finishes_its_save_before_it_lets_go_of_the_run(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents, unwound: asyncio.Event
) -> None:
    # Cancelled (the TUI's x, an abandoned stream, ^C) while a save is on its way: the save
    # lands while the run is still held, never after another process may have taken it, and
    # the tool's result is kept, so a resume does not run the tool again.
    store = GatedStore(tmp_path)
    agent = weather_agent(store=store)
    task = asyncio.create_task(agent.arun("What is the weather in Oslo?"))
    assert await asyncio.to_thread(store.waiting.wait, 10)
    run_id = store.list_runs()[0]
    task.cancel()
    await unwound_or_done(task, unwound)  # the save is opened only once the run stopped
    store.gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert store.order == ["tool_result saved", "let go"]
    assert log_types(store.path(run_id)) == FULL_RUN[:4]
    assert not store.is_locked(run_id)
    result = await weather_agent(store=FileStore(tmp_path)).aresume(run_id)
    assert result.status == "completed" and weather_agent.executed == ["Oslo"]


REFUSED_OR_RESUMED = CHILD_AGENT + (
    "\nfrom agentor import RunLockedError"
    "\ntry:"
    "\n    print('resumed:', agent.resume(os.environ['RUN_ID']).status)"
    "\nexcept RunLockedError as exc:"
    "\n    print('refused by:', exc.pid)\n"
)


async def test_a_cancelled_run_is_held_until_its_pending_save_is_on_disk(
    children: Children, weather_agent: WeatherAgents, unwound: asyncio.Event
) -> None:
    # The write must land while the run is still held: had the run let go first, another
    # process could take the run and append beside the late write (the README's promise).
    runs = children.runs_dir
    store = GatedStore(runs)
    task = asyncio.create_task(weather_agent(store=store).arun("What is the weather in Oslo?"))
    assert await asyncio.to_thread(store.waiting.wait, 10)  # the tool_result's save is pending
    run_id = store.list_runs()[0]
    task.cancel()
    await asyncio.wait_for(unwound.wait(), 10)
    assert not task.done()
    try:
        with pytest.raises(RunLockedError), FileStore(runs).lock(run_id):
            pass  # a second store (as in another process) is refused
        child = await asyncio.to_thread(children.run, REFUSED_OR_RESUMED, RUN_ID=run_id)
        assert child.stdout.splitlines() == [f"refused by: {os.getpid()}"]
        assert "tool_result" not in log_types(store.path(run_id))
    finally:
        store.gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert log_types(store.path(run_id)) == FULL_RUN[:4]
    assert not FileStore(runs).is_locked(run_id)
    child = await asyncio.to_thread(children.run, REFUSED_OR_RESUMED, RUN_ID=run_id)
    assert child.stdout.splitlines() == ["resumed: completed"]
    assert weather_agent.executed == ["Oslo"] and counted(children.count_file) == []


async def test_a_cancelled_resume_is_held_until_its_pending_save_is_on_disk(
    tmp_path: Path, weather_agent: WeatherAgents, unwound: asyncio.Event
) -> None:
    # As for a fresh run: a resume cancelled (the TUI's x, ^C) while its tool result is being
    # saved lets go of the run only once that save has landed.
    first = await weather_agent(store=FileStore(tmp_path)).arun("What is the weather in Oslo?")
    path = tmp_path / f"{first.run_id}.jsonl"
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:3]))  # no result
    store = GatedStore(tmp_path)
    task = asyncio.create_task(weather_agent(store=store).aresume(first.run_id))
    assert await asyncio.to_thread(store.waiting.wait, 10)  # the tool_result's save is pending
    task.cancel()
    await unwound_or_done(task, unwound)
    assert not task.done(), "the resume ended with its save still under way"
    assert store.is_locked(first.run_id) and store.order == []
    store.gate.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.order == ["tool_result saved", "let go"]
    resumed = log_types(path)[3:]
    assert resumed[0] == "run_start" and resumed[-1] == "tool_result"  # kept, and last


async def test_an_abandoned_stream_of_a_resume_holds_the_run_until_its_pending_save_is_on_disk(
    tmp_path: Path, weather_agent: WeatherAgents, unwound: asyncio.Event
) -> None:
    first = await weather_agent(store=FileStore(tmp_path)).arun("What is the weather in Oslo?")
    crash_after_tool_result(tmp_path / f"{first.run_id}.jsonl")
    store = GatedStore(tmp_path, holds="generation")  # the reply's save (with its run_start)
    stream = weather_agent(store=store).stream_resume(first.run_id)
    first_event = await anext(stream)
    assert first_event.type == "text_delta"  # streamed before the reply is saved
    assert await asyncio.to_thread(store.waiting.wait, 10)
    closing = asyncio.ensure_future(stream.aclose())  # the reader walks away
    await unwound_or_done(closing, unwound)
    assert not closing.done(), "the stream was closed with its run's save still under way"
    assert store.is_locked(first.run_id) and store.order == []
    store.gate.set()
    await closing
    assert store.order == ["generation saved", "let go"]
    path = tmp_path / f"{first.run_id}.jsonl"
    assert log_types(path) == [*FULL_RUN[:4], "run_start", "generation"]
