"""`run(input, run_id=...)`: the caller names the run, so a new worker can pick it up by that name.

A named run that is not in the store starts; one that is continues as `resume` would, if it
was started with the same input; a different input is refused and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentor import RunLockedError
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from tests.conftest import (
    CHILD_AGENT,
    FULL_RUN,
    Children,
    WeatherAgents,
    counted,
    crash_after_tool_result,
    log_types,
    wait_for,
    weather_text,
)
from tests.openai_server import FakeOpenAI


def test_a_named_run_is_written_under_its_name(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    result = weather_agent(store=store).run("What is the weather in Oslo?", run_id="job-42")

    assert (result.run_id, result.status) == ("job-42", "completed")
    assert result.final_output == weather_text("Oslo")
    assert store.list_runs() == ["job-42"]
    assert log_types(tmp_path / "job-42.jsonl") == FULL_RUN
    assert store.load("job-42")[0].run_id == "job-42"


def test_the_same_call_again_returns_the_finished_run_without_a_model_call(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    first = weather_agent(store=store).run("What is the weather in Oslo?", run_id="job-1")
    before = store.path("job-1").read_bytes()

    again = weather_agent(store=FileStore(tmp_path)).run(
        "What is the weather in Oslo?", run_id="job-1"
    )

    assert (again.run_id, again.status, again.final_output) == (
        "job-1",
        "completed",
        first.final_output,
    )
    assert fake_openai.calls == 2 and weather_agent.executed == ["Oslo"]
    assert store.path("job-1").read_bytes() == before


def test_a_different_input_under_a_used_name_is_refused_and_nothing_is_written(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    weather_agent(store=store).run("What is the weather in Oslo?", run_id="job-1")
    before = store.path("job-1").read_bytes()

    with pytest.raises(ValueError, match="job-1 exists and was started with a different input"):
        weather_agent(store=store).run("What is the weather in Rome?", run_id="job-1")

    assert store.path("job-1").read_bytes() == before
    assert fake_openai.calls == 2 and weather_agent.executed == ["Oslo"]
    assert not store.is_locked("job-1")


async def test_a_named_run_cut_short_is_continued_by_the_same_call(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    first = await weather_agent(store=store).arun("What is the weather in Oslo?", run_id="j")
    path = store.path(first.run_id)
    crash_after_tool_result(path)

    result = await weather_agent(store=store).arun("What is the weather in Oslo?", run_id="j")

    assert (result.status, result.final_output) == ("completed", weather_text("Oslo"))
    assert weather_agent.executed == ["Oslo"], "a recorded result was run again"
    assert fake_openai.calls == 3
    assert log_types(path) == [*FULL_RUN[:4], "run_start", *FULL_RUN[4:]]


def test_an_empty_log_under_the_name_is_a_run_that_never_started(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    # Killed between taking the run's lock (which creates the file) and writing run_start.
    (tmp_path / "j.jsonl").touch(mode=0o600)
    result = weather_agent(store=FileStore(tmp_path)).run(
        "What is the weather in Oslo?", run_id="j"
    )
    assert result.status == "completed" and log_types(tmp_path / "j.jsonl") == FULL_RUN


@pytest.mark.parametrize("bad", ["", "../etc", "a/b", "x" * 300, ".hidden"])
def test_bad_names_and_no_store_are_refused_before_any_request(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents, bad: str
) -> None:
    with pytest.raises(ValueError):
        weather_agent(store=FileStore(tmp_path)).run("Weather in Oslo?", run_id=bad)
    with pytest.raises(ValueError, match="run_id= needs a store"):
        weather_agent().run("Weather in Oslo?", run_id="fine")
    assert fake_openai.calls == 0 and list(tmp_path.iterdir()) == []


def test_memory_store_named_runs(fake_openai: FakeOpenAI, weather_agent: WeatherAgents) -> None:
    store = MemoryStore()
    agent = weather_agent(store=store)
    first = agent.run("What is the weather in Oslo?", run_id="m1")
    again = agent.run("What is the weather in Oslo?", run_id="m1")
    assert first.run_id == again.run_id == "m1" and again.final_output == first.final_output
    assert fake_openai.calls == 2 and store.list_runs() == ["m1"]


async def test_stream_chat_takes_a_name(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    agent = weather_agent(store=FileStore(tmp_path))
    events = [e async for e in agent.stream_chat("What is the weather in Oslo?", run_id="s1")]
    assert events[0].type == "run_start" and events[0].run_id == "s1"
    assert log_types(tmp_path / "s1.jsonl") == FULL_RUN


def test_a_worker_killed_mid_run_is_replaced_by_one_making_the_same_call(
    children: Children, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    """The job-queue pattern: the id is the job's, known before the first worker starts."""
    code = CHILD_AGENT + (
        "\nr = agent.run('What is the weather in London?', run_id='job-7')"
        "\nprint('status:', r.status)"
        "\nprint('final_output:', r.final_output)\n"
    )
    path = children.runs_dir / "job-7.jsonl"
    proc = children.spawn(code, BLOCK_AFTER="tool_result")
    wait_for(lambda: path.exists() and "tool_result" in log_types(path), what="tool_result")
    # While the first worker holds the job, a second one is refused, naming it.
    with pytest.raises(RunLockedError) as refused:
        weather_agent(store=FileStore(children.runs_dir)).run(
            "What is the weather in London?", run_id="job-7"
        )
    assert refused.value.pid == proc.pid
    children.kill(proc)
    assert log_types(path) == FULL_RUN[:4]

    out = children.run(code).stdout  # the replacement worker: same code, same call
    assert out.splitlines() == ["status: completed", f"final_output: {weather_text('London')}"]
    assert counted(children.count_file) == ["London"], "the tool ran a second time"
    assert fake_openai.calls == 2
    assert log_types(path) == [*FULL_RUN[:4], "run_start", *FULL_RUN[4:]]
