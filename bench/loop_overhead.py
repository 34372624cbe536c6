"""loop-overhead: a 50-turn run through the engine vs the same 50 requests through openai alone.

Both talk to tests/openai_server.FakeOpenAI in this process. Ours is `Agentor.arun` with a
FileStore (every step fsynced, a tool run each turn); the baseline replays the very request
bodies the engine sent (recorded from a warm-up run) through `openai.AsyncOpenAI`'s `post`, as
the engine sends them (their JSON, agentor.engine.chat_request), awaiting each in turn. The ratio
is ours / baseline wall time: what the engine adds per run. Shown for information: the same
bodies through `chat.completions.create`, whose typed transform the engine no longer pays.

Everything runs on one event loop (as in a long-lived worker), so each side keeps one openai
client warm. Shown for information: the engine with a MemoryStore (no disk), whose difference
from ours is what fsyncing every step costs. The fake server answers at once, so a turn here
is mostly the openai SDK preparing the request; with a real model a turn takes seconds and
the engine's share is far smaller.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

from agentor import Agentor, function_tool
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from tests.openai_server import FakeOpenAI

NAME = "loop-overhead"
GOAL = 1.15


@function_tool
def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: The city to look up.
    """
    return f"The weather in {city} is sunny and 22C."


def script(turns: int):
    """A tool call per request until request `turns`, which is answered with text."""

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in request.get("messages", []) if m.get("role") == "assistant")
        if done + 1 >= turns:
            return {"text": "Done: it is sunny everywhere."}
        return {"calls": [["get_weather", {"city": f"City{done}"}]]}

    return reply


def main() -> None:
    args = harness.parse_args(__doc__)
    turns, reps = (5, 2) if args.quick else (50, 21)
    tmp = Path(tempfile.mkdtemp(prefix="bench-loop-"))
    srv = FakeOpenAI(script(turns)).start()
    # One event loop for every run, as in a long-lived worker: the engine keeps one openai
    # client per loop, and so does the baseline.
    runner = asyncio.Runner()
    try:
        agent = Agentor(
            "Bench Agent",
            model="gpt-4o-mini",
            instructions="You are a helpful weather assistant.",
            tools=[get_weather],
            store=FileStore(tmp),
            max_turns=turns + 1,
            base_url=srv.url,
            api_key="sk-test",
            max_retries=0,
        )
        prompt = "What is the weather in a few cities?"

        # One run to record the requests (and import openai), outside any timing.
        first = runner.run(agent.arun(prompt))
        assert first.status == "completed", first
        bodies = list(srv.requests)
        assert len(bodies) == turns, len(bodies)

        import openai
        import orjson
        from openai.types.chat import ChatCompletion

        client = openai.AsyncOpenAI(base_url=srv.url, api_key="sk-test", max_retries=0)

        def timed_run(agent: Agentor) -> float:
            t = time.perf_counter()
            result = runner.run(agent.arun(prompt))
            elapsed = time.perf_counter() - t
            assert result.status == "completed"
            return elapsed

        # For information: the engine without a disk (what fsync costs is the difference).
        in_memory = Agentor(
            "Bench Agent",
            model=agent.model,
            instructions=agent.instructions,
            tools=agent.tools,
            store=MemoryStore(),
            max_turns=turns + 1,
        )

        async def replay() -> None:
            for body in bodies:
                await client.post(
                    "/chat/completions",
                    content=orjson.dumps(body),
                    cast_to=ChatCompletion,
                    options={"security": {"bearer_auth": True}},
                )

        async def replay_create() -> None:
            for body in bodies:
                await client.chat.completions.create(**body)

        def baseline() -> float:
            t = time.perf_counter()
            runner.run(replay())
            return time.perf_counter() - t

        def through_create() -> float:
            t = time.perf_counter()
            runner.run(replay_create())
            return time.perf_counter() - t

        times = harness.interleaved(
            [
                ("ours", lambda: timed_run(agent)),
                ("baseline", baseline),
                ("memory", lambda: timed_run(in_memory)),
                ("create", through_create),
            ],
            reps,
        )
        runner.run(client.close())
        runs = len(list(tmp.iterdir()))
    finally:
        runner.close()
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    ours_s, base_s = harness.median(times["ours"]), harness.median(times["baseline"])
    print(f"{NAME}: {turns}-turn run x {reps} interleaved reps ({runs} logs), {harness.machine()}")
    harness.table(
        ["case", "per run", "per turn", "min..max", "vs baseline"],
        [
            [
                "Agentor.arun + FileStore",
                harness.fmt_s(ours_s),
                harness.fmt_s(ours_s / turns),
                harness.spread(times["ours"]),
                f"{ours_s / base_s:.3f}",
            ],
            [
                "Agentor.arun + MemoryStore",
                harness.fmt_s(harness.median(times["memory"])),
                harness.fmt_s(harness.median(times["memory"]) / turns),
                harness.spread(times["memory"]),
                f"{harness.median(times['memory']) / base_s:.3f}",
            ],
            [
                "the same bodies through chat.completions.create",
                harness.fmt_s(harness.median(times["create"])),
                harness.fmt_s(harness.median(times["create"]) / turns),
                harness.spread(times["create"]),
                f"{harness.median(times['create']) / base_s:.3f}",
            ],
            [
                "openai client alone (post)",
                harness.fmt_s(base_s),
                harness.fmt_s(base_s / turns),
                harness.spread(times["baseline"]),
                "1.000",
            ],
        ],
    )
    print(f"engine adds {harness.fmt_s((ours_s - base_s) / turns)} per turn")
    harness.result_line(
        NAME, ours_s / base_s, f"<={GOAL}", harness.fmt_s(ours_s), harness.fmt_s(base_s)
    )


if __name__ == "__main__":
    main()
