"""What a stream (or an `aresume` listener) is handed: a finished run's recorded events again,
marked replayed, with no model call and nothing written; and a resume's new segment only once it
has a step to record, so a resume stopped before that leaves the log as it found it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentor import Agentor, function_tool
from agentor.engine.events import Event
from agentor.engine.history import segments
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.errors import ModelError
from agentor.testing import ScriptedModel
from tests.conftest import log_lines

PROMPT = "Weather in Oslo?"


@function_tool
def get_weather(city: str) -> str:
    """Look the weather up."""
    return f"Sunny in {city}."


def agent_on(store: object, model: object) -> Agentor:
    return Agentor("Weather Agent", model=model, tools=[get_weather], store=store)


async def two_segment_run(store: FileStore | MemoryStore, run_id: str) -> list[Event]:
    """A completed run of two segments: cut after its tool result, then resumed."""
    script = ScriptedModel([])
    script.replies = [script.calls(("get_weather", {"city": "Oslo"})), ScriptedModel.text("Hm.")]
    await agent_on(store, script).arun(PROMPT, run_id=run_id)
    cut = store.load(run_id)[:4]
    if isinstance(store, FileStore):
        store.path(run_id).unlink()
    else:
        store._runs[run_id] = []
    store.append_many(run_id, cut)
    resumed = await agent_on(store, ScriptedModel([ScriptedModel.text("Sunny.")])).aresume(run_id)
    assert resumed.status == "completed"
    events = store.load(run_id)
    assert len(segments(events)) == 2
    return events


# -- a finished run, streamed again -----------------------------------------------------------


async def test_streaming_a_finished_run_yields_its_last_segment_marked_replayed(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path)
    events = await two_segment_run(store, "job-1")
    before = store.path("job-1").read_bytes()
    last = segments(events)[-1]
    assert [e.type for e in last] == ["run_start", "generation", "message", "run_end"]

    model = ScriptedModel([])
    agent = agent_on(store, model)
    for stream in (agent.stream_chat(PROMPT, run_id="job-1"), agent.stream_resume("job-1")):
        streamed = [e async for e in stream]
        assert [e.to_dict() for e in streamed] == [e.to_dict() for e in last]
        assert all(e.replayed for e in streamed)
        assert streamed[-1].text == "Sunny."  # a UI built on the stream shows the answer
    seen: list[Event] = []
    result = await agent.aresume("job-1", listener=seen.append)
    assert [e.to_dict() for e in seen] == [e.to_dict() for e in last]
    assert all(e.replayed for e in seen) and result.final_output == "Sunny."
    assert model.requests == [] and store.path("job-1").read_bytes() == before


async def test_replayed_is_never_written_and_recorded_events_are_not_replayed(
    tmp_path: Path,
) -> None:
    store = MemoryStore()
    first = agent_on(store, ScriptedModel([ScriptedModel.text("Sunny.")]))
    streamed = [e async for e in first.stream_chat(PROMPT, run_id="r")]
    assert streamed and not any(e.replayed for e in streamed)  # recorded now, not replayed
    again = [e async for e in agent_on(store, ScriptedModel([])).stream_chat(PROMPT, run_id="r")]
    assert again and all(e.replayed for e in again)
    assert all("replayed" not in e.to_dict() for e in again)
    files = FileStore(tmp_path)
    files.append_many("copy", again)
    assert all("replayed" not in line for line in log_lines(files.path("copy")))
    assert not any(e.replayed for e in files.load("copy"))


# -- a resume's new segment -------------------------------------------------------------------


class HangingModel:
    """Streams `partial` (if any), then never answers: a request in flight."""

    name = "hanging"

    def __init__(self, partial: str = "") -> None:
        self.partial = partial
        self.asked = asyncio.Event()

    async def generate(self, messages, tools, on_text=None) -> ModelResponse:
        if on_text is not None and self.partial:
            on_text(self.partial)
        self.asked.set()
        await asyncio.sleep(3600)
        raise AssertionError("never answered")


class BatchStore(FileStore):
    """A FileStore that notes the types of each write it makes."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.writes: list[list[str]] = []

    def append_many(self, run_id, events) -> None:
        events = list(events)
        super().append_many(run_id, events)
        self.writes.append([e.type for e in events if not e.transient])


async def cut_after_tool_result(store: FileStore) -> bytes:
    script = ScriptedModel([])
    script.replies = [script.calls(("get_weather", {"city": "Oslo"})), ScriptedModel.text("Hm.")]
    await agent_on(store, script).arun(PROMPT, run_id="r")
    data = b"".join(store.path("r").read_bytes().splitlines(keepends=True)[:4])
    store.path("r").write_bytes(data)
    return data


@pytest.mark.parametrize("partial", ["", "Let me see"], ids=["asked", "streaming"])
async def test_a_resume_stopped_while_its_model_request_is_in_flight_writes_nothing(
    tmp_path: Path, partial: str
) -> None:
    store = FileStore(tmp_path)
    before = await cut_after_tool_result(store)
    model = HangingModel(partial)
    seen: list[Event] = []
    task = asyncio.create_task(agent_on(store, model).aresume("r", listener=seen.append))
    await asyncio.wait_for(model.asked.wait(), 10)
    assert FileStore(tmp_path).is_locked("r")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.path("r").read_bytes() == before  # no empty segment
    assert [e.type for e in seen] == (["text_delta"] if partial else [])
    assert not FileStore(tmp_path).is_locked("r")
    # The next resume writes one whole segment.
    result = await agent_on(store, ScriptedModel([ScriptedModel.text("Sunny.")])).aresume("r")
    assert result.status == "completed"
    types = [d["type"] for d in log_lines(store.path("r"))]
    assert types[4:] == ["run_start", "generation", "message", "run_end"]


async def test_a_resumes_run_start_is_saved_with_its_first_step_and_announced_after_it(
    tmp_path: Path,
) -> None:
    store = BatchStore(tmp_path)
    await cut_after_tool_result(store)
    store.writes.clear()
    saved_when_seen: list[tuple[str, int]] = []

    def listener(event: Event) -> None:
        if not event.transient:
            saved_when_seen.append((event.type, len(store.writes)))

    result = await agent_on(store, ScriptedModel([ScriptedModel.text("Sunny.")])).aresume(
        "r", listener=listener
    )
    assert result.status == "completed"
    assert store.writes == [["run_start", "generation"], ["message"], ["run_end"]]
    # Save before announce: each event reaches the listener after the write that holds it.
    assert saved_when_seen == [("run_start", 1), ("generation", 1), ("message", 2), ("run_end", 3)]
    assert [e.type for e in result.events[4:]] == ["run_start", "generation", "message", "run_end"]


async def test_a_resume_whose_model_fails_writes_its_run_start_with_the_failure(
    tmp_path: Path,
) -> None:
    class Down:
        name = "down"

        async def generate(self, messages, tools, on_text=None) -> ModelResponse:
            raise ModelError("APIConnectionError: Connection refused")

    store = BatchStore(tmp_path)
    await cut_after_tool_result(store)
    store.writes.clear()
    result = await agent_on(store, Down()).aresume("r")
    assert result.status == "failed"
    assert store.writes == [["run_start", "run_end"]]


async def test_a_fresh_run_saves_its_run_start_at_once(tmp_path: Path) -> None:
    # It holds the input: without it a crash would leave nothing to resume from.
    store = FileStore(tmp_path)
    model = HangingModel()
    task = asyncio.create_task(agent_on(store, model).arun(PROMPT, run_id="new"))
    await asyncio.wait_for(model.asked.wait(), 10)
    assert [d["type"] for d in log_lines(store.path("new"))] == ["run_start"]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [d["type"] for d in log_lines(store.path("new"))] == ["run_start"]
