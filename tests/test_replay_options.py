"""`Agentor.replay`'s options, over HTTP (the real openai client, the tests' local server):
`novel="stop"` ends a replay `diverged` at its first call with no recorded answer (nothing runs,
and a resume asks nothing); `match="fifo"` serves a tool's recorded results in recorded order
whatever the arguments, the drift recorded and shown; `match="strict"` serves repeats in
recorded order; `instructions` replace the system message; `model_settings` reach the request
body; `experiment` names the experiment on the fork event and in `agentor show`; a replay
killed mid-way (SIGKILL) resumes matching and stopping as it began."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, function_tool
from agentor.engine.events import RUN_END, TOOL_RESULT, Event
from agentor.engine.fork_mark import last_fork
from agentor.engine.statuses import COMPLETED, DIVERGED
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.telemetry.spans import spans_of
from tests.conftest import INSTRUCTIONS, WeatherAgents, weather_text
from tests.openai_server import FakeOpenAI
from tests.test_agentor_command import ENV, SCRIPT, agentor
from tests.test_agentor_fork_command import AGENTS

PROMPT = "What is the weather in Oslo and Rome?"
Call = tuple[str, dict[str, Any]]


def weather(city: str) -> Call:
    return ("get_weather", {"city": city})


def planned(*turns: list[Call]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A model that asks for `turns[k]` at its turn k (counted by the assistant messages of the
    request), then answers with every tool message it was sent, joined by " | "."""

    def script(request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        k = sum(1 for m in messages if m["role"] == "assistant")
        if k < len(turns):
            return {"calls": [[name, args] for name, args in turns[k]]}
        return {"text": " | ".join(m["content"] for m in messages if m["role"] == "tool")}

    return script


class Replays:
    """A weather agent on the local server, writing to a FileStore; `executed` lists the cities
    get_weather really ran for."""

    def __init__(self, srv: FakeOpenAI, tmp_path: Path, **agent_options: Any) -> None:
        self.srv = srv
        self.runs = tmp_path / "runs"
        self.store = FileStore(self.runs)
        self.agents = WeatherAgents(srv)
        self.agent = self.agents(store=self.store, **agent_options)

    @property
    def executed(self) -> list[str]:
        return self.agents.executed

    def record(self, *turns: list[Call], agent: Agentor | None = None) -> str:
        self.srv.script = planned(*turns)
        return (agent or self.agent).run(PROMPT).run_id

    def replay(self, run_id: str, *turns: list[Call], **options: Any) -> tuple[Any, list[Any]]:
        """The replay's result and the requests it made."""
        self.srv.script = planned(*turns)
        before = len(self.srv.requests)
        result = self.agent.replay(run_id, **options)
        return result, self.srv.requests[before:]

    def results(self, run_id: str) -> list[Event]:
        return [e for e in self.store.load(run_id) if e.type == TOOL_RESULT]

    def show(self, run_id: str, *flags: str) -> str:
        proc = agentor("show", run_id, "--store", str(self.runs), *flags)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout


@pytest.fixture
def replays(fake_openai: FakeOpenAI, tmp_path: Path) -> Replays:
    return Replays(fake_openai, tmp_path)


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_novel_stop_ends_the_replay_diverged_at_the_first_unrecorded_call(
    replays: Replays,
) -> None:
    parent = replays.record([weather("Oslo"), weather("Rome")])
    assert replays.executed == ["Oslo", "Rome"]
    result, asked = replays.replay(
        parent, [weather("Rome"), weather("Paris"), weather("Lima")], novel="stop", fork_id="r1"
    )

    assert result.status == DIVERGED
    assert replays.executed == ["Oslo", "Rome"], "nothing ran"
    assert len(asked) == 1, "the model was asked once: the replay stopped at its first turn"
    events = replays.store.load("r1")
    end = events[-1]
    assert (end.type, end.status, end.name, end.args) == (
        RUN_END,
        DIVERGED,
        "get_weather",
        {"city": "Paris"},
    )
    calls = [e for e in events if e.type == "tool_call"]
    assert [c.args["city"] for c in calls] == ["Rome", "Paris", "Lima"], "asked, not answered"
    assert end.call_id == calls[1].call_id
    assert (
        end.error
        == result.error
        == (
            f'get_weather {{"city": "Paris"}} has no recorded answer (run {parent} made no '
            "get_weather call with these arguments)"
        )
    )
    assert replays.results("r1") == [], "no call of the turn was answered"

    # Settled: a resume returns it as it is, without asking the model; nothing is written.
    before = replays.store.path("r1").read_bytes()
    again = replays.agent.resume("r1")
    assert (again.status, again.error) == (DIVERGED, result.error)
    asked_in_all = len(replays.srv.requests)  # the parent's 2, the replay's 1
    assert asked_in_all == 3 and replays.store.path("r1").read_bytes() == before
    assert replays.agent.run(PROMPT, run_id="r1").status == DIVERGED
    assert len(replays.srv.requests) == asked_in_all

    (agent_span,) = [
        s
        for s in spans_of("r1", load_lines(replays.store, "r1"))[0]
        if s.operation == "invoke_agent"
    ]
    assert (agent_span.error, agent_span.message) == (DIVERGED, result.error)
    assert agent_span.attributes["agentor.status"] == DIVERGED

    listed = agentor("ls", "--store", str(replays.runs), "--status", "diverged", "--json")
    assert [r["run_id"] for r in json.loads(listed.stdout)] == ["r1"]
    assert json.loads(listed.stdout)[0]["error"] == result.error
    shown = replays.show("r1")
    assert "status   diverged\n" in shown and f"error    {result.error}\n" in shown
    assert "replay   match strict · novel calls stop · 0 served\n" in shown
    assert f"run_end           diverged · {result.error}" in shown


def test_fifo_serves_a_tools_results_in_recorded_order_whatever_the_arguments(
    replays: Replays,
) -> None:
    parent = replays.record([weather("Oslo"), weather("Rome")])
    # Asked in the other order, then a third time: the results go out as they were recorded.
    result, asked = replays.replay(
        parent, [weather("Rome"), weather("Oslo")], [weather("Lima")], match="fifo", fork_id="f1"
    )
    assert result.status == COMPLETED
    assert replays.executed == ["Oslo", "Rome"]
    assert tool_messages(asked[1]) == [weather_text("Oslo"), weather_text("Rome")]
    used_up = f"not in the recording: run {parent} made 2 get_weather calls, all served already"
    assert tool_messages(asked[2])[-1] == f"Error: {used_up}"
    served = sorted(
        (e.args["city"], e.result, e.error, e.extra.get("drift")) for e in replays.results("f1")
    )
    assert served == [
        ("Lima", None, used_up, None),
        ("Oslo", weather_text("Rome"), None, {"city": "Rome"}),
        ("Rome", weather_text("Oslo"), None, {"city": "Oslo"}),
    ]
    mark = last_fork(replays.store.load("f1"))
    assert mark is not None and (mark.match, mark.novel) == ("fifo", "error")

    doc = json.loads(replays.show("f1", "--json"))
    assert doc["fork"]["replay"]["match"] == "fifo"
    answers = {
        (doc["events"][t["event"]]["args"]["city"], t["served"], t["answered"], str(t["drift"]))
        for t in doc["tool_results"]
    }
    assert answers == {
        ("Rome", True, "served", "{'city': 'Oslo'}"),
        ("Oslo", True, "served", "{'city': 'Rome'}"),
        ("Lima", False, "refused", "None"),
    }
    shown = replays.show("f1")
    assert "replay   match fifo · novel calls error · 2 served (2 with other arguments) · 1 " in (
        shown
    )
    assert (
        f'get_weather · served, recorded args {{"city": "Oslo"}} → {weather_text("Oslo")}' in shown
    )

    # Strict, the same calls: each gets its own recorded result, no drift, and the third is novel.
    strict, asked = replays.replay(parent, [weather("Rome"), weather("Oslo")], [weather("Lima")])
    assert tool_messages(asked[1]) == [weather_text("Rome"), weather_text("Oslo")]
    assert all("drift" not in e.extra for e in replays.results(strict.run_id))
    assert replays.executed == ["Oslo", "Rome"]


def test_strict_serves_repeated_calls_in_recorded_order_then_the_last_again(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    readings: list[str] = []

    @function_tool
    def read_meter(meter: str) -> str:
        """A new reading each time it runs."""
        readings.append(meter)
        return f"reading {len(readings)} of {meter}"

    replays = Replays(fake_openai, tmp_path, tools=[read_meter])
    meter = ("read_meter", {"meter": "m1"})
    parent = replays.record([meter], [meter])
    assert readings == ["m1", "m1"]
    result, asked = replays.replay(parent, [meter], [meter, meter], novel="stop")
    assert result.status == COMPLETED and readings == ["m1", "m1"], "nothing ran"
    assert tool_messages(asked[1]) == ["reading 1 of m1"]
    assert tool_messages(asked[2])[1:] == ["reading 2 of m1", "reading 2 of m1"]
    assert {e.replayed_from for e in replays.results(result.run_id)} == {
        e.call_id for e in replays.results(parent)
    }


def test_instructions_replace_the_system_message_or_come_first(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    replays = Replays(fake_openai, tmp_path)
    parent = replays.record([weather("Oslo")])
    result, asked = replays.replay(parent, [weather("Oslo")], instructions="Answer in French.")
    assert result.status == COMPLETED
    assert asked[0]["messages"] == [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": PROMPT},
    ]
    assert replays.srv.requests[0]["messages"][0] == {"role": "system", "content": INSTRUCTIONS}

    bare = replays.agents(store=replays.store, instructions=None)
    plain = replays.record([weather("Oslo")], agent=bare)
    assert replays.srv.requests[-2]["messages"] == [{"role": "user", "content": PROMPT}]
    _, asked = replays.replay(plain, [weather("Oslo")], instructions="Be brief.")
    assert asked[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": PROMPT},
    ]
    with pytest.raises(TypeError, match="instructions= is a string, not int"):
        replays.agent.replay(parent, instructions=3)


def test_model_settings_reach_the_request_body_for_the_replay_alone(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    replays = Replays(fake_openai, tmp_path, temperature=0.7, seed=3)
    parent = replays.record([weather("Oslo")])
    assert (replays.srv.requests[0]["temperature"], replays.srv.requests[0]["seed"]) == (0.7, 3)
    settings = {"temperature": 0.0, "max_tokens": 64, "seed": None}
    result, asked = replays.replay(parent, [weather("Oslo")], model_settings=settings)
    assert result.status == COMPLETED
    for body in asked:
        assert (body["temperature"], body["max_tokens"], "seed" in body) == (0.0, 64, False)
    start = next(e for e in result.events if e.type == "run_start" and e.run_id == result.run_id)
    assert start.settings == {"temperature": 0.0, "max_tokens": 64}
    replays.record([weather("Oslo")])  # the agent itself is as it was
    assert (replays.srv.requests[-1]["temperature"], replays.srv.requests[-1]["seed"]) == (0.7, 3)

    files = sorted(p.name for p in replays.runs.iterdir())
    asked_before = len(replays.srv.requests)
    for bad, said in (
        ({"temprature": 0}, "'temprature' is not a model setting (they are temperature, "),
        ({"max_tokens": "many"}, "the model setting max_tokens cannot be 'many': it takes a "),
    ):
        with pytest.raises(ValueError) as refused:
            replays.agent.replay(parent, model_settings=bad)
        assert str(refused.value).startswith(said) and "\n" not in str(refused.value)
    assert sorted(p.name for p in replays.runs.iterdir()) == files, "nothing written"
    assert len(replays.srv.requests) == asked_before


def test_the_experiment_of_a_replay_is_on_its_fork_event_and_in_show(replays: Replays) -> None:
    parent = replays.record([weather("Oslo")])
    result, asked = replays.replay(parent, [weather("Oslo")], experiment="exp-7", fork_id="c1")
    assert result.status == COMPLETED
    assert asked[0]["model"] == "gpt-4o-mini", "no model given: the agent's own"
    mark = last_fork(replays.store.load("c1"))
    assert mark is not None and mark.experiment == "exp-7"
    doc = json.loads(replays.show("c1", "--json"))
    assert doc["fork"] == {
        "forked_from": parent,
        "at": 1,
        "replay": {
            "model": "gpt-4o-mini",
            "match": "strict",
            "novel": "error",
            "experiment": "exp-7",
        },
    }
    assert [(t["answered"], t["served"]) for t in doc["tool_results"]] == [("served", True)]
    shown = replays.show("c1")
    assert f"fork     of {parent} at line 1: replay with gpt-4o-mini · experiment exp-7\n" in shown
    plain = json.loads(replays.show(parent, "--json"))
    assert plain["fork"] is None
    assert [(t["answered"], t["served"]) for t in plain["tool_results"]] == [("executed", False)]
    for bad in ("", "  ", 7):
        with pytest.raises(ValueError, match="experiment= is an experiment id"):
            replays.agent.replay(parent, experiment=bad)
    with pytest.raises(ValueError, match="match= is one of 'strict', 'fifo', not 'loose'"):
        replays.agent.replay(parent, match="loose")


def turn_two(request: dict[str, Any]) -> bool:
    """A request of a run's second turn (it carries a tool result)."""
    return any(m["role"] == "tool" for m in request["messages"])


def killed_while_asked(
    replays: Replays, argv: list[str], env: dict[str, str], held: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Run `agentor *argv` in a child process and SIGKILL it while the server holds its first
    request that `held` picks (answered as `planned` would, once the child is gone); the
    requests it made."""
    asked, release = threading.Event(), threading.Event()
    script = replays.srv.script
    assert script is not None

    def holding(request: dict[str, Any]) -> dict[str, Any]:
        if held(request) and not asked.is_set():
            asked.set()
            return {**script(request), "wait": release}
        return script(request)

    replays.srv.script = holding
    before = len(replays.srv.requests)
    child = subprocess.Popen(
        [str(SCRIPT), *argv],
        env={**ENV, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert asked.wait(60), f"agentor {argv[0]} never made the request it is killed in"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        release.set()
    return replays.srv.requests[before:]


def test_a_replay_killed_mid_way_resumes_matching_and_stopping_as_it_began(
    replays: Replays, tmp_path: Path
) -> None:
    spec = tmp_path / "agents.py"
    spec.write_text(AGENTS)
    tool_log = tmp_path / "tools.log"
    env = {"OPENAI_BASE_URL": replays.srv.url, "OPENAI_API_KEY": "sk-test"}
    env["TOOL_LOG"] = str(tool_log)
    parent = replays.record([weather("Oslo")], [weather("Rome")])

    replays.srv.script = planned([weather("Oslo")])
    asked_before = len(replays.srv.requests)
    argv = ["replay", parent, "--match", "fifo", "--novel", "stop", "--fork-id", "r1"]
    argv += ["--store", str(replays.runs), "--agent", f"{spec}:weather"]
    killed_while_asked(replays, argv, env, turn_two)
    killed = replays.store.load("r1")
    assert [e.type for e in killed][-1] == TOOL_RESULT and killed[-1].replayed_from is not None
    assert replays.results("r1")[0].args == {"city": "Oslo"}

    # Resumed in another process: Lima gets Rome's recorded result (fifo: its arguments
    # drifted), and Paris, with no recorded result left, ends the replay (stop).
    replays.srv.script = planned([weather("Oslo")], [weather("Lima")], [weather("Paris")])
    proc = agentor(
        "resume", "r1", "--store", str(replays.runs), "--agent", f"{spec}:weather", env=env
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("agentor resume: run r1 ended diverged: get_weather {")
    lima = replays.results("r1")[-1]
    assert (lima.args, lima.result, lima.extra["drift"]) == (
        {"city": "Lima"},
        weather_text("Rome"),
        {"city": "Rome"},
    )
    end = replays.store.load("r1")[-1]
    assert (end.status, end.args) == (DIVERGED, {"city": "Paris"})
    assert not tool_log.exists(), "no tool ran in either process"
    assert len(replays.srv.requests) - asked_before == 2 + 2, "2 before the kill, 2 after"


HOT = AGENTS + textwrap.dedent(
    """
    hot = Agentor(
        "Weather Agent", model="gpt-4o-mini", instructions=INSTRUCTIONS, tools=[get_weather],
        max_retries=0, temperature=0.9, seed=5,
    )
    """
)


def test_a_replay_killed_mid_way_resumes_with_the_settings_it_was_given(
    replays: Replays, tmp_path: Path
) -> None:
    spec = tmp_path / "agents.py"
    spec.write_text(HOT)
    env = {"OPENAI_BASE_URL": replays.srv.url, "OPENAI_API_KEY": "sk-test"}
    env["TOOL_LOG"] = str(tmp_path / "tools.log")
    parent = replays.record([weather("Oslo")])

    replays.srv.script = planned([weather("Oslo")])
    argv = ["replay", parent, "--set", "temperature=0.25", "--fork-id", "r1"]
    argv += ["--store", str(replays.runs), "--agent", f"{spec}:weather"]
    before_kill = killed_while_asked(replays, argv, env, turn_two)
    assert [b["temperature"] for b in before_kill] == [0.25, 0.25]
    mark = last_fork(replays.store.load("r1"))
    assert mark is not None and mark.replay is not None
    assert mark.replay["model_settings"] == {"temperature": 0.25}
    assert replays.store.load("r1")[-1].type == TOOL_RESULT  # killed in its second turn

    # Resumed in a new process by an agent asking with other settings: the replay's own
    # temperature is asked with again, over that agent's settings.
    replays.srv.script = planned([weather("Oslo")])
    resumed_from = len(replays.srv.requests)
    proc = agentor("resume", "r1", "--store", str(replays.runs), "--agent", f"{spec}:hot", env=env)
    assert proc.returncode == 0, proc.stderr
    (body,) = replays.srv.requests[resumed_from:]
    assert (body["temperature"], body["seed"]) == (0.25, 5)
    end = replays.store.load("r1")[-1]
    assert (end.type, end.status) == (RUN_END, COMPLETED)
    starts = [e for e in replays.store.load("r1") if e.type == "run_start"]
    assert starts[-1].settings == {"temperature": 0.25, "seed": 5}


ELSEWHERE = AGENTS + textwrap.dedent(
    """
    elsewhere = Agentor(
        "Weather Agent", model="gpt-4.1", instructions=INSTRUCTIONS, tools=[get_weather],
        max_retries=0,
    )
    """
)


def resumed(replays: Replays, run_id: str, agent: str, env: dict[str, str]) -> list[Any]:
    """`agentor resume run_id --agent agent` in a new process, which completes it: the
    requests it made."""
    before = len(replays.srv.requests)
    proc = agentor("resume", run_id, "--store", str(replays.runs), "--agent", agent, env=env)
    assert proc.returncode == 0, proc.stderr
    end = replays.store.load(run_id)[-1]
    assert (end.type, end.status) == (RUN_END, COMPLETED)
    return replays.srv.requests[before:]


def test_a_replay_killed_mid_way_resumes_with_the_model_it_was_replayed_with(
    replays: Replays, tmp_path: Path
) -> None:
    spec = tmp_path / "agents.py"
    spec.write_text(ELSEWHERE)
    env = {"OPENAI_BASE_URL": replays.srv.url, "OPENAI_API_KEY": "sk-test"}
    env["TOOL_LOG"] = str(tmp_path / "tools.log")
    parent = replays.record([weather("Oslo")], [weather("Rome")])

    replays.srv.script = planned([weather("Oslo")], [weather("Rome")])
    argv = ["replay", parent, "--model", "replay-model", "--fork-id", "r1"]
    argv += ["--store", str(replays.runs), "--agent", f"{spec}:weather"]
    asked = killed_while_asked(replays, argv, env, turn_two)
    assert [b["model"] for b in asked] == ["replay-model", "replay-model"]
    assert replays.store.load("r1")[-1].type == TOOL_RESULT  # killed in its second turn
    # A log written before the replay's fork event named its model (no `model` in its edit):
    # the model of its first run_start says it.
    old = [json.loads(line) for line in replays.store.path("r1").read_text().splitlines()]
    for line in old:
        if line["type"] == "fork":
            del line["edit"]["model"]
    replays.store.path("old").write_text("".join(json.dumps(line) + "\n" for line in old))

    # Resumed in a new process by an agent of another model (gpt-4.1): every request after the
    # resume names the replay's model, on that agent's endpoint, and its run_start says so.
    for run_id in ("r1", "old"):
        again = resumed(replays, run_id, f"{spec}:elsewhere", env)
        assert [b["model"] for b in again] == ["replay-model"] * 2, run_id
        starts = [e for e in replays.store.load(run_id) if e.type == "run_start"]
        assert [s.model for s in starts] == ["replay-model", "replay-model"]
        assert replays.results(run_id)[-1].replayed_from is not None, "Rome: served"
    assert not (tmp_path / "tools.log").exists(), "no tool ran in any process"

    # A plain fork at a generation, on another model (a one-generation edit), killed while it
    # asks: its resume asks the resuming agent's model, as before.
    lines = load_lines(replays.store, parent)
    first = next(i for i, e in enumerate(lines, 1) if getattr(e, "type", None) == "generation")
    replays.srv.script = planned([weather("Oslo")], [weather("Rome")])
    argv = ["fork", parent, "--at", str(first), "--model", "fork-model", "--fork-id", "f1"]
    argv += ["--store", str(replays.runs), "--agent", f"{spec}:weather"]
    asked = killed_while_asked(replays, argv, env, lambda r: True)
    assert [b["model"] for b in asked] == ["fork-model"]
    again = resumed(replays, "f1", f"{spec}:elsewhere", env)
    assert [b["model"] for b in again] == ["gpt-4.1"] * 3
    starts = [e for e in replays.store.load("f1") if e.type == "run_start"]
    assert [s.model for s in starts][-2:] == ["fork-model", "gpt-4.1"]
