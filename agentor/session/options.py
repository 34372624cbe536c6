"""`CallOptions`: what one call of `Agentor` changes for itself alone (upstream's `arun(...,
max_turns=, fallback_models=, tracing=)`, a fork's `model=` and `max_turns=`), never kept on
the agent: opting one call in must not enrol every later one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentor.engine import fallback
from agentor.engine.inputs import check_max_turns
from agentor.engine.models import Model
from agentor.session.config import AgentConfig, model_named


@dataclass(frozen=True)
class CallOptions:
    """A call's own settings; None keeps the agent's. `tracing` as the call was given it
    (agentor.tracing_setting); `fallbacks`: models made for the call, asked in turn when
    the model fails (agentor.engine.fallback)."""

    max_turns: int | None = None
    fallbacks: tuple[Model, ...] | None = None
    tracing: Any = None
    model: Model | None = None

    @classmethod
    def checked(
        cls,
        config: AgentConfig,
        *,
        max_turns: int | None = None,
        fallback_models: Sequence[str | Model] | None = None,
        tracing: Any = None,
        model: str | Model | None = None,
    ) -> CallOptions:
        """The options of a call to an agent of `config`, each checked as the constructor
        checks it: a model given by name is read as `clone` reads it
        (agentor.session.config.model_named), fallbacks by name are on the model's endpoint."""
        turns = None if max_turns is None else check_max_turns(max_turns)
        fallbacks = None
        if fallback_models:
            fallbacks = tuple(fallback.fallback_models(config.model, fallback_models))
        made = None if model is None else model_named(config.model, model)
        return cls(max_turns=turns, fallbacks=fallbacks, tracing=tracing, model=made)

    def fallbacks_for(self, config: AgentConfig) -> tuple[Model, ...]:
        """The models this call asks when its model fails: its own, else the agent's."""
        return config.fallbacks if self.fallbacks is None else self.fallbacks


async def let_go(models: Iterable[Model]) -> None:
    """Models a call asked let their connections go with it: they belong to the call's event
    loop, which `run()` closes."""
    for model in models:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
