"""`Agentor.arun(prompts)`: a batch, each prompt its own run, as upstream Agentor runs one.

At most `limit` runs at once (all at once when `limit` is 0 or less); the results in the order
of the prompts, with an exception in place of a prompt whose run failed or raised (upstream's
`gather(return_exceptions=True)`): a failed run is a `RunFailedError` holding its `RunResult`,
so its run id is at hand to resume it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agentor.engine.statuses import FAILED
from agentor.errors import RunFailedError
from agentor.result import RunResult


def is_batch(input: object) -> bool:
    """A non-empty list or tuple of prompts (strings); a list of message dicts is one run."""
    return (
        isinstance(input, list | tuple)
        and bool(input)
        and all(isinstance(item, str) for item in input)
    )


async def run_input(
    run_one: Callable[[Any, str | None], Awaitable[RunResult]],
    input: Any,
    limit: int,
    run_id: str | None,
) -> Any:
    """`run_one(input, run_id)`, or the batch `input` is (a list of prompts)."""
    if not is_batch(input):
        return await run_one(input, run_id)
    if run_id is not None:
        raise ValueError("run_id= names one run, not a batch")
    return await run_batch(lambda prompt: run_one(prompt, None), list(input), limit)


async def run_batch(
    run_one: Callable[[str], Awaitable[RunResult]], prompts: Sequence[str], limit: int
) -> list[RunResult | BaseException]:
    gate = asyncio.Semaphore(limit) if limit > 0 else None

    async def one(prompt: str) -> RunResult:
        if gate is None:
            result = await run_one(prompt)
        else:
            async with gate:
                result = await run_one(prompt)
        if result.status == FAILED:
            raise RunFailedError(result)
        return result

    return await asyncio.gather(*(one(p) for p in prompts), return_exceptions=True)
