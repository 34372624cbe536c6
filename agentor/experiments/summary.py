"""An experiment summed up from its pairs: how many, how they ended, which regressed or
improved (by status and by each scorer), the paired deltas of turns, tokens, cost and model
latency with their intervals, and for each boolean score the exact McNemar test.

A pair **regressed** when its candidate's status got worse (`PairMeasures.status_regressed`) or
a scorer says so (a False verdict, a score below the baseline's); it **improved** when it did
not regress and its status got better or a score rose. A boolean score is a pair verdict (the
baseline passes its own check) or a run's score of 0 or 1 (`output_contains`): McNemar counts
the pairs whose pass/fail flipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentor.engine.statuses import COMPLETED, DIVERGED, FAILED
from agentor.experiments.measures import NUMBERS, PairMeasures
from agentor.experiments.scorers import Verdict
from agentor.experiments.stats import (
    DEFAULT_SEED,
    Interval,
    McNemar,
    mcnemar,
    paired_intervals,
)


@dataclass(frozen=True)
class PairOutcome:
    """One pair as the summary reads it: its measures and what each scorer said."""

    measures: PairMeasures
    verdicts: tuple[Verdict, ...] = ()

    @property
    def regressed(self) -> bool:
        return self.measures.status_regressed or any(v.regressed() for v in self.verdicts)

    @property
    def improved(self) -> bool:
        if self.regressed:
            return False
        return self.measures.status_improved or any(v.improved() for v in self.verdicts)


@dataclass(frozen=True)
class ScorerSummary:
    regressions: int
    improvements: int
    errors: int
    mcnemar: McNemar | None  # None: not a boolean score


@dataclass(frozen=True)
class Summary:
    pairs: int
    completed: int
    diverged: int
    failed: int
    regressions: int
    improvements: int
    deltas: dict[str, Interval | None] = field(default_factory=dict)
    scorers: dict[str, ScorerSummary] = field(default_factory=dict)


def summarize(
    outcomes: Sequence[PairOutcome], seed: int = DEFAULT_SEED, *, intervals: bool = True
) -> Summary:
    """The summary of an experiment's pairs (seeded: the same pairs, the same numbers).
    Without `intervals`, no delta is worked out (`deltas` empty): the bootstrap is most of
    the cost (~0.15 s at 200 pairs), the rest a few ms."""
    ends = [o.measures.status[1] for o in outcomes]
    deltas: dict[str, Interval | None] = {}
    if intervals:
        samples = {
            name: [d for o in outcomes if (d := o.measures.delta(name)) is not None]
            for name in NUMBERS
        }
        deltas = paired_intervals(samples, seed=seed)
    return Summary(
        pairs=len(outcomes),
        completed=ends.count(COMPLETED),
        diverged=ends.count(DIVERGED),
        failed=ends.count(FAILED),
        regressions=sum(1 for o in outcomes if o.regressed),
        improvements=sum(1 for o in outcomes if o.improved),
        deltas=deltas,
        scorers=_scorers(outcomes),
    )


def _scorers(outcomes: Sequence[PairOutcome]) -> dict[str, ScorerSummary]:
    by_name: dict[str, list[Verdict]] = {}
    for outcome in outcomes:
        for verdict in outcome.verdicts:
            by_name.setdefault(verdict.scorer, []).append(verdict)
    return {name: _scorer(verdicts) for name, verdicts in by_name.items()}


def _scorer(verdicts: Sequence[Verdict]) -> ScorerSummary:
    scored = [v for v in verdicts if v.error is None]
    flips = [_pass_fail(v) for v in scored]
    boolean = bool(flips) and all(f is not None for f in flips)
    return ScorerSummary(
        regressions=sum(1 for v in scored if v.regressed()),
        improvements=sum(1 for v in scored if v.improved()),
        errors=len(verdicts) - len(scored),
        mcnemar=mcnemar([f for f in flips if f is not None]) if boolean else None,
    )


def _pass_fail(verdict: Verdict) -> tuple[bool, bool] | None:
    """(baseline passed, candidate passed) for a boolean score; None for any other."""
    if len(verdict.values) != 1:
        return None
    ((base, cand),) = verdict.values.values()
    if isinstance(cand, bool):
        return (True, cand)  # a pair verdict: the baseline passes its own check
    if base in (0.0, 1.0) and cand in (0.0, 1.0):
        return (base == 1.0, cand == 1.0)
    return None
