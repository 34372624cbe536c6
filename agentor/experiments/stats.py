"""Paired statistics over an experiment's pairs: each pair is one item measured twice (its
baseline and its candidate), so what is summed up is the per-pair difference, never two
independent samples.

- `paired_interval`: the mean of the per-pair deltas (candidate - baseline) with a percentile
  bootstrap interval, resampling pairs with replacement. Seeded: the same deltas give the same
  interval, so an experiment summed up twice says the same.
- `mcnemar`: for a boolean score, the pairs whose verdict flipped (`b`: baseline passed,
  candidate failed; `c`: the other way) and the two-sided exact McNemar p-value, a binomial
  test of b against b + c at one half. Pairs that agree carry no information about the change.

Cost model: the bootstrap draws `resamples` x pairs indices (10,000 x 200 pairs) and sums as
many values per measure (agentor.experiments.resample: ~0.1 s for 4 measures on a slow core).
Measures over the same number of pairs resample the same pairs (the same seed draws the same
indices), so `paired_intervals` draws once for all of them: the numbers are those
`paired_interval` gives each alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentor.experiments.resample import Draws, Sums

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
    intervals = paired_intervals(
        {"deltas": deltas}, confidence=confidence, resamples=resamples, seed=seed
    )
    return intervals["deltas"]


def paired_intervals(
    samples: Mapping[str, Sequence[float]],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Interval | None]:
    """`paired_interval` of each named sample of deltas (the same numbers), drawing the
    resampled pairs once for all the samples of one size."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence is between 0 and 1, not {confidence!r}")
    out: dict[str, Interval | None] = {}
    by_size: dict[int, list[tuple[str, list[float]]]] = {}
    for name, deltas in samples.items():
        values = [float(d) for d in deltas]
        n = len(values)
        if n == 0:
            out[name] = None
        elif n == 1 or resamples < 1 or _constant(values):
            # Every resample of one value repeated is that value: each resampled mean is
            # this mean, bit for bit (the draws of the other samples are the same without it).
            mean = math.fsum(values) / n
            out[name] = Interval(mean, mean, mean, n, confidence)
        else:
            by_size.setdefault(n, []).append((name, values))
    tail = (1 - confidence) / 2
    for n, group in by_size.items():
        every = _resampled_means([values for _, values in group], n, resamples, seed)
        for (name, values), means in zip(group, every, strict=True):
            means.sort()
            mean = math.fsum(values) / n
            low, high = _quantile(means, tail), _quantile(means, 1 - tail)
            out[name] = Interval(mean, low, high, n, confidence)
    return {name: out[name] for name in samples}


def _constant(values: Sequence[float]) -> bool:
    """Whether every value is the same finite float (the same sign of zero too)."""
    first = values[0]
    return math.isfinite(first) and all(v.hex() == first.hex() for v in values)


def _resampled_means(
    samples: Sequence[list[float]], n: int, resamples: int, seed: int
) -> list[list[float]]:
    """Each sample's mean over `resamples` resamples of its `n` values with replacement,
    every sample resampled at the same indices: those `random.Random(seed).choices(values,
    k=n)` picks, resample after resample (it picks `values[i]` for each `i` it draws from
    `range(n)`, whatever the values), each mean `math.fsum` of the picks over n
    (agentor.experiments.resample computes both faster, the same)."""
    draws = Draws(n, seed)
    sums = Sums(samples)
    means: list[list[float]] = [[] for _ in samples]
    for _ in range(resamples):
        for total, out in zip(sums.of(draws.next()), means, strict=True):
            out.append(total / n)
    return means


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
