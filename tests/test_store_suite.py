"""The store contract, one suite for every store: FileStore, MemoryStore and PostgresStore.

Each test runs once per store (`stores` is parametrised). `stores.new()` is another store on
the same runs, as another process would open it (for MemoryStore, the same object: its runs
live in it). What only one store does (files, torn lines, symlinks; the runs table, the
change feed, fencing) is tested in that store's own files.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, RunLockedError, RunNotFoundError, function_tool
from agentor.engine.events import Event, Usage
from agentor.engine.log.format import LogEncoder
from agentor.engine.store.api import BatchStore, LockingStore, Store
from agentor.engine.store.copy import copy_runs
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.testing import ScriptedModel
from tests.conftest import FIXTURES, WeatherAgents
from tests.openai_server import FakeOpenAI

RUN = "r1"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())


class Stores:
    """The store under test: `new()` opens it again on the same runs."""

    def __init__(self, kind: str, make: Any) -> None:
        self.kind = kind
        self.new = make


@pytest.fixture(params=["file", "memory", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "file":
        yield Stores("file", lambda: FileStore(tmp_path / "runs"))
    elif request.param == "memory":
        memory = MemoryStore()
        yield Stores("memory", lambda: memory)
    else:
        yield Stores("postgres", request.getfixturevalue("pg_stores"))


def lines(events: list[Event]) -> list[bytes]:
    """Full-form lines: equal lines are the same events, field order included (and a NaN
    equals itself, which `==` on events would not say)."""
    encoder = LogEncoder(compact=False)
    return [encoder.encode(e) for e in events]


def assorted_events() -> list[Event]:
    """Every kind of event a log holds, with what is hard to keep: unknown fields and types,
    growing requests (compact generations), usage, odd numbers and strings."""
    system = {"role": "system", "content": "Be brief."}
    asked = [system, {"role": "user", "content": "Wetter in Zürich? ☀", "name": "x"}]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    answered = [
        *asked,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    return [
        Event("run_start", run_id=RUN, agent="A", model="m", messages=asked, v=1, pid=7,
              tools=[{"type": "function", "function": {"name": "f"}}], settings={"t": 0.5},
              started_at=1.5, ts=1.5, extra={"future_field": {"nested": [1, 2]}}),
        Event("generation", turn=1, messages=asked, calls=[call], usage=Usage(3, 4, 7), ts=2.0),
        Event("tool_call", turn=1, name="f", call_id="c1", args={}, ts=2.1),
        Event("tool_result", turn=1, name="f", call_id="c1", args={}, result={"deep": [None]}),
        Event("approval_request", name="rm", call_id="c9", extra={"why": "asks first"}),
        Event("generation", turn=2, messages=answered, text="done", usage=Usage(5, 1, 6)),
        Event("message", turn=2, text="NUL \x00, lone \udcff, big " + "x" * 3000,
              extra={"nan": float("nan"), "huge": 2**70, "inf": float("-inf")}),
        Event("run_end", status="completed", text="done", usage=Usage(8, 5, 13), ended_at=3.0),
    ]  # fmt: skip


# -- saving and loading --------------------------------------------------------------------------


def test_events_load_back_exactly_as_they_were_saved(stores: Stores) -> None:
    written = assorted_events()
    store = stores.new()
    store.append(RUN, written[0])
    store.append_many(RUN, written[1:4])
    for e in written[4:]:
        store.append(RUN, e)
    assert lines(stores.new().load(RUN)) == lines(written)
    assert lines(store.load(RUN)) == lines(written)
    assert isinstance(store, Store) and isinstance(store, BatchStore)
    assert isinstance(store, LockingStore)


def test_transient_events_are_never_saved(stores: Stores) -> None:
    store = stores.new()
    store.append_many(RUN, [Event("message", text="a"), Event("text_delta", text="tok")])
    store.append(RUN, Event("tool_wait", name="f", call_id="c1"))
    store.append_many(RUN, [Event("text_delta", text="only transient")])
    assert [e.type for e in stores.new().load(RUN)] == ["message"]


def test_runs_are_listed_in_order_and_an_unknown_run_is_not_found(stores: Stores) -> None:
    store = stores.new()
    for run_id in ("b", "a", "c-1_X", "B"):
        store.append(run_id, Event("message", text=run_id))
    assert stores.new().list_runs() == ["B", "a", "b", "c-1_X"]
    with pytest.raises(RunNotFoundError, match="nope") as missing:
        stores.new().load("nope")
    assert isinstance(missing.value, KeyError) and missing.value.run_id == "nope"


BAD_IDS = ["../x", "", "a" * 129, "a/b", "x y", "é", "abc\n", "a'; DROP TABLE runs; --", None, 12]


@pytest.mark.parametrize("run_id", BAD_IDS)
def test_bad_run_ids_are_refused_by_every_method_and_nothing_is_written(
    stores: Stores, run_id: Any
) -> None:
    store = stores.new()
    calls = [
        lambda: store.append(run_id, Event("message")),
        lambda: store.append_many(run_id, [Event("message")]),
        lambda: store.load(run_id),
        lambda: store.lock(run_id).__enter__(),
        lambda: store.is_locked(run_id),
        lambda: store.lock_holder(run_id),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="invalid run id"):
            call()
    assert stores.new().list_runs() == []


# -- holding a run -------------------------------------------------------------------------------


def test_a_run_is_held_by_one_taker_at_a_time(stores: Stores) -> None:
    store, other = stores.new(), stores.new()
    assert not store.is_locked(RUN) and store.lock_holder(RUN) is None
    with store.lock(RUN):
        store.append(RUN, Event("message", text="mine"))
        assert store.is_locked(RUN) and other.is_locked(RUN)
        assert other.lock_holder(RUN) == os.getpid()
        for contender in (store, other):
            with pytest.raises(RunLockedError) as refused, contender.lock(RUN):
                pass
            assert refused.value.pid == os.getpid() and refused.value.run_id == RUN
    assert not store.is_locked(RUN) and not other.is_locked(RUN)
    assert other.lock_holder(RUN) is None
    with other.lock(RUN):
        other.append(RUN, Event("message", text="then yours"))
    assert [e.text for e in stores.new().load(RUN)] == ["mine", "then yours"]


# -- with the engine -----------------------------------------------------------------------------


def reader_agent(store: Any, pages: int) -> tuple[Agentor, ScriptedModel, list[int]]:
    fetched: list[int] = []

    @function_tool
    def fetch(page: int) -> str:
        fetched.append(page)
        return f"page {page}: " + "x" * 200

    model = ScriptedModel([])
    model.replies = [
        model.calls(("fetch", {"page": 2 * i}), ("fetch", {"page": 2 * i + 1}))
        for i in range(pages // 2)
    ]
    model.replies.append(ScriptedModel.text("read them all"))
    agent = Agentor("Reader", model=model, tools=[fetch], store=store, max_turns=pages)
    return agent, model, fetched


async def test_a_run_loads_back_whole_and_a_crashed_copy_of_it_resumes(stores: Stores) -> None:
    agent, model, fetched = reader_agent(stores.new(), pages=4)
    result = await agent.arun("read 4 pages")
    assert result.status == "completed" and fetched == [0, 1, 2, 3]
    loaded = stores.new().load(result.run_id)
    assert lines(loaded) == lines(result.events)
    assert [e.messages for e in loaded if e.type == "generation"] == model.requests

    # The same run cut after the second turn's first tool result, as a kill leaves it.
    cut = [e.type for e in loaded].index("tool_result", 6) + 1
    stores.new().append_many("crashed", loaded[:cut])
    agent, model, fetched = reader_agent(stores.new(), pages=4)
    model.replies = model.replies[1:]  # turn 1 is on record; turn 2 is asked again
    resumed = await agent.aresume("crashed")
    assert resumed.status == "completed" and resumed.final_output == "read them all"
    assert fetched == [3]  # page 2's result was on record: never fetched again
    events = stores.new().load("crashed")
    assert lines(events[:cut]) == lines(loaded[:cut])
    assert [e.messages for e in events[cut:] if e.type == "generation"] == model.requests


def test_writers_taking_turns_on_one_run_keep_its_requests_right(stores: Stores) -> None:
    first, second = stores.new(), stores.new()
    requests = [[{"role": "user", "content": f"m{j}"} for j in range(n)] for n in range(1, 7)]
    for i, messages in enumerate(requests):
        (first if i % 3 else second).append(RUN, Event("generation", turn=i, messages=messages))
    assert [e.messages for e in stores.new().load(RUN)] == requests
    assert [e.messages for e in first.load(RUN)] == requests


# -- logs from upstream Agentor ------------------------------------------------------------------


@pytest.fixture
def upstream(tmp_path: Path) -> FileStore:
    """The upstream fixtures, in a FileStore of their own (a copy: resuming writes)."""
    shutil.copytree(FIXTURES, tmp_path / "upstream")
    return FileStore(tmp_path / "upstream")


def test_upstream_logs_copied_into_the_store_load_as_filestore_loads_them(
    stores: Stores, upstream: FileStore
) -> None:
    report = copy_runs(upstream, stores.new())
    assert sorted(report.copied) == upstream.list_runs() and not report.skipped
    for run_id in upstream.list_runs():
        assert lines(stores.new().load(run_id)) == lines(upstream.load(run_id))
    assert stores.new().list_runs() == upstream.list_runs()


def test_upstream_runs_copied_into_the_store_resume(
    stores: Stores, upstream: FileStore, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    copy_runs(upstream, stores.new())
    crashed = MANIFEST["crash_after_tool_result"]["run_id"]
    result = weather_agent(store=stores.new()).resume(crashed)
    assert result.status == "completed"
    assert result.final_output == "The weather in Vienna is sunny and 22C."
    assert weather_agent.executed == [] and fake_openai.calls == 1  # the result was on record
    half = MANIFEST["half_finished_crash"]["run_id"]
    result = weather_agent(store=stores.new()).resume(half)
    assert result.status == "completed" and weather_agent.executed == ["Prague"]
    done = MANIFEST["completed"]["run_id"]
    before, calls = lines(stores.new().load(done)), fake_openai.calls
    assert weather_agent(store=stores.new()).resume(done).status == "completed"
    assert lines(stores.new().load(done)) == before and fake_openai.calls == calls
