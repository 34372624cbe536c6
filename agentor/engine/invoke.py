"""Running one tool call for the loop: an async tool is awaited (and cancelled with the run),
a sync one runs in a thread that the run waits for, even when cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from agentor.engine.events import TOOL_WAIT, Event
from agentor.engine.tools import Tool


async def all_answered(answers: list[Coroutine[Any, Any, Event]]) -> list[Event]:
    """One generation's calls, run concurrently. When one stops (the run is cancelled) the
    others are stopped too, and waited for: `gather` alone would return as soon as an async
    call is cancelled, while a sync call's thread is still running unrecorded."""
    tasks = [asyncio.ensure_future(a) for a in answers]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        while not all(task.done() for task in tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait(tasks)
        raise


async def invoke_tool(
    tool: Tool, args: dict[str, Any], result: Event, emit: Callable[[Event], Awaitable[None]]
) -> bool:
    """Run the tool into `result` (its value, or its error). True when the run was cancelled
    while a sync tool's thread ran.

    An async tool is cancelled with the run. A thread cannot be interrupted, and the run must
    not be let go while it runs (a resume would run the same call again beside it): a cancelled
    run waits for the thread, however often it is cancelled meanwhile, telling its listeners
    what it waits for (a transient `tool_wait` event)."""
    if tool.is_async:
        try:
            result.result = loggable(await tool.fn(**args))
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"
        return False
    call = functools.partial(contextvars.copy_context().run, tool.fn, **args)
    thread = asyncio.get_running_loop().run_in_executor(None, call)
    stopped = False
    while not thread.done():
        try:
            await asyncio.shield(thread)
        except asyncio.CancelledError:
            if not stopped and not thread.done():
                wait = Event(TOOL_WAIT, name=result.name, call_id=result.call_id, turn=result.turn)
                await emit(wait)
            stopped = True
        except Exception:
            break
    failure = thread.exception()
    if failure is None:
        result.result = loggable(thread.result())
    else:
        result.error = f"{type(failure).__name__}: {failure}"
    return stopped


def loggable(value: Any) -> Any:
    """A tool's return value as it is logged and shown to the model."""
    if isinstance(value, str):
        return value
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)
