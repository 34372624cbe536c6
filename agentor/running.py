"""How `Agentor` drives its async work for a caller: in an event loop of its own (`run`,
`resume`, `fork`, `replay`), or as an async stream of the run's events (`stream_chat`,
`stream_resume`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

from agentor.engine.events import Event
from agentor.engine.loop import Listener
from agentor.engine.models import Model

T = TypeVar("T")


def in_own_loop(model: Model, name: str, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`work()` run by `asyncio.run` (`Agentor.<name>`), then the model's connections closed:
    they die with that loop. Inside a running loop it is refused, naming the async method."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_closing(model, work()))
    raise RuntimeError(
        f"Agentor.{name}() was called inside a running event loop; "
        f"use `await agent.a{name}(...)` there instead"
    )


async def _closing(model: Model, work: Coroutine[Any, Any, T]) -> T:
    try:
        return await work
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()


async def stream(start: Callable[[Listener], Any]) -> AsyncIterator[Event]:
    """The events `start(listener)` hands its listener, as they come; then what it raised.

    Handed to the caller as is: closing it (aclose) cancels the run at once, so its lock is
    free then, not whenever the garbage collector gets to a wrapper."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    task = asyncio.ensure_future(start(queue.put_nowait))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (event := await queue.get()) is not None:
            yield event
        task.result()  # re-raise what the run raised
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
