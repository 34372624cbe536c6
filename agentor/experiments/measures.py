"""What one pair of an experiment is measured by: its baseline run and its candidate run (a
replay of the baseline with one change), each read from its events.

- the status of each, and whether the candidate's is worse (`STATUS_RANK`);
- the final output: changed as text, and, when both are JSON, whether they are equal as JSON
  (structured output written with other spacing or key order is the same answer);
- the tool trajectory: the same calls (tool and canonical arguments) in the same order, the same
  calls in another order, or different (a run's calls as the engine sees it: a crashed turn's
  attempt that a resume asked again is not counted); and the first divergence, as `agentor
  diff` finds it;
- turns, tokens, cost (genai-prices, from the recorded usage) and model latency (the time the
  generations took), each as (baseline, candidate), and their delta;
- how many of the candidate's tool results were served from the baseline's record and how
  many were executed (a novel call refused is neither).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from agentor.engine.events import GENERATION, TOOL_CALL, TOOL_RESULT, Event
from agentor.engine.fork.compare import compare, latest_generations
from agentor.engine.fork.recording import EXECUTED, answered
from agentor.engine.history import canonical_args
from agentor.engine.statuses import (
    AWAITING_APPROVAL,
    COMPLETED,
    DIVERGED,
    FAILED,
    INCOMPLETE,
    MAX_TURNS,
)
from agentor.ops.pricing import run_cost

SAME, REORDERED, DIFFERENT = "same", "reordered", "different"
# How good an ending is: a candidate whose ending ranks lower than its baseline's regressed.
STATUS_RANK = {
    COMPLETED: 3,
    AWAITING_APPROVAL: 2,
    MAX_TURNS: 1,
    DIVERGED: 1,
    INCOMPLETE: 1,
    FAILED: 0,
}
# The measures with a number on each side, whose per-pair delta is summed up.
NUMBERS = ("turns", "tokens", "cost", "latency")


@dataclass(frozen=True)
class PairMeasures:
    """One pair, measured (see the module)."""

    status: tuple[str, str]
    output_changed: bool
    output_json_equal: bool | None  # None: the outputs are not both JSON
    tools: str  # SAME | REORDERED | DIFFERENT
    first_divergence: str | None
    turns: tuple[int, int]
    tokens: tuple[int, int]
    cost: tuple[float | None, float | None]  # dollars; None: not priced
    latency: tuple[float | None, float | None]  # seconds the generations took
    served: int
    executed: int

    @property
    def status_regressed(self) -> bool:
        return _rank(self.status[1]) < _rank(self.status[0])

    @property
    def status_improved(self) -> bool:
        return _rank(self.status[1]) > _rank(self.status[0])

    @property
    def tools_changed(self) -> bool:
        return self.tools != SAME

    def delta(self, name: str) -> float | None:
        """Candidate minus baseline for one of `NUMBERS`; None when either side is unknown."""
        if name not in NUMBERS:
            raise ValueError(f"no such measure: {name!r} (one of {', '.join(NUMBERS)})")
        base, cand = getattr(self, name)
        if base is None or cand is None:
            return None
        return float(cand) - float(base)


def _rank(status: str) -> int:
    return STATUS_RANK.get(status, 1)


def measure(baseline: Sequence[Event], candidate: Sequence[Event]) -> PairMeasures:
    """The measures of a pair from both runs' events (a candidate's own events: a replay's
    copy of its baseline's opening is read as the engine reads it)."""
    comparison = compare(baseline, candidate)
    a, b = comparison.a, comparison.b
    served = sum(1 for e in candidate if e.type == TOOL_RESULT and e.replayed_from)
    # A novel call refused (`novel="error"`) ran no more than a served one did.
    executed = sum(1 for e in _own(candidate) if e.type == TOOL_RESULT and answered(e) == EXECUTED)
    return PairMeasures(
        status=(a.status, b.status),
        output_changed=a.final_output != b.final_output,
        output_json_equal=_json_equal(a.final_output, b.final_output),
        tools=trajectory(baseline, candidate),
        first_divergence=comparison.first.describe() if comparison.first else None,
        turns=(len(a.turns), len(b.turns)),
        tokens=(a.usage.total_tokens, b.usage.total_tokens),
        cost=(_dollars(baseline), _dollars(candidate)),
        latency=(model_latency(baseline), model_latency(candidate)),
        served=served,
        executed=executed,
    )


def _own(events: Sequence[Event]) -> Sequence[Event]:
    """A fork's own events: after the last `fork` event (a replay copies nothing else)."""
    for i in range(len(events) - 1, -1, -1):
        if events[i].type == "fork":
            return events[i + 1 :]
    return events


def trajectory(baseline: Sequence[Event], candidate: Sequence[Event]) -> str:
    """SAME, REORDERED or DIFFERENT: the calls each run made, by tool and arguments."""
    a, b = calls_of(baseline), calls_of(_own(candidate))
    if a == b:
        return SAME
    if Counter(a) == Counter(b):
        return REORDERED
    return DIFFERENT


def calls_of(events: Sequence[Event]) -> list[tuple[str, str]]:
    """The tool calls a run made, in order, as the engine sees the run after its rewinds: (tool,
    canonical arguments). The calls of a turn's attempt that a crash cut off and a resume asked
    again are left out (its log keeps them, then the calls asked again)."""
    kept = set(latest_generations(events).values())
    out: list[tuple[str, str]] = []
    asked_by: int | None = None  # the generation the calls that follow were asked by
    for i, e in enumerate(events):
        if e.type == GENERATION:
            asked_by = i
        elif e.type == TOOL_CALL and (asked_by is None or asked_by in kept):
            out.append((e.name or "", canonical_args(e.args)))
    return out


def model_latency(events: Sequence[Event]) -> float | None:
    """Seconds the run's generations took (None: no generation recorded its times)."""
    spans = [
        e.ended_at - e.started_at
        for e in events
        if e.type == GENERATION and e.started_at is not None and e.ended_at is not None
    ]
    return math.fsum(spans) if spans else None


def _dollars(events: Sequence[Event]) -> float | None:
    cost = run_cost(events, fast=True)  # the same amount, as a number
    return float(cost.total) if isinstance(cost.total, Decimal) and cost.complete else None


def _json_equal(a: str | None, b: str | None) -> bool | None:
    left, right = _json(a), _json(b)
    if left is _NOT_JSON or right is _NOT_JSON:
        return None
    return bool(left == right)


_NOT_JSON: Any = object()


def _json(text: str | None) -> Any:
    if text is None:
        return _NOT_JSON
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON
