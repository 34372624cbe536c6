"""`fallback_models`: when the model endpoint fails (a rate limit, any API error), the same
request goes to the next model in order. The generation records the model that answered
(`model`) and, when it was a fallback, what failed before it (`note`).

Upstream Agentor starts the whole task again on the fallback; here the run goes on where it was
(one run, its finished steps kept), and each turn asks the primary model first: a rate limit
passes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from agentor.engine.models import Model, ModelResponse, OpenAIModel, TextCallback
from agentor.errors import ModelError

log = logging.getLogger("agentor")


def fallback_models(primary: Model, models: Sequence[str | Model] | None) -> list[Model]:
    """The fallbacks as models: a name is the primary's endpoint, key and settings with
    another model (or a plain `OpenAIModel` when the primary is a custom model)."""
    if models is None:
        return []
    if isinstance(models, str):
        raise TypeError("fallback_models= takes a list of model names, such as ['gpt-4o']")
    out: list[Model] = []
    for m in models:
        if isinstance(m, str):
            out.append(primary.renamed(m) if isinstance(primary, OpenAIModel) else OpenAIModel(m))
        elif isinstance(m, Model):
            out.append(m)
        else:
            raise TypeError(f"fallback_models= holds model names or models, not {m!r}")
    return out


async def generate(
    models: Sequence[Model],
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    on_text: TextCallback | None,
) -> tuple[ModelResponse, Model, str | None]:
    """The first answer of `models` in order: (the response, the model that gave it, a note
    of the failures before it or None). All failing: a `ModelError` naming each."""
    if len(models) == 1:  # no fallback: the model's own error, as it was
        return await models[0].generate(messages, tools, on_text), models[0], None
    failed: list[str] = []
    for model in models:
        try:
            response = await model.generate(messages, tools, on_text)
        except ModelError as exc:
            failed.append(f"{model.name}: {exc}")
            if len(failed) < len(models):
                log.warning("model %s failed (%s); trying the next fallback model", model.name, exc)
            continue
        note = f"fallback: {'; '.join(failed)}" if failed else None
        return response, model, note
    raise ModelError("every model failed: " + "; ".join(failed))
