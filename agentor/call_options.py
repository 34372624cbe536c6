"""What one call of `Agentor` may change for itself alone (upstream's `arun(...,
max_turns=, fallback_models=, tracing=)`): the call runs a copy of the agent with them."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, TypeVar, cast

from agentor.engine.fallback import fallback_models
from agentor.engine.models import Model
from agentor.tracing_setting import call_tracing

A = TypeVar("A")


def for_call(
    agent: A, max_turns: int | None, fallbacks: Sequence[str | Model] | None, tracing: Any
) -> A:
    """`agent` (an `Agentor`) for one call: its turns, fallback models and tracing changed;
    the agent itself when the call changes none."""
    if max_turns is None and not fallbacks and tracing is None:
        return agent
    held: Any = agent
    runner: Any = held.clone(max_turns=max_turns) if max_turns is not None else copy.copy(held)
    runner.fallbacks = fallback_models(held.model, fallbacks)
    runner._call_tracing = call_tracing(held.tracing, tracing)
    return cast(A, runner)


async def release_fallbacks(runner: Any) -> None:
    """Fallback models made for a call let their connections go with it (they belong to the
    call's event loop)."""
    for model in runner.fallbacks:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
