"""Scorers a user would write, named `tests.experiment_scorers:NAME` by the experiment tests."""

from __future__ import annotations

from agentor import RunResult


def shorter_is_better(baseline: RunResult, run: RunResult) -> float:
    """A run scores minus the length of its answer."""
    return -float(len(str(run.final_output or "")))


def two_scores(baseline: RunResult, run: RunResult) -> dict[str, float]:
    text = str(run.final_output or "")
    return {"length": float(len(text)), "mentions_sun": 1.0 if "Sun" in text else 0.0}


def raises(baseline: RunResult, run: RunResult) -> bool:
    raise RuntimeError("the scorer's own bug")


def says_nothing(baseline: RunResult, run: RunResult) -> str:
    return "fine"


NOT_A_FUNCTION = 3
