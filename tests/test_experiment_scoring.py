"""Scorers and an experiment's summary: which pairs regressed or improved, per scorer and
overall; the paired deltas; McNemar for boolean scores, checked against hand-worked values."""

from __future__ import annotations

from typing import Any

import pytest

from agentor.engine.events import Event, Usage
from agentor.experiments.measures import measure
from agentor.experiments.scorers import (
    ScorerSpecError,
    judge_pair,
    scorer_of,
)
from agentor.experiments.stats import mcnemar_p
from agentor.experiments.summary import PairOutcome, summarize
from agentor.result import RunResult


def result(output: str | None, calls: tuple[str, ...] = (), status: str = "completed") -> Any:
    events = [Event("run_start", agent="a", model="gpt-4o-mini", ts=0.0)]
    events.append(
        Event(
            "generation",
            model="gpt-4o-mini",
            turn=1,
            usage=Usage(90, 10, 100 + 10 * len(calls)),
            started_at=1.0,
            ended_at=1.5,
            messages=[{"role": "user", "content": "hi"}],
        )
    )
    for i, city in enumerate(calls):
        events.append(Event("tool_call", turn=1, name="w", call_id=f"c{i}", args={"c": city}))
        events.append(
            Event("tool_result", turn=1, name="w", call_id=f"c{i}", args={"c": city}, result="r")
        )
    events.append(Event("run_end", turn=1, status=status, text=output, usage=Usage(0, 0, 0)))
    return RunResult(
        run_id="r",
        final_output=output,
        status=status,
        events=events,
        usage=Usage(90, 10, 100),
        messages=[],
        error=None,
        pending=[],
    )


def test_built_in_and_user_scorers_are_found_and_bad_specs_refused_in_one_line() -> None:
    assert scorer_of("same_output")(result("a"), result("a")) is True
    assert scorer_of("same_tools")(result("a", ("x", "y")), result("b", ("y", "x"))) is False
    contains = scorer_of("output_contains:Sunny")
    assert contains(result("x"), result("Sunny in Oslo")) == 1.0
    assert scorer_of("tests.experiment_scorers:shorter_is_better")(result(""), result("ab")) == -2
    for spec, says in (
        ("nope", "not a scorer"),
        ("output_contains:", "needs a text"),
        ("no_such_module_x:f", "does not import"),
        ("tests.experiment_scorers:missing", "has no function missing"),
        ("tests.experiment_scorers:NOT_A_FUNCTION", "has no function"),
    ):
        with pytest.raises(ScorerSpecError) as refused:
            scorer_of(spec)
        assert says in str(refused.value) and "\n" not in str(refused.value)


def test_a_score_below_the_baselines_is_a_regression_and_above_an_improvement() -> None:
    shorter = scorer_of("tests.experiment_scorers:shorter_is_better")
    worse = judge_pair("s", shorter, result("short"), result("much longer answer"))
    better = judge_pair("s", shorter, result("much longer answer"), result("short"))
    assert worse.values == {"score": (-5.0, -18.0)} and worse.regressed()
    assert better.improved() and not better.regressed()
    named = judge_pair("t", scorer_of("tests.experiment_scorers:two_scores"), result("Sun"),
                       result("Sunny day"))  # fmt: skip
    assert named.values == {"length": (3.0, 9.0), "mentions_sun": (1.0, 1.0)}
    assert named.improved()


def test_a_scorer_that_raises_or_gives_nonsense_has_its_error_recorded() -> None:
    boom = judge_pair("b", scorer_of("tests.experiment_scorers:raises"), result("a"), result("a"))
    assert boom.error == "RuntimeError: the scorer's own bug" and not boom.regressed()
    odd = judge_pair("o", scorer_of("tests.experiment_scorers:says_nothing"), result("a"),
                     result("a"))  # fmt: skip
    assert odd.error is not None and "a finite number" in odd.error


def test_the_summary_counts_regressions_per_scorer_and_tests_boolean_scores() -> None:
    same = scorer_of("same_output")
    contains = scorer_of("output_contains:Sunny")
    # 10 pairs: 6 keep the answer; 3 lose "Sunny" (regress); 1 gains it; one candidate fails.
    rows = [("Sunny.", "Sunny.")] * 6 + [("Sunny.", "Cloudy.")] * 3 + [("Rain.", "Sunny!")]
    outcomes = []
    for i, (a, b) in enumerate(rows):
        base = result(a, ("x",))
        cand = result(b, ("x",), status="failed" if i == 0 else "completed")
        verdicts = (judge_pair("same_output", same, base, cand),
                    judge_pair("output_contains:Sunny", contains, base, cand))  # fmt: skip
        outcomes.append(PairOutcome(measure(base.events, cand.events), verdicts))
    summary = summarize(outcomes)
    assert (summary.pairs, summary.completed, summary.failed) == (10, 9, 1)
    exact = summary.scorers["same_output"]
    assert (exact.regressions, exact.improvements) == (4, 0)  # 3 clouded, 1 rain -> sun
    assert exact.mcnemar is not None and (exact.mcnemar.b, exact.mcnemar.c) == (4, 0)
    assert exact.mcnemar.p_value == pytest.approx(2 / 16)
    sunny = summary.scorers["output_contains:Sunny"]
    assert (sunny.regressions, sunny.improvements) == (3, 1)
    assert sunny.mcnemar is not None and (sunny.mcnemar.b, sunny.mcnemar.c) == (3, 1)
    assert sunny.mcnemar.p_value == pytest.approx(mcnemar_p(3, 1)) == pytest.approx(10 / 16)
    # Pair 0 failed (status worse): a regression whatever the scorers say.
    assert outcomes[0].regressed and summary.regressions == 5  # pair 0, 3 clouded, rain->sun
    assert summary.improvements == 0  # rain -> sun regressed on same_output
    tokens = summary.deltas["tokens"]
    assert tokens is not None and (tokens.mean, tokens.low, tokens.high) == (0.0, 0.0, 0.0)
    assert summarize(outcomes) == summary  # seeded


def test_a_summary_of_no_pair_says_so() -> None:
    summary = summarize([])
    assert (summary.pairs, summary.regressions) == (0, 0)
    assert all(v is None for v in summary.deltas.values())
