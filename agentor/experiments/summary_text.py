"""An experiment in words, as `agentor experiment run|show` prints it and the TUI's pairs screen
shows it: the counts, a paired delta with its interval, what a scorer said of a pair and of
every pair. Plain strings (no terminal library); anything from a run or a user (a scorer's
spec, its error) made literal: one line, no terminal escapes."""

from __future__ import annotations

import math

from agentor.experiments.experiment import Experiment, Pair
from agentor.experiments.stats import Interval
from agentor.experiments.summary import ScorerSummary
from agentor.literal import literal_line

# What each paired delta is counted in.
UNITS = {"turns": "", "tokens": "", "cost": " $", "latency": " s"}
REGRESSED, IMPROVED = "regressed", "improved"


def counts_text(e: Experiment) -> str:
    """`pairs 3 of 5 (2 pending); completed 3, diverged 0, failed 0`."""
    s = e.counts
    pending = f" ({len(e.pending)} pending)" if e.pending else ""
    return (
        f"pairs {s.pairs} of {len(e.definition.baselines)}{pending}; "
        f"completed {s.completed}, diverged {s.diverged}, failed {s.failed}"
    )


def delta_text(interval: Interval | None, unit: str = "") -> str:
    """`+12.5 a pair (95% CI +3.1 .. +20.2, 10 pairs)`, or `-` when nothing was measured;
    dollars as `-$0.000088 a pair (95% CI -$0.00011 .. -$0.000066, 200 pairs)`."""
    if interval is None:
        return "- (not measured on both sides)"
    pct = round(interval.confidence * 100)
    if unit.strip() == "$":
        mean, low, high = (_dollars(x) for x in (interval.mean, interval.low, interval.high))
        unit = ""
    else:
        mean, low, high = (_number(x) for x in (interval.mean, interval.low, interval.high))
    pairs = f"{interval.pairs} pair{'' if interval.pairs == 1 else 's'}"
    return f"{mean}{unit} a pair ({pct}% CI {low} .. {high}, {pairs})"


def _number(x: float) -> str:
    """`+212`, `-0.003836`, `-14,350`: four significant digits, no exponent for big ones."""
    if math.isfinite(x) and abs(x) >= 10_000:
        return f"{x:+,.0f}"
    return f"{x:+.4g}"


def _dollars(amount: float) -> str:
    """`+$1.25`, `-$0.000088`: two significant digits past the cent, no exponent."""
    sign = "-" if amount < 0 else "+"
    size = abs(amount)
    if size == 0 or not math.isfinite(size):
        return f"{sign}${size:.2f}" if size == 0 else f"{sign}${size}"
    places = max(2, 1 - math.floor(math.log10(size)))
    return f"{sign}${size:.{places}f}"


def scorer_text(spec: str, scored: ScorerSummary) -> str:
    """`scorer same_output: 5 regressed, 0 improved; McNemar b=5 c=0 p=0.0625`."""
    line = (
        f"scorer {literal_line(spec, 40)}: {scored.regressions} regressed, "
        f"{scored.improvements} improved"
    )
    if scored.errors:
        line += f", {scored.errors} errors"
    if scored.mcnemar is not None:
        m = scored.mcnemar
        line += f"; McNemar b={m.b} c={m.c} p={m.p_value:.3g}"
    return line


def verdict_word(p: Pair) -> str:
    """`regressed`, `improved`, or "" for a pair that did neither."""
    return REGRESSED if p.regressed else (IMPROVED if p.improved else "")


def score_text(value: object) -> str:
    """One scorer's word on a pair (`Pair.scores`' values): `pass`, `FAIL`, `score 1->0`,
    `error ...` (literal)."""
    if isinstance(value, bool):
        return "pass" if value else "FAIL"
    if isinstance(value, dict):
        if "error" in value:
            return literal_line(f"error {value['error']}", 200)
        return literal_line(", ".join(f"{k} {_pair_text(v)}" for k, v in value.items()), 200)
    return literal_line(str(value), 200)


def _pair_text(v: object) -> str:
    if isinstance(v, list) and len(v) == 2:
        return f"{v[0]:.3g}->{v[1]:.3g}" if all(isinstance(x, int | float) for x in v) else str(v)
    return str(v)
