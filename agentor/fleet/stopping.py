"""Stopping a worker's runs at the end of a turn.

What "its current step" means when a worker is told to stop (SIGTERM): a run finishes the turn
it is in (the model call in flight is answered and recorded, the tools it asked for run and
their results are recorded) and starts no new one: no new model call is made. The run is left
incomplete, its lock let go (a `release` event says why): *interrupted*, for the next worker.

The stop is made where a new turn begins: the worker's agents talk to their model through
`StoppableModel`, which refuses to start a request once the worker is stopping, raising
`_StopBeforeTurn`. That is a cancellation (`asyncio.CancelledError`), so the engine treats it
as any cancelled run: nothing more is written, the run stays resumable. Stopping at once
(`Worker.abort`) is a real cancellation instead: a model call in flight is abandoned, a running
tool's thread is still waited for and recorded (the engine never lets go of a run before).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from agentor.engine.models import Model, ModelResponse, TextCallback


class _StopBeforeTurn(asyncio.CancelledError):
    """The worker is stopping: the run ends here, between two turns, with nothing lost."""


class StoppableModel:
    """`model`, except that no request starts once `stopping` is set (see the module). Every
    other attribute (the name, the settings recorded on a run_start) is the model's."""

    def __init__(self, model: Model, stopping: threading.Event) -> None:
        self.model = model
        self.stopping = stopping

    def __repr__(self) -> str:
        return repr(self.model)

    @property
    def name(self) -> str:
        return self.model.name

    def __getattr__(self, attr: str) -> Any:
        if attr == "model":  # not set yet (a copy being made): no recursion
            raise AttributeError(attr)
        return getattr(self.model, attr)

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        if self.stopping.is_set():
            raise _StopBeforeTurn()
        return await self.model.generate(messages, tools, on_text)
