"""compare-view: `M` on a fork of a 1,000-turn run, until the compare view shows both runs.

The parent goes through the real engine (`Agentor.arun`, FileStore, an in-process model asking
for one tool call a turn); the fork is `agent.fork` at the tool result of turn 998 (the first
divergence, near the end). Ours: in `RunsApp` (`run_test`), the fork selected, from `M` to the
compare view on screen, its cursor on the first divergence (both runs read whole in a worker
thread, requests rebuilt, compared, rows made and drawn); and the longest the screen's loop
waited meanwhile (a 10 ms interval timer's largest gap). The baseline is what `agentor diff`
does before printing: both logs loaded (`holding.load_lines`) and `compare()`d. Ratio: time
ours / baseline.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import harness

from agentor import Agentor, function_tool
from agentor.engine.events import TOOL_RESULT, Event
from agentor.engine.fork.compare import compare
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.testing import ScriptedModel, tool_call

NAME = "compare-view"
GOAL = 2.0


def stepping_model(turns: int) -> ScriptedModel:
    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done + 1 >= turns:
            return ModelResponse(text="All steps done.")
        return ModelResponse(calls=[tool_call("step", {"n": done}, f"call_{done}")])

    return ScriptedModel(reply, name="gpt-4o-mini")


@function_tool
def step(n: int) -> str:
    """Take one step.

    Args:
        n: The step's number.
    """
    return f"step {n} done: " + "x" * 200


def make_runs(directory: Path, turns: int) -> tuple[str, str]:
    store = FileStore(directory)
    agent = Agentor("Stepper", model=stepping_model(turns), tools=[step], store=store,
                    max_turns=turns + 2)  # fmt: skip
    parent = asyncio.run(agent.arun("Take every step.", run_id="parent")).run_id
    results = [n for n, e in enumerate(store.load(parent), 1) if e.type == TOOL_RESULT]
    fork = agent.fork(parent, at=results[-2], result="step failed", fork_id="fork")
    return parent, fork.run_id


def baseline(store: FileStore, ids: tuple[str, str]) -> float:
    began = time.perf_counter()
    a, b = ([e for e in load_lines(store, i) if isinstance(e, Event)] for i in ids)
    found = compare(a, b)
    took = time.perf_counter() - began
    assert found.first is not None
    return took


def ours(directory: Path, stalls: list[float]) -> float:
    from tui.app import RunsApp
    from tui.widgets.compare_screen import CompareScreen

    app = RunsApp(directory, watch=False)
    took = 0.0

    async def run() -> None:
        nonlocal took
        async with app.run_test(size=(160, 45)) as pilot:
            assert app.runs_screen.run_list.select("fork")
            await pilot.pause()
            ticks: list[float] = []
            timer = app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
            began = time.perf_counter()
            await pilot.press("M")
            while not isinstance(app.screen, CompareScreen):
                await asyncio.sleep(0.001)
            screen = app.screen
            while not screen.is_mounted or screen.compare_list.cursor != screen.first_row:
                await asyncio.sleep(0.001)
            await pilot.pause()  # drawn
            took = time.perf_counter() - began
            timer.stop()
            gaps = [b - a for a, b in itertools.pairwise(ticks)]
            stalls.append(max(gaps, default=0.0))

    asyncio.run(run())
    return took


def main() -> None:
    args = harness.parse_args(__doc__)
    turns, reps = (20, 1) if args.quick else (1000, 5)
    tmp = Path(tempfile.mkdtemp(prefix="bench-compare-"))
    try:
        ids = make_runs(tmp, turns)
        store = FileStore(tmp)
        lines = sum(len(store.path(i).read_bytes().splitlines()) for i in ids)
        stalls: list[float] = []
        found = harness.interleaved(
            [("ours", lambda: ours(tmp, stalls)), ("baseline", lambda: baseline(store, ids))],
            reps,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    o, b = harness.median(found["ours"]), harness.median(found["baseline"])
    print(f"{harness.machine()} turns={turns} lines={lines} reps={reps}")
    harness.table(
        ["case", "median", "spread"],
        [
            ["M to the compare view on screen", harness.fmt_s(o), harness.spread(found["ours"])],
            ["load_lines x2 + compare()", harness.fmt_s(b), harness.spread(found["baseline"])],
            ["longest wait of the screen's loop", harness.fmt_s(max(stalls)), ""],
        ],
    )
    harness.result_line(NAME, o / b, f"<={GOAL}", harness.fmt_s(o), harness.fmt_s(b))


if __name__ == "__main__":
    main()
