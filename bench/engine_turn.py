"""engine-turn: the engine's own CPU per turn, with `ScriptedModel` (no network), on a
MemoryStore and on a FileStore; `--profile memory|file` prints where it goes.

Not a ratio against a baseline, so not in `make bench`: a tool to see the floor of a turn
(bench/README.md, "The engine's own turn"). Each run is 20 turns of one agent with one sync
tool (`step`, a 400-byte result), the model answering at once; the CPU of the process over a
run, less what the scripted model itself spent (it deep-copies every request it is sent),
divided by the turns. The stores are interleaved, 5 runs a round, and medians compared.
"""

from __future__ import annotations

import asyncio
import cProfile
import pstats
import shutil
import tempfile
import time
from typing import Any

import harness

from agentor import Agentor, function_tool
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.testing import ScriptedModel

NAME = "engine-turn"
TURNS = 20


@function_tool
def step(n: int) -> str:
    """Do step n.

    Args:
        n: Which step.
    """
    return f"step {n} done: ".ljust(400, "x")


class TimedModel(ScriptedModel):
    """A ScriptedModel that counts the CPU it spends itself (not the engine's)."""

    spent = 0.0

    async def generate(self, messages: Any, tools: Any, on_text: Any = None) -> Any:
        started = time.process_time()
        try:
            return await super().generate(messages, tools, on_text)
        finally:
            TimedModel.spent += time.process_time() - started


def agent_on(store: Any) -> Agentor:
    def reply(messages: list[dict[str, Any]]) -> Any:
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done + 1 >= TURNS:
            return ScriptedModel.text("done")
        return model.calls(("step", {"n": done + 1}))

    model = TimedModel(reply)
    return Agentor("Turns", model=model, tools=[step], store=store, max_turns=TURNS + 1)


async def turn_cpu(kind: str, directory: str, runs: int) -> list[float]:
    """CPU per turn of `runs` runs on a fresh store of `kind`, the model's own CPU taken out."""
    out = []
    for _ in range(runs):
        agent = agent_on(MemoryStore() if kind == "memory" else FileStore(directory))
        TimedModel.spent = 0.0
        started = time.process_time()
        result = await agent.arun("Take the steps.")
        out.append((time.process_time() - started - TimedModel.spent) / TURNS)
        assert result.status == "completed", result.error
    return out


def main() -> None:
    args = harness.parse_args(
        __doc__, profile=(str, "", "memory or file: print a profile of 20 runs on that store")
    )
    rounds, runs = (1, 2) if args.quick else (8, 5)
    tmp = tempfile.mkdtemp(prefix="bench-turn-")
    try:
        got: dict[str, list[float]] = {"memory": [], "file": []}

        async def measure() -> None:
            await turn_cpu("memory", tmp, 2)  # warm: imports, the tool's schema, the caches
            await turn_cpu("file", tmp, 2)
            for i in range(rounds):
                for kind in ("memory", "file") if i % 2 == 0 else ("file", "memory"):
                    got[kind] += await turn_cpu(kind, tmp, runs)

        asyncio.run(measure())
        print(f"{NAME}: {TURNS}-turn runs, ScriptedModel, one sync tool, {harness.machine()}")
        harness.table(
            ["store", "engine CPU per turn", "min..max", "runs"],
            [
                [kind, harness.fmt_s(harness.median(v)), harness.spread(v), len(v)]
                for kind, v in got.items()
            ],
        )
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            asyncio.run(turn_cpu(args.profile, tmp, 20))
            profiler.disable()
            pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    memory, file = harness.median(got["memory"]), harness.median(got["file"])
    harness.result_line(NAME, file / memory, "report", harness.fmt_s(file), harness.fmt_s(memory))


if __name__ == "__main__":
    main()
