"""`Agentor.experiment`: recorded runs replayed against another model (the real openai client
over HTTP to the tests' server), no tool executed, each pair measured and scored, the
experiment recorded in the store and gone on with, not redone, when started again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from agentor import Experiment, ExperimentError, Judge, ModelError, ScorerSpecError
from agentor.engine.events import FORK, RUN_START, TOOL_RESULT
from agentor.engine.fork_mark import last_fork
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from agentor.experiments.measures import measure
from agentor.result import RunResult
from tests.conftest import WeatherAgents
from tests.experimentkit import VAGUE, prompt_of, prompts, requests_of, script
from tests.openai_server import FakeOpenAI


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return FileStore(tmp_path / "runs")


def measured_as_stored(store: FileStore, exp: Experiment) -> None:
    """Each pair's measures are those of both runs as the store holds them (a replay's own
    events are measured as it saved them, without reading them back)."""
    for pair in exp.pairs:
        assert pair.measures == measure(store.load(pair.baseline), store.load(pair.candidate))


def baselines(agents: WeatherAgents, store: FileStore, n: int = 5) -> list[str]:
    agents.srv.script = script
    agent = agents(store=store)
    return [agent.run(p).run_id for p in prompts()[:n]]


def test_five_runs_replayed_with_another_model_run_no_tool_and_are_recorded_once(
    weather_agent: WeatherAgents, store: FileStore, fake_openai: FakeOpenAI
) -> None:
    runs = baselines(weather_agent, store)
    assert len(weather_agent.executed) == 5
    agent = weather_agent(store=store)

    exp = agent.experiment(runs, model="same-model", scorers=["same_output", "same_tools"])

    assert len(weather_agent.executed) == 5, "no tool ran: every call was served"
    assert [p.baseline for p in exp.pairs] == runs and exp.pending == []
    for pair in exp.pairs:
        assert pair.status == (COMPLETED, COMPLETED)
        assert pair.output_changed is False and pair.tools_changed is False
        assert pair.scores == {"same_output": True, "same_tools": True}
        assert pair.measures is not None
        assert (pair.measures.served, pair.measures.executed) == (1, 0)
        events = store.load(pair.candidate)
        mark = last_fork(events)
        assert mark is not None and mark.forked_from == pair.baseline
        assert (mark.replay or {}).get("experiment") == exp.id, "the candidate names it"
        assert [e.model for e in events if e.type == RUN_START] == ["same-model"]
        served = [e for e in events[mark.index :] if e.type == TOOL_RESULT]
        assert [bool(e.replayed_from) for e in served] == [True]
    asked = Counter(prompt_of(r) for r in requests_of(fake_openai, "same-model"))
    assert asked == {p: 2 for p in prompts()}, "each candidate asked its two turns once"
    s = exp.summary
    assert (s.pairs, s.completed, s.regressions, s.improvements) == (5, 5, 0, 0)
    measured_as_stored(store, exp)
    # The agent's own instructions, which every baseline was recorded with, are no change.
    assert exp.name == exp.definition.change == "model same-model"
    assert exp.definition.instructions is None

    before = fake_openai.calls
    again = agent.experiment(runs, model="same-model", scorers=["same_output", "same_tools"])
    assert again.id == exp.id and fake_openai.calls == before, "the same experiment: not redone"
    assert again.to_json() == exp.to_json()
    assert Experiment.load(store, exp.id).to_json() == exp.to_json()
    assert Experiment.ids(store) == [exp.id]
    forks = [r for r in store.list_runs() if any(e.type == FORK for e in store.load(r))]
    assert sorted(forks) == sorted(p.candidate for p in exp.pairs), "one candidate a baseline"


def test_a_worse_model_regresses_every_pair_with_paired_statistics(
    weather_agent: WeatherAgents, store: FileStore
) -> None:
    runs = baselines(weather_agent, store)
    exp = weather_agent(store=store).experiment(
        runs, model="vague-model", scorers=["same_output", "output_contains:sunny"]
    )
    assert all(p.regressed for p in exp.pairs)
    measured_as_stored(store, exp)
    stopped = weather_agent(store=store).experiment(runs, model="paris-model", novel="stop")
    assert {p.status for p in stopped.pairs} == {("completed", "diverged")}
    measured_as_stored(store, stopped)
    refused = weather_agent(store=store).experiment(runs, model="paris-model")
    assert all(p.tools_changed for p in refused.pairs)
    measured_as_stored(store, refused)
    assert all(p.scores["same_output"] is False for p in exp.pairs)
    assert all(p.scores["output_contains:sunny"] == {"score": [1.0, 0.0]} for p in exp.pairs)
    assert all(p.tools_changed for p in exp.pairs)
    s = exp.summary
    assert (s.regressions, s.improvements) == (5, 0)
    mcnemar = s.scorers["same_output"].mcnemar
    assert mcnemar is not None and (mcnemar.b, mcnemar.c) == (5, 0)
    assert mcnemar.p_value == pytest.approx(0.0625), "exact two-sided: 2 * 0.5**5"
    turns = s.deltas["turns"]
    assert turns is not None and (turns.mean, turns.low, turns.high) == (-1.0, -1.0, -1.0)
    data = exp.to_json()
    assert data["summary"]["regressions"] == 5
    assert data["pairs"][0]["status"] == [COMPLETED, COMPLETED]
    assert data["pairs"][0]["output_changed"] is True
    assert [p["baseline"] for p in data["pairs"]] == runs


def boom(baseline: RunResult, candidate: RunResult) -> bool:
    raise RuntimeError("the scorer broke")


def test_a_scorer_that_raises_has_its_error_on_the_pair_and_the_rest_goes_on(
    weather_agent: WeatherAgents, store: FileStore
) -> None:
    runs = baselines(weather_agent, store, 2)
    exp = weather_agent(store=store).experiment(
        runs, model="same-model", scorers=[boom, "same_output"]
    )
    spec = f"{__name__}:boom"
    assert [p.scores for p in exp.pairs] == [
        {spec: {"error": "RuntimeError: the scorer broke"}, "same_output": True}
    ] * 2
    assert exp.summary.scorers[spec].errors == 2
    assert exp.definition.scorers == (spec, "same_output")


def test_a_judge_is_asked_once_per_pair_its_calls_recorded_as_runs(
    weather_agent: WeatherAgents, store: FileStore, fake_openai: FakeOpenAI
) -> None:
    runs = baselines(weather_agent, store, 2)
    agent = weather_agent(store=store)
    exp = agent.experiment(runs, model="vague-model", scorers=["judge:judge-pass"])
    assert [p.scores for p in exp.pairs] == [{"judge:judge-pass": True}] * 2
    judged = requests_of(fake_openai, "judge-pass")
    assert len(judged) == 2
    assert VAGUE in judged[0]["messages"][-1]["content"]
    assert "sunny" in judged[0]["messages"][-1]["content"], "the reference answer is shown"
    judge_runs = [r for r in store.list_runs() if r.startswith("judge-")]
    assert len(judge_runs) == 2

    candidates_asked = len(requests_of(fake_openai, "vague-model"))
    again = agent.experiment(runs, model="vague-model", scorers=["judge:judge-pass"])
    assert again.to_json() == exp.to_json() and len(requests_of(fake_openai, "judge-pass")) == 2

    failing = agent.experiment(runs, model="vague-model", scorers=[Judge("judge-fail")])
    assert failing.id == exp.id, "other scorers: the same experiment, its pairs scored again"
    assert all(p.scores == {"judge:judge-fail": False} and p.regressed for p in failing.pairs)
    mumbled = agent.experiment(runs, model="vague-model", scorers=["judge:judge-mumble"])
    for pair in mumbled.pairs:
        assert "neither PASS nor FAIL" in pair.scores["judge:judge-mumble"]["error"]
    assert len(requests_of(fake_openai, "vague-model")) == candidates_asked, "none replayed"
    assert Experiment.load(store, exp.id).definition.scorers == ("judge:judge-mumble",)


def test_a_model_failing_mid_way_fails_the_pair_and_starting_again_retries_it(
    weather_agent: WeatherAgents, store: FileStore, fake_openai: FakeOpenAI
) -> None:
    runs = baselines(weather_agent, store, 2)
    failed_once: list[str] = []

    def flaky(request: dict) -> dict:
        tool_turn = request["messages"][-1].get("role") == "tool"
        if request.get("model") == "same-model" and tool_turn and not failed_once:
            failed_once.append(prompt_of(request))
            return {"status": 500, "message": "the model fell over"}
        return script(request)

    fake_openai.script = flaky
    agent = weather_agent(store=store)
    exp = agent.experiment(runs, model="same-model", concurrency=1)
    failed = [p for p in exp.pairs if p.status[1] == "failed"]
    assert len(failed) == 1 and "the model fell over" in (failed[0].error or "")
    assert exp.summary.failed == 1 and failed[0].regressed
    asked = len(requests_of(fake_openai, "same-model"))

    again = agent.experiment(runs, model="same-model", concurrency=1)
    assert [p.status for p in again.pairs] == [(COMPLETED, COMPLETED)] * 2
    assert len(requests_of(fake_openai, "same-model")) == asked + 1, (
        "only the failed step was asked again"
    )
    assert len(weather_agent.executed) == 2


def test_bad_input_is_refused_in_one_line_before_anything_is_written(
    weather_agent: WeatherAgents, store: FileStore, tmp_path: Path
) -> None:
    runs = baselines(weather_agent, store, 1)
    agent = weather_agent(store=store)
    with pytest.raises(ExperimentError, match="no run nope"):
        agent.experiment([*runs, "nope"], model="same-model")
    with pytest.raises(ScorerSpecError, match="no_such_module does not import"):
        agent.experiment(runs, model="same-model", scorers=["no_such_module:f"])
    with pytest.raises(ValueError, match="match= is one of strict, fifo"):
        agent.experiment(runs, model="same-model", match="fuzzy")
    with pytest.raises(ExperimentError, match="no runs to replay"):
        agent.experiment([], model="same-model")
    down = weather_agent(store=store, base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ModelError, match="cannot be used"):
        down.experiment(runs, model="same-model")
    assert not (tmp_path / "runs" / ".experiments").exists()
    assert store.list_runs() == runs


def test_novel_stop_ends_each_candidate_diverged_and_nothing_runs(
    weather_agent: WeatherAgents, store: FileStore, fake_openai: FakeOpenAI
) -> None:
    runs = baselines(weather_agent, store, 3)
    exp = weather_agent(store=store).experiment(runs, model="paris-model", novel="stop")
    assert [p.status for p in exp.pairs] == [(COMPLETED, "diverged")] * 3
    assert all(p.regressed for p in exp.pairs), "diverged ranks below completed"
    assert (exp.summary.diverged, exp.summary.completed) == (3, 0)
    assert len(weather_agent.executed) == 3, "no tool ran: the baselines' three only"
    assert len(requests_of(fake_openai, "paris-model")) == 3, "one turn each, then stopped"
    again = weather_agent(store=store).experiment(runs, model="paris-model", novel="stop")
    assert again.to_json() == exp.to_json(), "a diverged candidate is done: not replayed"
    assert len(requests_of(fake_openai, "paris-model")) == 3


def test_fifo_serves_a_tool_s_recorded_results_in_order_whatever_the_arguments(
    weather_agent: WeatherAgents, store: FileStore, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script = script
    agent = weather_agent(store=store)
    base = agent.run("What is the weather in Oslo and Rome?").run_id

    def reordered(request: dict) -> dict:
        if request.get("model") == "swap-model" and request["messages"][-1]["role"] != "tool":
            return {"calls": [["get_weather", {"city": "Rome"}], ["get_weather", {"city": "Oslo"}]]}
        return script(request)

    fake_openai.script = reordered
    strict = agent.experiment([base], model="swap-model", name="strict")
    fifo = agent.experiment([base], model="swap-model", match="fifo", name="fifo")
    assert strict.pairs[0].measures is not None and fifo.pairs[0].measures is not None
    assert strict.pairs[0].measures.tools == "reordered"
    assert (strict.pairs[0].measures.served, strict.pairs[0].measures.executed) == (2, 0)
    drifted = [
        e.extra.get("drift")
        for e in store.load(fifo.pairs[0].candidate)
        if e.type == TOOL_RESULT and e.replayed_from and "drift" in e.extra
    ]
    assert drifted == [{"city": "Oslo"}, {"city": "Rome"}], "served in recorded order, drift kept"
    assert len(weather_agent.executed) == 2


async def test_a_model_is_asked_whether_it_answers_once_per_client() -> None:
    """An experiment checks its model, then each candidate's replay checks it again: a client
    whose endpoint answered is not asked twice (its server stopped: still usable), a new client
    (after `aclose`) is."""
    from agentor.engine.models import OpenAIModel

    srv = FakeOpenAI().start()
    model = OpenAIModel("gpt-4o", base_url=srv.url, api_key="sk-test")
    await model.check()
    srv.stop()
    await model.check()  # asks nothing: this client's endpoint answered
    await model.aclose()
    with pytest.raises(ModelError, match="cannot be used"):
        await model.check()
