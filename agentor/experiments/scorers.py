"""Scorers: what says whether a candidate got better or worse than its baseline.

A scorer is a function `score(baseline, candidate)` of the two runs (their `RunResult`s, events
and answers readable through the public API) returning one of:
- a `bool`: a verdict on the pair (False: the candidate regressed; `same_output`, `same_tools`);
- a number, or a dict of named numbers: a score of a run, the second argument. The baseline's
  own score is `score(baseline, baseline)`; the candidate regressed on a score below its
  baseline's, improved on one above.

Built in: `same_output`, `same_tools`, `output_contains:TEXT`, and `judge` / `judge:MODEL` (an
LLM judge, agentor.experiments.judge). Others are named
`module:function` (`--scorer`) and imported when the experiment starts: a spec that does not
import is refused then, in one line. A scorer that raises has its error recorded on the pair;
the experiment goes on.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentor.errors import ScorerSpecError
from agentor.experiments.judge import judge_of
from agentor.experiments.measures import calls_of
from agentor.result import RunResult

Scorer = Callable[[RunResult, RunResult], Any]


@dataclass(frozen=True)
class Verdict:
    """What one scorer said of one pair: per measure name, (baseline, candidate) scores, or a
    pair verdict (None, True/False); `error` when the scorer raised."""

    scorer: str
    values: Mapping[str, tuple[float | None, float | bool]]
    error: str | None = None

    def regressed(self) -> bool:
        return any(_worse(base, cand) for base, cand in self.values.values())

    def improved(self) -> bool:
        return not self.regressed() and any(
            _better(base, cand) for base, cand in self.values.values()
        )


def _worse(base: float | None, cand: float | bool) -> bool:
    if isinstance(cand, bool):
        return cand is False
    return base is not None and cand < base


def _better(base: float | None, cand: float | bool) -> bool:
    if isinstance(cand, bool):
        return False
    return base is not None and cand > base


def same_output(baseline: RunResult, candidate: RunResult) -> bool:
    """The candidate's final answer is the baseline's."""
    return bool(baseline.final_output == candidate.final_output)


def same_tools(baseline: RunResult, candidate: RunResult) -> bool:
    """The candidate made the baseline's tool calls (tool and arguments), in the same order."""
    return calls_of(baseline.events) == calls_of(candidate.events)


def output_contains(text: str) -> Scorer:
    """A run scores 1 when its final answer holds `text` (as written), else 0."""

    def score(baseline: RunResult, run: RunResult) -> float:
        return 1.0 if text in str(run.final_output or "") else 0.0

    score.__name__ = f"output_contains:{text}"
    return score


BUILT_IN: dict[str, Scorer] = {"same_output": same_output, "same_tools": same_tools}


def scorer_of(spec: str) -> Scorer:
    """The scorer a spec names: a built-in, `output_contains:TEXT`, or `module:function`."""
    if spec in BUILT_IN:
        return BUILT_IN[spec]
    judge = judge_of(spec)
    if judge is not None:
        return judge
    name, sep, rest = spec.partition(":")
    if name == "output_contains" and sep:
        if not rest:
            raise ScorerSpecError(f"{spec!r}: output_contains needs a text: output_contains:TEXT")
        return output_contains(rest)
    if not sep or not name or not rest:
        known = ", ".join([*BUILT_IN, "output_contains:TEXT", "judge[:MODEL]"])
        raise ScorerSpecError(f"{spec!r}: not a scorer: one of {known}, or module:function")
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # the user's module: any error on import is its own
        raise ScorerSpecError(f"{spec!r}: module {name} does not import: {exc}") from None
    found = getattr(module, rest, None)
    if not callable(found):
        raise ScorerSpecError(f"{spec!r}: {name} has no function {rest}")
    return found  # type: ignore[no-any-return]  # a user's function, typed by its own module


def judge_pair(spec: str, scorer: Scorer, baseline: RunResult, candidate: RunResult) -> Verdict:
    """What `scorer` says of the pair, as a `Verdict`; its error recorded if it raised or gave
    something that is no verdict or score."""
    try:
        said = scorer(baseline, candidate)
        if isinstance(said, bool):
            return Verdict(spec, {"verdict": (None, said)})
        cand = _scores(said)
        base = _scores(scorer(baseline, baseline))
        if set(base) != set(cand):
            raise TypeError("the baseline's scores and the candidate's name different measures")
        return Verdict(spec, {name: (base[name], cand[name]) for name in cand})
    except Exception as exc:  # a user's scorer: whatever it raises is recorded on the pair
        return Verdict(spec, {}, error=f"{type(exc).__name__}: {exc}")


def _scores(said: Any) -> dict[str, float]:
    if isinstance(said, Mapping):
        return {str(name): _number(value) for name, value in said.items()}
    return {"score": _number(said)}


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(
            f"a scorer returns a bool, a finite number or a dict of them, not {value!r:.60}"
        )
    return float(value)
