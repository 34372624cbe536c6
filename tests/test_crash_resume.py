"""Real crashes: a child interpreter runs the weather agent and is SIGKILLed; the run is resumed
from nothing but its id, in a new interpreter or in this one."""

from __future__ import annotations

import textwrap

import pytest

from agentor import RunLockedError
from agentor.engine.store.file import FileStore
from tests.conftest import (
    CHILD_AGENT,
    FULL_RUN,
    Children,
    WeatherAgents,
    counted,
    log_lines,
    log_types,
    only_run,
    wait_for,
    weather_text,
)
from tests.openai_server import FakeOpenAI


def run_code(prompt: str) -> str:
    return CHILD_AGENT + f"\nr = agent.run({prompt!r})\n"


RESUME = CHILD_AGENT + (
    "\nr = agent.resume(os.environ['RUN_ID'])"
    "\nprint('status:', r.status)"
    "\nprint('final_output:', r.final_output)\n"
)


def test_worked_example_kill_after_tool_result_resume_in_new_interpreter(
    children: Children, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    # The child's store stops for good right after the tool result is fsynced: the kill lands
    # after the tool answered and before the agent wrote its reply, as on the seed page.
    proc = children.spawn(run_code("What is the weather in London?"), BLOCK_AFTER="tool_result")
    run_id = only_run(children.runs_dir)
    path = children.runs_dir / f"{run_id}.jsonl"
    wait_for(lambda: "tool_result" in log_types(path), what="tool_result on disk")
    children.kill(proc)

    assert log_types(path) == ["run_start", "generation", "tool_call", "tool_result"]
    assert counted(children.count_file) == ["London"]
    assert fake_openai.calls == 1

    out = children.run(RESUME, RUN_ID=run_id).stdout
    reply = weather_text("London")
    assert out.splitlines() == ["status: completed", f"final_output: {reply}"]
    assert counted(children.count_file) == ["London"], "the tool ran a second time"
    assert fake_openai.calls == 2, "exactly one more model request, for the reply"
    last = fake_openai.requests[-1]["messages"]
    assert last[-1] == {
        "role": "tool",
        "tool_call_id": log_lines(path)[2]["call_id"],
        "content": reply,
    }
    assert log_types(path)[4:] == ["run_start", "generation", "message", "run_end"]

    # Resuming the finished run again (here, in a third process) changes nothing.
    before = path.read_bytes()
    result = weather_agent(store=FileStore(children.runs_dir)).resume(run_id)
    assert (result.status, result.final_output) == ("completed", reply)
    assert fake_openai.calls == 2
    assert weather_agent.executed == []
    assert path.read_bytes() == before


def test_kill_inside_a_tool_rewinds_and_completes(
    children: Children, fake_openai: FakeOpenAI
) -> None:
    proc = children.spawn(run_code("What is the weather in Paris?"), BLOCK_CITY="Paris")
    wait_for(lambda: counted(children.count_file) == ["Paris"], what="the tool to start")
    run_id = only_run(children.runs_dir)
    path = children.runs_dir / f"{run_id}.jsonl"
    children.kill(proc)
    assert log_types(path) == ["run_start", "generation", "tool_call"]

    out = children.run(RESUME, RUN_ID=run_id).stdout
    assert "status: completed" in out
    # Rewound: the model was asked again with exactly the request that produced the call.
    assert fake_openai.calls == 3
    assert fake_openai.requests[1]["messages"] == fake_openai.requests[0]["messages"]
    assert counted(children.count_file) == ["Paris", "Paris"]
    assert log_types(path)[3:] == FULL_RUN


def test_a_recorded_result_is_never_thrown_away(
    children: Children, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    # Two parallel calls; Oslo answers, Rome hangs: the crash leaves 1 of 2 results.
    proc = children.spawn(run_code("What is the weather in Oslo and Rome?"), BLOCK_CITY="Rome")
    run_id = only_run(children.runs_dir)
    path = children.runs_dir / f"{run_id}.jsonl"
    wait_for(
        lambda: "tool_result" in log_types(path) and "Rome" in counted(children.count_file),
        what="Oslo's result and Rome's start",
    )
    children.kill(proc)
    first = log_lines(path)
    oslo = next(d for d in first if d["type"] == "tool_result")
    assert oslo["args"] == {"city": "Oslo"}

    result = weather_agent(store=FileStore(children.runs_dir)).resume(run_id)

    assert result.status == "completed"
    # The model decided again (same request) and re-issued both calls with new ids...
    assert fake_openai.requests[1]["messages"] == fake_openai.requests[0]["messages"]
    new = log_lines(path)[len(first) :]
    results = {d["args"]["city"]: d for d in new if d["type"] == "tool_result"}
    assert results["Oslo"]["call_id"] != oslo["call_id"]
    # ...and Oslo was answered from the record, Rome really ran.
    assert results["Oslo"]["replayed_from"] == oslo["call_id"]
    assert results["Oslo"]["result"] == weather_text("Oslo")
    assert "replayed_from" not in results["Rome"]
    assert weather_agent.executed == ["Rome"]
    assert sorted(counted(children.count_file)) == ["Oslo", "Rome"]
    assert result.final_output == f"{weather_text('Oslo')} {weather_text('Rome')}"


# A child whose get_weather answers its first call and hangs in its second: of two equal calls
# the crash leaves exactly one result recorded.
SECOND_CALL_HANGS = textwrap.dedent(
    """
    import os, threading, time
    from agentor import Agentor, function_tool
    from agentor.engine.store.file import FileStore

    taken, ran = threading.Lock(), []

    @function_tool
    def get_weather(city: str) -> str:
        \"\"\"Get the current weather for a city.

        Args:
            city: The city to look up.
        \"\"\"
        with taken:
            ran.append(city)
            second = len(ran) > 1
            with open(os.environ["COUNT_FILE"], "a") as f:
                f.write(city + "\\n")
        if second:
            time.sleep(3600)
        return f"The weather in {city} is sunny and 22C."

    agent = Agentor(
        name="Weather Agent",
        model="gpt-4o-mini",
        instructions="You are a helpful weather assistant.",
        tools=[get_weather],
        store=FileStore(os.environ["RUNS_DIR"]),
        max_retries=0,
    )
    agent.run("What is the weather in Oslo and Oslo?")
    """
)


def test_one_recorded_result_answers_one_of_two_equal_calls_after_a_rewind(
    children: Children, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    # The model asks get_weather(Oslo) twice in one turn; one answers, the other hangs: the
    # crash leaves one result for two equal calls.
    proc = children.spawn(SECOND_CALL_HANGS)
    run_id = only_run(children.runs_dir)
    path = children.runs_dir / f"{run_id}.jsonl"
    wait_for(
        lambda: "tool_result" in log_types(path) and len(counted(children.count_file)) == 2,
        what="one result recorded and the second call running",
    )
    children.kill(proc)
    first = log_lines(path)
    [recorded] = [d for d in first if d["type"] == "tool_result"]

    result = weather_agent(store=FileStore(children.runs_dir)).resume(run_id)

    assert result.status == "completed"
    # The model asked the same two calls again: the record answers one, the other runs.
    new = [d for d in log_lines(path)[len(first) :] if d["type"] == "tool_result"]
    assert len(new) == 2
    assert [d.get("replayed_from") for d in new].count(recorded["call_id"]) == 1
    assert weather_agent.executed == ["Oslo"], "one result answered two calls"
    assert result.final_output == f"{weather_text('Oslo')} {weather_text('Oslo')}"


def test_a_second_process_is_refused_while_a_run_is_held(
    children: Children, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    proc = children.spawn(run_code("What is the weather in Madrid?"), BLOCK_CITY="Madrid")
    wait_for(lambda: counted(children.count_file) == ["Madrid"], what="the tool to start")
    run_id = only_run(children.runs_dir)
    path = children.runs_dir / f"{run_id}.jsonl"
    store = FileStore(children.runs_dir)
    agent = weather_agent(store=store)

    assert store.is_locked(run_id)
    assert store.lock_holder(run_id) == proc.pid
    before = path.read_bytes()
    with pytest.raises(RunLockedError) as refused:
        agent.resume(run_id)
    assert refused.value.pid == proc.pid
    assert str(proc.pid) in str(refused.value) and run_id in str(refused.value)
    assert path.read_bytes() == before
    assert fake_openai.calls == 1

    children.kill(proc)
    # The kernel freed the lock with the process: the run is resumable at once.
    assert not store.is_locked(run_id)
    assert store.lock_holder(run_id) is None
    result = agent.resume(run_id)
    assert result.status == "completed"
    assert result.final_output == weather_text("Madrid")
    assert weather_agent.executed == ["Madrid"]
    assert not store.is_locked(run_id)


def test_openai_env_vars_are_honoured(children: Children, fake_openai: FakeOpenAI) -> None:
    # CHILD_AGENT passes neither base_url= nor api_key=: both come from the environment.
    code = run_code("What is the weather in Lima?") + "print(r.status, r.run_id)\n"
    out = children.run(code).stdout.split()
    assert out[0] == "completed"
    assert fake_openai.calls == 2
    assert fake_openai.requests[0]["model"] == "gpt-4o-mini"
    assert log_types(children.runs_dir / f"{out[1]}.jsonl")[-1] == "run_end"
