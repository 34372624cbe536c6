"""Paired statistics over an experiment's pairs: each pair is one item measured twice (its
baseline and its candidate), so what is summed up is the per-pair difference, never two
independent samples.

- `paired_interval`: the mean of the per-pair deltas (candidate - baseline) with a percentile
  bootstrap interval, resampling pairs with replacement. Seeded: the same deltas give the same
  interval, so an experiment summed up twice says the same.
- `mcnemar`: for a boolean score, the pairs whose verdict flipped (`b`: baseline passed,
  candidate failed; `c`: the other way) and the two-sided exact McNemar p-value, a binomial
  test of b against b + c at one half. Pairs that agree carry no information about the change.

Cost model: the bootstrap draws `resamples` x pairs values (10,000 x 200 pairs: about a second
on a slow core), once per measure.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20_261_206


@dataclass(frozen=True)
class Interval:
    """The mean per-pair delta and its bootstrap interval (`low`, `high`); `pairs` counted."""

    mean: float
    low: float
    high: float
    pairs: int
    confidence: float

    @property
    def excludes_zero(self) -> bool:
        """Whether the interval says the change moved the measure (either way)."""
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class McNemar:
    """Pairs whose boolean verdict flipped, and the exact two-sided p-value."""

    b: int  # baseline passed, candidate failed: regressions
    c: int  # baseline failed, candidate passed: improvements
    p_value: float


def paired_interval(
    deltas: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Interval | None:
    """The mean of `deltas` with its percentile bootstrap interval; None with no pair."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence is between 0 and 1, not {confidence!r}")
    values = [float(d) for d in deltas]
    n = len(values)
    if n == 0:
        return None
    mean = math.fsum(values) / n
    if n == 1 or resamples < 1:
        return Interval(mean, mean, mean, n, confidence)
    rng = random.Random(seed)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    return Interval(mean, _quantile(means, tail), _quantile(means, 1 - tail), n, confidence)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, linear between the two nearest ranks."""
    at = q * (len(ordered) - 1)
    below = math.floor(at)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (at - below)


def mcnemar(pairs: Sequence[tuple[bool, bool]]) -> McNemar:
    """The exact McNemar test of (baseline, candidate) verdicts."""
    b = sum(1 for base, cand in pairs if base and not cand)
    c = sum(1 for base, cand in pairs if cand and not base)
    return McNemar(b, c, mcnemar_p(b, c))


def mcnemar_p(b: int, c: int) -> float:
    """Two-sided exact p: twice the binomial(b + c, 1/2) tail at min(b, c), at most 1."""
    if b < 0 or c < 0:
        raise ValueError("counts of flipped pairs are 0 or more")
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = math.fsum(math.comb(n, i) for i in range(k + 1)) / float(1 << n)
    return min(1.0, 2 * tail)
