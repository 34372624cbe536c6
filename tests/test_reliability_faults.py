"""Faults: a store that fails mid-run (ENOSPC, EACCES, a half-written line), and hostile
values from tools and the model that a log must still hold."""

from __future__ import annotations

import errno
import logging
import os

import pytest

from agentor import Agentor, function_tool
from agentor.engine.events import GENERATION, Event
from agentor.engine.statuses import COMPLETED
from agentor.engine.store import file as store_module
from agentor.engine.store.file import FileStore
from tests import crashkit
from tests.crashkit import ANSWERS, PROMPTS
from tests.openai_server import FakeOpenAI

# Durable writes (append_many calls) of each scenario's run.
BATCHES = {"parallel": 7, "three_turn": 8}


@pytest.fixture(scope="module")
def srv():
    with FakeOpenAI(crashkit.script) as server:
        yield server


class FailingStore(FileStore):
    """A FileStore whose `fail_on`-th write (or every write from it on) raises `OSError(code)`."""

    def __init__(self, directory, code: int, fail_on: int, persistent: bool = False) -> None:
        super().__init__(directory)
        self.code, self.fail_on, self.persistent = code, fail_on, persistent
        self.calls = 0
        self.lost: list[Event] = []

    def append_many(self, run_id, events):
        events = list(events)
        self.calls += 1
        if self.calls == self.fail_on or (self.persistent and self.calls > self.fail_on):
            self.lost.extend(events)
            raise OSError(self.code, os.strerror(self.code))
        super().append_many(run_id, events)


def _saved_matches_memory(directory, result, lost: list[Event]) -> None:
    """The log holds exactly the events that were not lost, generations with full messages."""
    events, bad = FileStore(directory).load_with_errors(result.run_id)
    assert bad == []
    lost_ids = {id(e) for e in lost}
    expected = [e for e in result.events if id(e) not in lost_ids]
    assert [e.to_dict() for e in events] == [e.to_dict() for e in expected]
    for e in events:
        if e.type == GENERATION:
            assert e.messages, "a generation's request was rebuilt in full"


CASES = [
    (scenario, code, n)
    for scenario in BATCHES
    for code in (errno.ENOSPC, errno.EACCES)
    for n in range(1, BATCHES[scenario] + 1)
]


@pytest.mark.parametrize(
    ("scenario", "code", "n"),
    CASES,
    ids=[f"{s}-{errno.errorcode[c]}-write{n}" for s, c, n in CASES],
)
async def test_one_failed_write_mid_run_the_run_completes_and_says_so(
    tmp_path, srv, caplog, scenario, code, n
):
    store = FailingStore(tmp_path, code, n)
    agent = crashkit.build_agent(scenario, store, srv.url, str(tmp_path / "tools.log"))
    with caplog.at_level(logging.ERROR, logger="agentor"):
        result = await agent.arun(PROMPTS[scenario])
    assert (result.status, result.final_output) == (COMPLETED, ANSWERS[scenario])
    assert result.save_failures == 1
    assert store.calls == BATCHES[scenario]
    errors = [r for r in caplog.records if r.name == "agentor" and r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert result.run_id in errors[0].getMessage()
    assert os.strerror(code) in errors[0].getMessage()
    _saved_matches_memory(tmp_path, result, store.lost)


async def test_a_store_that_keeps_failing_still_lets_the_run_finish(tmp_path, srv, caplog):
    store = FailingStore(tmp_path, errno.EACCES, 2, persistent=True)
    agent = crashkit.build_agent("three_turn", store, srv.url)
    with caplog.at_level(logging.ERROR, logger="agentor"):
        result = await agent.arun(crashkit.STEPS_PROMPT)
    assert (result.status, result.final_output) == (COMPLETED, crashkit.STEPS_ANSWER)
    assert result.save_failures == BATCHES["three_turn"] - 1
    assert len([r for r in caplog.records if r.name == "agentor"]) == result.save_failures
    assert [e.type for e in FileStore(tmp_path).load(result.run_id)] == ["run_start"]


async def test_a_clean_run_and_a_resume_report_no_save_failures(tmp_path, srv):
    agent = crashkit.build_agent("parallel", FileStore(tmp_path), srv.url)
    result = await agent.arun(crashkit.WEATHER_PROMPT)
    assert result.save_failures == 0
    assert (await agent.aresume(result.run_id)).save_failures == 0


@pytest.mark.parametrize("n", range(1, BATCHES["three_turn"] + 1))
async def test_a_half_written_line_then_enospc_is_repaired_by_the_next_write(
    tmp_path, srv, monkeypatch, n
):
    real_write_all = store_module.write_all
    calls = {"n": 0}

    def write_half_then_fail(fd, data):
        calls["n"] += 1
        if calls["n"] == n:
            real_write_all(fd, data[: len(data) // 2 + 1])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_write_all(fd, data)

    monkeypatch.setattr(store_module, "write_all", write_half_then_fail)
    store = FileStore(tmp_path)
    agent = crashkit.build_agent("three_turn", store, srv.url)
    result = await agent.arun(crashkit.STEPS_PROMPT)
    assert (result.status, result.save_failures) == (COMPLETED, 1)

    events, bad = FileStore(tmp_path).load_with_errors(result.run_id)
    last_write = n == BATCHES["three_turn"]
    assert len(bad) == (1 if last_write else 0), "only a torn line nobody wrote after remains"
    # Every event except those of the failed write is in the log, generations in full.
    lost = _batch(result.events, n)
    expected = [e for e in result.events if all(e is not x for x in lost)]
    assert [e.to_dict() for e in events] == [e.to_dict() for e in expected]
    if not last_write:
        torn = store.path(result.run_id).with_name(f"{result.run_id}.jsonl.torn")
        assert torn.exists()


def _batch(events: list[Event], n: int) -> list[Event]:
    """The events of the n-th durable write of a three-turn run (a generation and its
    tool_call are written together)."""
    batches: list[list[Event]] = []
    for e in events:
        if e.type == "tool_call" and batches and batches[-1][-1].type == GENERATION:
            batches[-1].append(e)
        else:
            batches.append([e])
    return batches[n - 1]


# -- hostile values ------------------------------------------------------------------------------


async def test_a_tool_result_that_is_not_valid_utf8_is_saved_and_read_back(tmp_path):
    """Lone surrogates are what `os.listdir` gives for non-UTF-8 file names."""
    name = "report-\udcff\udcfe.txt"

    @function_tool
    def list_files() -> list[str]:
        """List files."""
        return [name, "ok.txt"]

    def reply(request):
        if request["messages"][-1]["role"] == "tool":
            return {"text": "done"}
        return {"calls": [["list_files", {}]]}

    with FakeOpenAI(reply) as srv:
        agent = Agentor(
            "a",
            tools=[list_files],
            store=FileStore(tmp_path),
            base_url=srv.url,
            api_key="sk-test",
            max_retries=0,
        )
        result = await agent.arun("list them")
    assert result.status == COMPLETED
    assert result.save_failures == 0
    data = FileStore(tmp_path).path(result.run_id).read_bytes()
    data.decode("utf-8")  # the file itself stays valid UTF-8
    events = FileStore(tmp_path).load(result.run_id)
    [tool_result] = [e for e in events if e.type == "tool_result"]
    assert tool_result.result == [name, "ok.txt"]


async def test_hostile_tool_call_arguments_fail_the_call_not_the_run(tmp_path, srv):
    nested = "[" * 100_000 + "]" * 100_000

    def reply(request):
        # Both calls fail: get_weather is withdrawn and the model told so (a user message).
        if any(m["role"] == "tool" for m in request["messages"]):
            return {"text": "gave up"}
        return {"calls": [["get_weather", nested], ["get_weather", "{not json"]]}

    with FakeOpenAI(reply) as hostile:
        agent = crashkit.build_agent("parallel", FileStore(tmp_path), hostile.url)
        result = await agent.arun("x")
        assert (result.status, result.final_output) == (COMPLETED, "gave up")
        results = [e for e in result.events if e.type == "tool_result"]
        assert len(results) == 2 and all(e.error for e in results)
        # The log holds it and a resume of the finished run reads it back.
        again = await agent.aresume(result.run_id)
    assert again.status == COMPLETED
    assert FileStore(tmp_path).load_with_errors(result.run_id)[1] == []
