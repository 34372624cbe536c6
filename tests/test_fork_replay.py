"""`Agentor.replay`: a recorded conversation asked of another model, its tool calls answered
from the recording; a novel call gets an error (or runs, with novel="run"), after a crash too."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, function_tool
from agentor.engine.events import TOOL_RESULT, Event
from agentor.engine.fork.compare import compare
from agentor.engine.fork.recording import drift_of, recording_of
from agentor.engine.fork_mark import fork_event, last_fork
from agentor.engine.history import canonical_args
from agentor.engine.models import ModelResponse
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel, tool_call
from tests.forkkit import INSTRUCTIONS, Weather, log_bytes, tool_messages

PROMPT = "What is the weather in Oslo and Rome?"


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return FileStore(tmp_path / "runs")


def second_model(*cities: str, name: str = "second-model") -> ScriptedModel:
    """Asks get_weather for `cities` in one turn, then answers with what it was told."""
    model = ScriptedModel([], name=name)

    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        if messages[-1]["role"] == "tool":
            return ScriptedModel.text(" / ".join(tool_messages(messages)))
        return model.calls(*(("get_weather", {"city": c}) for c in cities))

    model.replies = reply
    return model


def results(store: FileStore, run_id: str) -> list[tuple[str, Any, str | None, str | None]]:
    """The run's tool results, by city (one generation's results land in any order)."""
    found = [
        (e.args["city"], e.result, e.error, e.replayed_from)
        for e in store.load(run_id)
        if e.type == TOOL_RESULT
    ]
    return sorted(found, key=lambda r: r[0])


def test_a_replay_serves_recorded_results_and_refuses_novel_calls(store: FileStore) -> None:
    w = Weather(store)
    parent = w.agent.run(PROMPT)
    before = log_bytes(store, parent.run_id)
    model = second_model("Rome", "Paris")
    replay = w.agent.replay(parent.run_id, model=model)

    assert replay.status == COMPLETED
    assert w.ran == ["Oslo", "Rome"], "nothing ran: Rome was served, Paris refused"
    refusal = (
        f"not in the recording: run {parent.run_id} made no get_weather call with these arguments"
    )
    assert results(store, replay.run_id) == [
        ("Paris", None, refusal, None),
        ("Rome", "Sunny in Rome.", None, "w1_1"),
    ]
    assert model.requests[0] == [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": PROMPT},
    ], "the recorded conversation, from its prompt"
    assert tool_messages(model.requests[1]) == ["Sunny in Rome.", f"Error: {refusal}"]
    events = store.load(replay.run_id)
    mark = last_fork(events)
    assert mark is not None and (mark.forked_from, mark.at, mark.novel) == (
        parent.run_id,
        1,
        "error",
    )
    assert mark.edit["model"] == "second-model"
    assert sorted(r["call_id"] for r in mark.recording) == ["w1_0", "w1_1"]
    assert [e.model for e in events if e.type == "run_start"] == ["second-model"]
    assert log_bytes(store, parent.run_id) == before

    found = compare(store.load(parent.run_id), events)
    assert found.first is not None and (found.first.kind, found.first.turn) == ("args", 1)


def test_a_replay_with_novel_run_runs_the_novel_calls_only(store: FileStore) -> None:
    w = Weather(store)
    parent = w.agent.run(PROMPT)
    replay = w.agent.replay(parent.run_id, model=second_model("Rome", "Paris"), novel="run")
    assert w.ran == ["Oslo", "Rome", "Paris"]
    assert results(store, replay.run_id) == [
        ("Paris", "Sunny in Paris.", None, None),
        ("Rome", "Sunny in Rome.", None, "w1_1"),
    ]
    with pytest.raises(ValueError, match="novel= is one of 'error', 'stop', 'run', not 'maybe'"):
        w.agent.replay(parent.run_id, model=second_model("Rome"), novel="maybe")


def test_a_call_asked_more_often_than_recorded_gets_the_last_recorded_result(
    store: FileStore,
) -> None:
    w = Weather(store)
    parent = w.agent.run(PROMPT)
    replay = w.agent.replay(parent.run_id, model=second_model("Oslo", "Oslo"))
    assert [r[1:] for r in results(store, replay.run_id)] == [
        ("Sunny in Oslo.", None, "w1_0"),
        ("Sunny in Oslo.", None, "w1_0"),
    ]
    assert w.ran == ["Oslo", "Rome"]


def test_a_replay_resumed_after_a_crash_still_refuses_novel_calls_without_its_parent(
    store: FileStore,
) -> None:
    w = Weather(store)
    parent = w.agent.run(PROMPT)
    replay = w.agent.replay(parent.run_id, model=second_model("Rome"), fork_id="r1")
    assert replay.status == COMPLETED
    path = store.path("r1")
    lines = path.read_bytes().splitlines(keepends=True)
    assert [json.loads(line)["type"] for line in lines[:3]] == ["fork", "run_start", "generation"]
    path.write_bytes(b"".join(lines[:3]))  # killed after asking for Rome, before its result
    store.path(parent.run_id).unlink()

    model = second_model("Rome", "Lima")
    done = w.agent.clone(model=model).resume("r1")
    assert done.status == COMPLETED
    refusal = (
        f"not in the recording: run {parent.run_id} made no get_weather call with these arguments"
    )
    assert [r[1:3] for r in results(store, "r1")] == [(None, refusal), ("Sunny in Rome.", None)]
    assert w.ran == ["Oslo", "Rome"], "Lima was refused in the resumed replay too"


def test_a_resumed_replay_serves_equal_calls_on_from_where_it_was(store: FileStore) -> None:
    readings = itertools.count(1)

    @function_tool
    def get_weather(city: str) -> str:
        """Get the weather (a new reading each time)."""
        return f"reading {next(readings)} in {city}"

    def twice() -> ScriptedModel:
        model = ScriptedModel([])
        oslo = ("get_weather", {"city": "Oslo"})
        model.replies = [model.calls(oslo), model.calls(oslo), ScriptedModel.text("done")]
        return model

    agent = Agentor("Weather Agent", model=twice(), tools=[get_weather], store=store)
    parent = agent.run("Oslo, twice.")
    replay = agent.replay(parent.run_id, model=twice(), fork_id="r2")
    served = ["reading 1 in Oslo", "reading 2 in Oslo"]
    assert [r[1] for r in results(store, replay.run_id)] == served
    path = store.path("r2")
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:5]))  # one served
    resumed = ScriptedModel([])
    resumed.replies = [resumed.calls(("get_weather", {"city": "Oslo"})), ScriptedModel.text("ok")]
    agent.clone(model=resumed).resume("r2")
    assert [r[1] for r in results(store, "r2")] == served, "the second reading, not the first"
    assert next(readings) == 3, "the tool never ran in the replay"


def test_a_turn_asked_again_counts_what_it_served_once() -> None:
    """A resumed fifo replay goes on from the next recorded result: a turn a crash cut off,
    then asked again, counts by its last attempt (whose first call was answered from the cut
    attempt's own record, its drift kept), not twice."""
    recording = [
        {"call_id": f"r{i}", "name": "get_weather", "args": {"city": c}, "result": c.lower()}
        for i, c in enumerate(("Oslo", "Rome", "Lima"), 1)
    ]
    replay = {"novel": "error", "match": "fifo", "recording": recording}
    paris, kyiv = (
        tool_call("get_weather", {"city": "Paris"}, "c1"),
        tool_call("get_weather", {"city": "Kyiv"}, "c2"),
    )

    def served(call_id: str, city: str, result: str, source: str, drift: str) -> Event:
        return Event(
            TOOL_RESULT,
            name="get_weather",
            call_id=call_id,
            args={"city": city},
            result=result,
            replayed_from=source,
            turn=1,
            extra={"drift": {"city": drift}},
        )

    start = Event("run_start", messages=[{"role": "user", "content": "Paris and Kyiv?"}])
    attempt = [start, Event("generation", turn=1, calls=[paris, kyiv])]
    events = [fork_event("parent", 1.0, 1, {}, replay), *attempt]
    events.append(served("c1", "Paris", "oslo", "r1", "Oslo"))  # killed before Kyiv's
    events += [*attempt, served("c1", "Paris", "oslo", "c1", "Oslo")]
    events.append(served("c2", "Kyiv", "rome", "r2", "Rome"))
    rec = recording_of(events)
    assert rec is not None and (rec.match, rec.served) == ("fifo", {"get_weather": 2})
    third = rec.answer("get_weather", canonical_args({"city": "Quito"}))
    assert third is not None and third.result == "lima"
    assert rec.answer("get_weather", canonical_args({"city": "Quito"})) is None, "used up"
    assert drift_of(events[-2], canonical_args({"city": "Paris"})) == {"drift": {"city": "Oslo"}}
    assert drift_of(third, canonical_args({"city": "Lima"})) == {}

    # A replay written before `match` existed reads as strict.
    old = {"novel": "error", "recording": recording}
    rec = recording_of([fork_event("parent", 1.0, 1, {}, old), start])
    assert rec is not None and rec.match == "strict" and rec.served == {}
