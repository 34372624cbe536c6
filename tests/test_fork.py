"""`Agentor.fork`: a new run that copies a recorded one up to a step, changes that step and goes
on; the parent is never written to and nothing recorded before the step runs again."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.events import FORK, RUN_START
from agentor.engine.fork_mark import last_fork
from agentor.engine.history import summarize
from agentor.engine.log.format import BadLine
from agentor.engine.statuses import COMPLETED, INCOMPLETE
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.engine.store.memory import MemoryStore
from agentor.errors import RunNotFoundError
from agentor.testing import ScriptedModel
from tests.forkkit import (
    INSTRUCTIONS,
    Weather,
    log_bytes,
    result_line,
    tool_messages,
    types,
    weather_model,
)

PROMPT = "What is the weather in Oslo and Rome?"
# The parent's lines: 1 run_start, 2 generation (Oslo, Rome), 3-4 tool_call, 5 tool_result Oslo,
# 6 tool_result Rome, 7 generation (the answer), 8 message, 9 run_end.
PARENT_TYPES = [
    "run_start",
    "generation",
    "tool_call",
    "tool_call",
    "tool_result",
    "tool_result",
    "generation",
    "message",
    "run_end",
]


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return FileStore(tmp_path / "runs")


def parent_run(store: Any) -> tuple[Weather, str]:
    w = Weather(store)
    result = w.agent.run(PROMPT)
    assert result.status == COMPLETED and w.ran == ["Oslo", "Rome"]
    assert types(store.load(result.run_id)) == PARENT_TYPES
    return w, result.run_id


def test_a_fork_at_a_tool_result_uses_the_new_result_keeps_the_others_and_runs_no_tool(
    store: FileStore,
) -> None:
    w, parent = parent_run(store)
    before = log_bytes(store, parent)
    first, second = store.load(parent)[4:6]  # the two results, in the order they landed
    model = weather_model()
    fork = w.agent.clone(model=model).fork(parent, at=5, result="Snow.")

    told = {first.args["city"]: "Snow.", second.args["city"]: second.result}
    assert fork.status == COMPLETED
    assert fork.final_output == f"heard: {told['Oslo']} | {told['Rome']}"
    assert tool_messages(model.requests[0]) == [told["Oslo"], told["Rome"]]
    assert len(model.requests) == 1
    assert w.ran == ["Oslo", "Rome"], "no tool ran in the fork"
    assert log_bytes(store, parent) == before
    events = store.load(fork.run_id)
    assert types(events) == [
        *PARENT_TYPES[:4],
        "fork",
        "run_start",
        "tool_result",
        "tool_result",
        "generation",
        "message",
        "run_end",
    ]
    mark = events[4]
    assert mark.forked_from == parent
    assert mark.extra["at"] == 5
    assert mark.extra["edit"] == {
        "call_id": first.call_id,
        "name": "get_weather",
        "result": "Snow.",
    }
    edited, kept = events[6], events[7]
    assert (edited.call_id, edited.result, edited.replayed_from) == (first.call_id, "Snow.", None)
    assert (kept.call_id, kept.result) == (second.call_id, second.result)
    assert kept.replayed_from == second.call_id, "answered from the parent's record"
    # The copy is the parent's lines, byte for byte.
    parent_lines = before.splitlines(keepends=True)
    assert log_bytes(store, fork.run_id).splitlines(keepends=True)[:4] == parent_lines[:4]

    # At the second result, the first one is kept from the copy and only the edit is new.
    again = w.agent.clone(model=weather_model()).fork(parent, at=6, result="Hail.")
    told = {first.args["city"]: first.result, second.args["city"]: "Hail."}
    assert again.final_output == f"heard: {told['Oslo']} | {told['Rome']}"
    assert types(store.load(again.run_id))[4:8] == [
        "tool_result",
        "fork",
        "run_start",
        "tool_result",
    ]
    assert w.ran == ["Oslo", "Rome"]


def test_a_fork_at_a_generation_asks_again_with_another_model_and_an_added_message(
    store: FileStore,
) -> None:
    w, parent = parent_run(store)
    before = log_bytes(store, parent)
    other = weather_model("other-model")
    fork = w.agent.fork(parent, "Also tell me about Paris.", at=7, model=other)

    assert fork.status == COMPLETED
    request = other.requests[0]
    assert request[-1] == {"role": "user", "content": "Also tell me about Paris."}
    assert tool_messages(request) == ["Sunny in Oslo.", "Sunny in Rome."]
    assert fork.final_output == "heard: Sunny in Paris."
    assert w.ran == ["Oslo", "Rome", "Paris"], "only the new call ran"
    events = store.load(fork.run_id)
    starts = [e for e in events if e.type == RUN_START]
    assert starts[-1].model == "other-model"
    mark = last_fork(events)
    assert mark is not None and mark.at == 7
    assert mark.edit == {
        "model": "other-model",
        "input": [{"role": "user", "content": "Also tell me about Paris."}],
    }
    assert [e.turn for e in events if e.type == "generation"] == [1, 2, 3]
    assert log_bytes(store, parent) == before

    # Without input or model: the same request again, to the agent's model.
    again = weather_model()
    w.agent.clone(model=again).fork(parent, at=2)
    assert again.requests[0] == [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": PROMPT},
    ]
    assert w.ran == ["Oslo", "Rome", "Paris", "Oslo", "Rome"], "its calls are after the point"


def test_a_fork_at_the_run_start_starts_over_with_the_prompt_replaced(store: FileStore) -> None:
    w, parent = parent_run(store)
    model = weather_model()
    fork = w.agent.clone(model=model).fork(parent, "What is the weather in Lima?", at=1)
    assert fork.final_output == "heard: Sunny in Lima."
    assert model.requests[0] == [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": "What is the weather in Lima?"},
    ]
    events = store.load(fork.run_id)
    assert types(events)[:2] == ["fork", "run_start"]
    assert events[1].messages == model.requests[0]
    assert last_fork(events).edit == {"prompt": model.requests[0]}  # type: ignore[union-attr]
    assert summarize(fork.run_id, events).first_prompt == "What is the weather in Lima?"

    same = w.agent.fork(parent, at=1)  # the parent's prompt again
    assert same.final_output == "heard: Sunny in Oslo. | Sunny in Rome."


def test_a_whole_run_fork_continues_with_input_and_copies_a_run_that_needs_nothing(
    store: FileStore,
) -> None:
    w, parent = parent_run(store)
    before = log_bytes(store, parent)
    model = weather_model()
    cont = w.agent.clone(model=model).fork(parent, "And Lima?")
    request = model.requests[0]
    assert request[-2:] == [
        {"role": "assistant", "content": "heard: Sunny in Oslo. | Sunny in Rome."},
        {"role": "user", "content": "And Lima?"},
    ]
    assert cont.final_output == "heard: Sunny in Lima."
    assert cont.usage.total_tokens == sum(
        e.usage.total_tokens for e in store.load(cont.run_id) if e.type == "generation" and e.usage
    )

    silent = ScriptedModel([])  # asked nothing: a call would fail the test
    copy = w.agent.clone(model=silent).fork(parent, fork_id="snapshot")
    assert (copy.run_id, copy.status, copy.final_output) == (
        "snapshot",
        COMPLETED,
        cont.events[8].text,
    )
    assert silent.requests == []
    # Upstream's shape: the whole log, then the marker.
    lines = log_bytes(store, "snapshot").splitlines(keepends=True)
    assert lines[:-1] == before.splitlines(keepends=True)
    marker = json.loads(lines[-1])
    assert (marker["type"], marker["forked_from"], "at" in marker) == (FORK, parent, False)
    with pytest.raises(ValueError, match="needs nothing more: a fork of the whole run would ask"):
        w.agent.fork(parent, model=silent)
    assert log_bytes(store, parent) == before


def test_a_whole_run_fork_finishes_an_interrupted_parent_without_running_its_tools(
    store: FileStore,
) -> None:
    w, parent = parent_run(store)
    path = store.path(parent)
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:6]))  # killed here
    before = log_bytes(store, parent)
    fork = w.agent.fork(parent)
    assert fork.final_output == "heard: Sunny in Oslo. | Sunny in Rome."
    assert w.ran == ["Oslo", "Rome"]
    assert log_bytes(store, parent) == before
    assert summarize(parent, store.load(parent)).status == INCOMPLETE


REFUSALS = [
    ({"at": 3}, ValueError, "line 3 of run {p} is a tool_call; a fork starts at a run_start, a "
     "generation or a tool_result line"),
    ({"at": 10}, ValueError, "run {p} has 9 lines: there is no line 10"),
    ({"at": 0}, ValueError, "run {p} has 9 lines: there is no line 0"),
    ({"at": True}, TypeError, "at= is a line number of run {p} (an int), not True"),
    ({"at": "5"}, TypeError, "at= is a line number of run {p} (an int), not '5'"),
    ({"at": 5}, ValueError, "line 5 of run {p} is a tool_result: give result=, the value to use "
     "instead"),
    ({"at": 2, "result": "x"}, ValueError, "result= replaces a tool result; line 2 of run {p} is a "
     "generation"),
    ({"result": "x"}, ValueError, "result= replaces a tool result: give at=, the line of a "
     "tool_result"),
    ({"at": 5, "result": "x", "input": "hi"}, ValueError, "input= cannot go with result=: fork at "
     "the generation after it instead"),
    ({"at": 5, "result": object()}, TypeError, "result= must be a JSON value"),
    ({"input": {"role": "user"}}, TypeError, "input must be a str"),
    ({"fork_id": "{p}"}, ValueError, "fork_id='{p}' is the run forked: a fork is a new run"),
    ({"fork_id": "x/y"}, ValueError, "invalid run id 'x/y'"),
]  # fmt: skip


@pytest.mark.parametrize(("kwargs", "error", "message"), REFUSALS)
def test_what_cannot_be_forked_is_refused_saying_what_can_and_nothing_is_written(
    store: FileStore, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    w, parent = parent_run(store)
    before = log_bytes(store, parent)
    silent = ScriptedModel([])
    kwargs = {k: v.format(p=parent) if k == "fork_id" else v for k, v in kwargs.items()}
    with pytest.raises(error) as caught:
        w.agent.clone(model=silent).fork(parent, **kwargs)
    assert message.format(p=parent) in str(caught.value)
    assert store.list_runs() == [parent]
    assert log_bytes(store, parent) == before
    assert silent.requests == [] and w.ran == ["Oslo", "Rome"]


def test_an_unknown_run_or_a_fork_id_in_use_is_refused_and_nothing_is_written(
    store: FileStore,
) -> None:
    w, parent = parent_run(store)
    with pytest.raises(RunNotFoundError):
        w.agent.fork("nosuchrun", at=1)
    taken = w.agent.fork(parent, at=5, result="x").run_id
    taken_bytes = log_bytes(store, taken)
    with pytest.raises(ValueError, match=f"run {taken} already exists: choose an unused fork_id"):
        w.agent.fork(parent, at=5, result="y", fork_id=taken)
    assert log_bytes(store, taken) == taken_bytes
    assert sorted(store.list_runs()) == sorted([parent, taken])


def test_at_counts_unreadable_lines_as_the_tui_numbers_them(store: FileStore) -> None:
    w, parent = parent_run(store)
    oslo = result_line(store, parent, "Oslo")
    path = store.path(parent)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:2], b"{not json\n", *lines[2:]]))  # now line 3
    assert isinstance(load_lines(store, parent)[2], BadLine)
    with pytest.raises(ValueError, match=r"line 3 of run \w+ is unreadable \(not JSON"):
        w.agent.fork(parent, at=3)
    fork = w.agent.fork(parent, at=oslo + 1, result="Snow in Oslo.")  # one line down
    assert fork.final_output == "heard: Snow in Oslo. | Sunny in Rome."
    assert not any(isinstance(e, BadLine) for e in load_lines(store, fork.run_id))


def test_a_fork_of_a_fork_and_a_fork_whose_parents_are_deleted(store: FileStore) -> None:
    w, parent = parent_run(store)
    oslo = result_line(store, parent, "Oslo")
    first = w.agent.fork(parent, at=oslo, result="Snow in Oslo.")
    edited = oslo + 2  # after the copy, the fork event and run_start
    assert store.load(first.run_id)[edited - 1].result == "Snow in Oslo."
    second = w.agent.fork(first.run_id, at=edited, result="Hail in Oslo.")
    assert second.final_output == "heard: Hail in Oslo. | Sunny in Rome."
    events = store.load(second.run_id)
    marks = [e.forked_from for e in events if e.type == FORK]
    assert marks == [parent, first.run_id], "the copy keeps its own lineage; the last is its own"
    assert last_fork(events).forked_from == first.run_id  # type: ignore[union-attr]
    assert w.ran == ["Oslo", "Rome"]

    for gone in (parent, first.run_id):
        store.path(gone).unlink()
    again = Weather(store, model=ScriptedModel([]))  # a finished run: no model call
    result = again.agent.resume(second.run_id)
    assert result.final_output == second.final_output and again.ran == []


def test_a_fork_stopped_while_the_model_is_asked_is_left_resumable_with_its_edit(
    store: FileStore,
) -> None:
    w, parent = parent_run(store)
    asked = asyncio.Event()

    class Hanging:
        name = "hanging"

        async def generate(self, *args: Any, **kwargs: Any) -> Any:
            asked.set()
            await asyncio.Event().wait()

    oslo = result_line(store, parent, "Oslo")

    async def stop_it() -> None:
        hanging = w.agent.clone(model=Hanging())
        task = asyncio.ensure_future(
            hanging.afork(parent, at=oslo, result="Snow.", fork_id="stopped")
        )
        await asyncio.wait_for(asked.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stop_it())
    kept = ["tool_result"] if oslo == 5 else []  # Rome's, when it landed after Oslo's
    assert types(store.load("stopped"))[oslo - 1 :] == ["fork", "run_start", "tool_result", *kept]
    store.path(parent).unlink()
    model = weather_model()
    done = w.agent.clone(model=model).resume("stopped")
    assert done.final_output == "heard: Snow. | Sunny in Rome."
    assert w.ran == ["Oslo", "Rome"]


def test_a_fork_with_input_whose_model_failed_is_resumed_with_its_input(store: FileStore) -> None:
    w, parent = parent_run(store)

    class Down:
        name = "down"

        async def generate(self, *args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("the model is down")

    failed = w.agent.clone(model=Down()).fork(parent, "And Lima?", at=7)
    assert failed.status == "failed"
    model = weather_model()
    done = w.agent.clone(model=model).resume(failed.run_id)
    assert model.requests[0][-1] == {"role": "user", "content": "And Lima?"}
    assert done.final_output == "heard: Sunny in Lima."


def test_a_forks_time_worked_leaves_out_the_time_between_the_parent_and_the_fork(
    store: FileStore,
) -> None:
    w, parent = parent_run(store)
    path = store.path(parent)
    day = 86400.0
    aged = []
    for line in path.read_bytes().splitlines():  # the parent ran a day ago
        d = json.loads(line)
        for key in ("ts", "started_at", "ended_at"):
            if key in d:
                d[key] -= day
        aged.append(json.dumps(d).encode() + b"\n")
    path.write_bytes(b"".join(aged))
    fork = w.agent.fork(parent, at=5, result="Snow.")
    s = summarize(fork.run_id, store.load(fork.run_id))
    assert s.wall_time is not None and s.wall_time > day - 60
    took = s.active_time()
    assert took is not None and took < 60


def test_forks_on_a_memory_store_and_the_parent_untouched(tmp_path: Path) -> None:
    store = MemoryStore()
    w, parent = parent_run(store)
    before = [e.to_dict() for e in store.load(parent)]
    fork = w.agent.fork(parent, at=result_line(store, parent, "Oslo"), result="Snow in Oslo.")
    assert fork.final_output == "heard: Snow in Oslo. | Sunny in Rome."
    assert [e.to_dict() for e in store.load(parent)] == before
    assert w.ran == ["Oslo", "Rome"]


def test_the_fork_is_saved_before_the_model_is_asked_and_announced_in_order(
    store: FileStore,
) -> None:
    w, parent = parent_run(store)
    seen: list[tuple[str, bool]] = []

    def listener(event: Any) -> None:
        on_disk = store.path("f").exists() and len(store.load("f")) >= 7
        seen.append((event.type, on_disk))

    w.agent.fork(parent, at=5, result="x", fork_id="f", listener=listener)
    assert [t for t, _ in seen][:8] == [
        *PARENT_TYPES[:4],
        "fork",
        "run_start",
        "tool_result",
        "tool_result",
    ]
    assert all(on_disk for _, on_disk in seen), "every event was saved before it was announced"
    assert time.time() - store.load("f")[4].ts < 60  # type: ignore[operator]


def test_a_fork_copies_neither_a_fleets_claims_nor_an_empty_segment(store: FileStore) -> None:
    w, parent = parent_run(store)
    path = store.path(parent)
    lines = path.read_bytes().splitlines(keepends=True)
    claim = b'{"type":"claim","by":"w1","pid":1,"host":"h","attempt":1,"ts":1}\n'
    release = b'{"type":"release","by":"w1","pid":1,"host":"h","note":"stopping","ts":2}\n'
    empty = lines[0]  # a resume's run_start with no step after it
    path.write_bytes(b"".join([lines[0], claim, *lines[1:6], release, empty, *lines[6:]]))
    assert types(store.load(parent))[7:10] == ["release", "run_start", "generation"]
    fork = w.agent.fork(parent, at=10, model=weather_model())  # the answer's generation
    copied = types(store.load(fork.run_id))
    assert copied[:8] == [*PARENT_TYPES[:6], "fork", "run_start"]
    assert "claim" not in copied and "release" not in copied
