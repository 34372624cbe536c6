"""The agents an experiment asks: the candidates' (the agent given, with the experiment's model
and request settings) and its judge's.

The change is made on a copy of the agent once (`candidate_agent`), not per call: a
candidate replayed, then resumed after a crash, is asked with the same model and settings
both times.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from agentor.engine.models import Model, OpenAIModel
from agentor.engine.settings import setting_changes
from agentor.engine.store.api import Store
from agentor.experiments.judge import Asker


class Cloneable(Protocol):
    """What an experiment asks of its agent: an `Agentor`."""

    name: str
    model: Model
    store: Store | None

    def clone(self, **changes: Any) -> Any: ...


def candidate_agent(agent: Cloneable, model: str | None, settings: Mapping[str, Any]) -> Any:
    """`agent` with `model` (a name, on the agent's endpoint) and `settings` over its own
    request settings; `agent` itself when neither is given. A bad setting is a one-line
    `ValueError`/`TypeError`, before anything is written."""
    runner = agent.clone(model=model) if model is not None else agent
    if not settings:
        return runner
    fields = setting_changes(settings)  # checked as a replay's model_settings= are
    if not isinstance(runner.model, OpenAIModel):
        raise ValueError(
            f"model_settings= needs a model of an OpenAI-compatible endpoint; the agent's is "
            f"{type(runner.model).__name__}"
        )
    return runner.clone(model=runner.model.with_settings(fields))


def model_check(agent: Cloneable) -> Callable[[], Awaitable[None]]:
    """Asks the agent's model whether it can be used at all (`OpenAIModel.check`): an
    experiment refuses to start, writing nothing, when it cannot."""

    async def check() -> None:
        probe = getattr(agent.model, "check", None)
        if callable(probe):
            await probe()

    return check


def judge_asker(agent: Cloneable, make: Callable[..., Any]) -> Asker:
    """Asks a judge's question as a run of `agent`'s store, with `make` (the `Agentor`
    class): the judge's model on `agent`'s endpoint and key, without its request settings."""

    def ask(model: str | None, rubric: str, prompt: str, run_id: str) -> str:
        base = agent.model
        if isinstance(base, OpenAIModel):
            judged: Any = base.with_settings({}, name=model or base.name, merge=False)
        else:
            judged = model or base
        judge = make("judge", instructions=rubric, model=judged, store=agent.store, max_turns=1)
        result = judge.run(prompt, run_id=run_id)
        return str(result.final_output or "")

    return ask
