"""The paired statistics an experiment's summary gives, against values worked out by hand, and
the measures of one pair, on runs built event by event."""

from __future__ import annotations

import math
import statistics

import pytest

from agentor.engine.events import Event, Usage
from agentor.experiments.measures import DIFFERENT, REORDERED, SAME, measure
from agentor.experiments.stats import _quantile, mcnemar, mcnemar_p, paired_interval


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),  # no pair flipped: no evidence
        (1, 0, 1.0),  # 2 * C(1,0) / 2^1
        (5, 0, 2 / 32),  # 2 * C(5,0) / 2^5
        (0, 5, 2 / 32),  # two-sided: the same the other way
        (10, 2, 2 * (1 + 12 + 66) / 4096),  # 2 * (C(12,0) + C(12,1) + C(12,2)) / 2^12
        (3, 3, 1.0),  # 2 * 42 / 64 > 1: capped
        (7, 1, 2 * (1 + 8) / 256),
    ],
)
def test_the_exact_mcnemar_p_value_is_the_two_sided_binomial_tail(b: int, c: int, p: float) -> None:
    assert mcnemar_p(b, c) == pytest.approx(p, abs=1e-12)


def test_mcnemar_counts_only_the_pairs_whose_verdict_flipped() -> None:
    verdicts = (
        [(True, True)] * 20 + [(True, False)] * 7 + [(False, True)] * 1 + [(False, False)] * 5
    )
    result = mcnemar(verdicts)
    assert (result.b, result.c) == (7, 1)
    assert result.p_value == pytest.approx(18 / 256)
    with pytest.raises(ValueError):
        mcnemar_p(-1, 2)


def test_the_paired_interval_is_seeded_and_brackets_the_mean_as_theory_says() -> None:
    deltas = [float(i % 10) for i in range(200)]  # mean 4.5, population sd sqrt(8.25)
    first = paired_interval(deltas)
    again = paired_interval(deltas)
    assert first == again  # the same experiment gives the same numbers
    assert first is not None and first.mean == pytest.approx(4.5) and first.pairs == 200
    se = statistics.pstdev(deltas) / math.sqrt(len(deltas))  # 0.2031
    assert first.low == pytest.approx(4.5 - 1.96 * se, abs=0.05)
    assert first.high == pytest.approx(4.5 + 1.96 * se, abs=0.05)
    assert first.excludes_zero
    other = paired_interval(deltas, seed=1)
    assert other is not None and other != first and other.mean == first.mean


def test_the_interval_of_constant_deltas_is_that_delta_and_of_none_is_none() -> None:
    assert paired_interval([]) is None
    same = paired_interval([-0.25] * 12)
    assert same is not None and (same.mean, same.low, same.high) == (-0.25, -0.25, -0.25)
    one = paired_interval([3.0])
    assert one is not None and (one.low, one.high) == (3.0, 3.0)
    centred = paired_interval([-1.0, 1.0] * 50)
    assert centred is not None and not centred.excludes_zero
    with pytest.raises(ValueError):
        paired_interval([1.0], confidence=1.5)


def test_quantiles_interpolate_between_ranks() -> None:
    assert _quantile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert _quantile([1.0, 2.0, 3.0, 4.0], 0.0) == 1.0
    assert _quantile([1.0, 2.0, 3.0, 4.0], 1.0) == 4.0
    assert _quantile([0.0, 10.0], 0.975) == pytest.approx(9.75)


def run(
    calls: list[tuple[str, dict]],
    output: str | None,
    status: str = "completed",
    tokens: int = 100,
    took: float = 0.5,
) -> list[Event]:
    events = [Event("run_start", agent="a", model="gpt-4o-mini", ts=0.0, started_at=0.0)]
    events.append(
        Event(
            "generation",
            model="gpt-4o-mini",
            turn=1,
            calls=[
                {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": "{}"}}
                for i, (n, _) in enumerate(calls)
            ],
            usage=Usage(tokens - 10, 10, tokens),
            started_at=1.0,
            ended_at=1.0 + took,
            messages=[{"role": "user", "content": "hi"}],
        )
    )
    for i, (name, args) in enumerate(calls):
        events.append(Event("tool_call", turn=1, name=name, call_id=f"c{i}", args=args))
    for i, (name, args) in enumerate(calls):
        events.append(
            Event("tool_result", turn=1, name=name, call_id=f"c{i}", args=args, result="r")
        )
    events.append(Event("run_end", turn=1, status=status, text=output, usage=Usage(0, 0, tokens)))
    return events


def test_a_pair_is_measured_by_status_output_trajectory_and_deltas() -> None:
    a = [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Rome"})]
    baseline = run(a, "Sunny.", tokens=100, took=0.5)
    same = measure(baseline, run(a, "Sunny.", tokens=80, took=0.25))
    assert (same.tools, same.output_changed, same.first_divergence) == (SAME, False, None)
    assert same.delta("tokens") == -20 and same.delta("latency") == pytest.approx(-0.25)
    assert same.delta("turns") == 0 and not same.status_regressed
    assert same.cost[0] is not None and same.delta("cost") < 0  # priced: fewer tokens
    swapped = measure(baseline, run(list(reversed(a)), "Sunny!"))
    assert swapped.tools == REORDERED and swapped.output_changed
    assert swapped.first_divergence is not None
    other = measure(baseline, run([("get_weather", {"city": "Lima"})], None, status="failed"))
    assert other.tools == DIFFERENT and other.status == ("completed", "failed")
    assert other.status_regressed and not other.status_improved
    with pytest.raises(ValueError):
        same.delta("mood")


def test_structured_outputs_equal_as_json_are_the_same_answer() -> None:
    baseline = run([], '{"answer": 42, "note": "x"}')
    respaced = measure(baseline, run([], '{"note":"x","answer":42}'))
    assert respaced.output_changed and respaced.output_json_equal is True
    text = measure(baseline, run([], "forty-two"))
    assert text.output_json_equal is None


def plain_interval(
    deltas: list[float], resamples: int, seed: int
) -> tuple[float, float, float] | None:
    """The percentile bootstrap as written plainly: `choices` then `fsum`, resample after
    resample (what `paired_interval` computes faster and must give exactly)."""
    import random

    n = len(deltas)
    if n == 0:
        return None
    mean = math.fsum(deltas) / n
    if n == 1:
        return (mean, mean, mean)
    rng = random.Random(seed)
    means = sorted(math.fsum(rng.choices(deltas, k=n)) / n for _ in range(resamples))
    tail = (1 - 0.95) / 2
    return (mean, _quantile(means, tail), _quantile(means, 1 - tail))


def test_the_fast_bootstrap_gives_the_plain_bootstraps_very_numbers() -> None:
    import random

    from agentor.experiments.stats import paired_intervals

    r = random.Random(5)
    kinds = [
        lambda: float(r.randint(-5, 5)),  # turns, tokens
        lambda: r.gauss(0, 1e-3),  # dollars
        lambda: r.random() * 100,  # seconds
        lambda: r.choice([0.0, 1e-310, 5e-324, -1e-320, 3.0]),  # subnormal sums
        lambda: r.choice([1e300, -1e300, 1e-300, 2.5]),  # far apart: wide lanes
        lambda: r.choice([-0.0, 0.0, 1.0]),  # a negative zero: summed by fsum
        lambda: r.choice([float("inf"), 1.0]),  # not finite: summed by fsum
    ]
    for trial in range(60):
        samples = {}
        for k in range(4):
            n = r.choice([0, 1, 2, 3, 7, 50, 200, 200])
            kind = r.choice(kinds)
            samples[str(k)] = [kind() for _ in range(n)]
        resamples = r.choice([10, 100, 400])
        fast = paired_intervals(samples, resamples=resamples, seed=trial)
        for name, deltas in samples.items():
            i = fast[name]
            got = None if i is None else (i.mean, i.low, i.high)
            assert repr(got) == repr(plain_interval(deltas, resamples, trial)), (trial, name)
    # A sample of one value repeated is not resampled (every resample is that value): the
    # same numbers, and the other samples' draws unchanged beside it.
    for constant in ([0.1] * 200, [-0.0] * 50, [0.0] * 7, [3.0] * 3, [1e-310] * 9):
        samples = {"constant": constant, "varied": [r.gauss(0, 1) for _ in constant]}
        fast = paired_intervals(samples, resamples=100, seed=7)
        for name, deltas in samples.items():
            i = fast[name]
            got = None if i is None else (i.mean, i.low, i.high)
            assert repr(got) == repr(plain_interval(deltas, 100, 7)), (constant[0], name)
    # A sum past the largest float: fsum's error, as before.
    with pytest.raises(OverflowError):
        paired_intervals({"huge": [1.7e308] * 3}, resamples=5)
    with pytest.raises(OverflowError):
        plain_interval([1.7e308] * 3, 5, 0)
    # Past 2,047 pairs the lanes are 128 bits wide: the same numbers too.
    big = [r.gauss(0, 1) for _ in range(3000)]
    one = paired_intervals({"big": big}, resamples=20, seed=3)["big"]
    assert one is not None and (one.mean, one.low, one.high) == plain_interval(big, 20, 3)


def test_a_delta_reads_as_a_person_writes_it_dollars_without_exponents() -> None:
    from agentor.experiments.stats import Interval
    from agentor.experiments.summary_text import UNITS, delta_text

    cost = Interval(-8.8e-05, -0.0001096, -6.6e-05, 200, 0.95)
    assert delta_text(cost, UNITS["cost"]) == (
        "-$0.000088 a pair (95% CI -$0.00011 .. -$0.000066, 200 pairs)"
    )
    assert delta_text(Interval(1.25, 0.5, 2.0, 3, 0.95), UNITS["cost"]) == (
        "+$1.25 a pair (95% CI +$0.50 .. +$2.00, 3 pairs)"
    )
    assert delta_text(Interval(2.0, 2.0, 2.0, 1, 0.95), UNITS["turns"]) == (
        "+2 a pair (95% CI +2 .. +2, 1 pair)"
    )
    assert delta_text(Interval(0.5, 0.25, 0.75, 4, 0.9), UNITS["latency"]) == (
        "+0.5 s a pair (90% CI +0.25 .. +0.75, 4 pairs)"
    )
    assert delta_text(Interval(-14350.33, -42930.0, 0.0, 3, 0.95), UNITS["tokens"]) == (
        "-14,350 a pair (95% CI -42,930 .. +0, 3 pairs)"
    )
    assert delta_text(None) == "- (not measured on both sides)"
