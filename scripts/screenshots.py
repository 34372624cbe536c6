"""Write the README's screenshots (SVG) of agentor-tui, from the sample runs.

    python scripts/screenshots.py [RUNS_DIR] [--out screenshots]

The runs are copied to a scratch directory first (a resume appends to a log). The clock is
fixed a few minutes after the newest run started, and the resume is driven by an offline model
that is caught mid-answer, so the pictures come out the same each time.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


import agentor.engine.loop  # noqa: E402
import agentor.experiments.experiment  # noqa: E402
import agentor.experiments.runner  # noqa: E402
import agentor.forking  # noqa: E402
import agentor.session.run  # noqa: E402
from agentor import Agentor, function_tool  # noqa: E402
from agentor.agents import AgentSet  # noqa: E402
from agentor.engine.events import Usage  # noqa: E402
from agentor.engine.models import ModelResponse  # noqa: E402
from agentor.engine.store.file import FileStore  # noqa: E402
from agentor.sources.directory.source import DirectorySource  # noqa: E402
from examples.demo_model import DemoModel, find_cities  # noqa: E402
from tui.app import RunsApp  # noqa: E402

SIZE = (160, 45)


class SteppingTime:
    """The engine's clock during the resume shot: a quarter second per reading."""

    def __init__(self, start: float) -> None:
        self.start = start
        self.ticks = itertools.count()

    def time(self) -> float:
        return self.start + next(self.ticks) * 0.25


class MidAnswerModel:
    """Answers with the weather, streaming it, and stops half way (until the shot is taken)."""

    name = "offline-demo"

    def __init__(self) -> None:
        self.streaming = asyncio.Event()
        self.release = asyncio.Event()

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelResponse:
        text = "It is sunny and 22°C there, with a light breeze from the west."
        if on_text is not None:
            for word in text.split(" ")[:6]:
                on_text(word + " ")
        self.streaming.set()
        await self.release.wait()
        return ModelResponse(text=text, usage=Usage(120, 16, 136))


class HastyModel(DemoModel):
    """The demo model in a hurry: a question about one city it answers from memory, without
    looking the weather up (the experiment's regression); others as the demo model does."""

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelResponse:
        last = messages[-1] if messages else {}
        cities = find_cities(str(last.get("content") or "")) if last.get("role") == "user" else []
        if len(cities) == 1:
            return ModelResponse(
                text=f"It is probably mild in {cities[0]}.", usage=Usage(60, 9, 69)
            )
        return await super().generate(messages, tools, on_text)


@function_tool
def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: The city to look up.
    """
    return f"The weather in {city} is sunny and 22C."


def pick(directory: Path, status: str, min_turns: int = 0) -> tuple[str, str] | None:
    """(run id, agent name) of the newest run with this status and at least `min_turns`."""
    index = DirectorySource(directory)
    index.scan()
    index.fill()
    for row in index.rows():
        s = row.summary
        if row.status == status and s is not None and s.turns >= min_turns:
            return row.run_id, s.agent or "agent"
    return None


async def shoot(
    directory: Path,
    out: Path,
    name: str,
    clock: float,
    keys: Sequence[str] = (),
    run_id: str | None = None,
    agents: Any = None,
    before: Callable[[RunsApp, Any], Any] | None = None,
) -> None:
    app = RunsApp(directory, agents=agents, watch=False, clock=lambda: clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        while app.source.incomplete:
            await pilot.pause(0.05)
        if run_id is not None:
            app.runs_screen.run_list.select(run_id)
            await pilot.pause()
        await pilot.press(*keys)
        if before is not None:
            await before(app, pilot)
        await pilot.pause(0.2)
        (out / f"{name}.svg").write_text(app.export_screenshot(title="agentor-tui"))
        if app.resumer.running:  # a resume shot mid-way: stop it, let it unwind
            app.resumer.stop()
            while app.resumer.running:
                await pilot.pause(0.05)
    print(f"wrote {out / name}.svg")


async def main(source: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        # The scratch directory as home: the title names the runs `~/runs`, as a user's would
        # read, not by a temporary path.
        os.environ["HOME"] = scratch
        runs = Path(scratch) / "runs"
        runs.mkdir()
        for path in source.glob("*.jsonl"):
            shutil.copy(path, runs / path.name)
        index = DirectorySource(runs)
        index.scan()
        starts = [r.summary.started_at for r in index.rows() if r.summary and r.summary.started_at]
        clock = (max(starts) if starts else 0.0) + 300

        await shoot(runs, out, "runs", clock)
        completed = pick(runs, "completed", min_turns=2)
        if completed:
            # The last generation: its request as a conversation.
            await shoot(runs, out, "detail", clock, ["enter", "up", "up"], run_id=completed[0])
        await shoot(runs, out, "help", clock, ["question_mark"])
        waiting = pick(runs, "awaiting_approval")
        if waiting:
            # Into the approvals pane: the gated call, its arguments, the keys that decide it.
            await shoot(runs, out, "approval", clock, ["enter"], run_id=waiting[0])

        weather = [
            r.run_id
            for r in index.rows()
            if r.status == "completed" and r.summary and r.summary.agent == "Weather Agent"
        ]
        if len(weather) >= 2:
            # Two runs side by side: `M` marks one, `M` on the other compares them.
            async def compared(app: RunsApp, pilot: Any) -> None:
                app.runs_screen.run_list.select(weather[1])
                await pilot.press("M")
                for _ in range(200):
                    if type(app.screen).__name__ == "CompareScreen":
                        break
                    await asyncio.sleep(0.05)

            await shoot(runs, out, "compare", clock, ["M"], run_id=weather[0], before=compared)

        crashed = pick(runs, "interrupted")
        if crashed:
            model = MidAnswerModel()
            run_id, name = crashed
            agent = Agentor(
                name, model=model, tools=[get_weather], store=FileStore(runs), max_turns=30
            )
            stepping = SteppingTime(clock - 20)
            agentor.engine.loop.time = stepping  # type: ignore[assignment]
            agentor.session.run.time = stepping  # type: ignore[assignment]

            async def resume(app: RunsApp, pilot: Any) -> None:
                await asyncio.wait_for(model.streaming.wait(), 10)

            await shoot(
                runs,
                out,
                "resume",
                clock,
                ["r"],
                run_id=run_id,
                agents=AgentSet([agent]),  # named as the run's agent: it may resume it
                before=resume,
            )

        # Last: its candidates are runs of the scratch directory, which the shots above
        # must not show.
        await experiment_shot(runs, out, clock, source)


async def experiment_shot(runs: Path, out: Path, clock: float, source: Path) -> None:
    """The pairs of an experiment over the Weather Agent's ended samples: a hasty model with
    a one-sentence prompt (Lisbon's answer regressed; the failed and max_turns runs now
    complete), on a clock that steps as the resume shot's does."""
    path = source / "manifest.json"
    samples = json.loads(path.read_text()) if path.exists() else {}
    manifest = {name: spec["run_id"] for name, spec in samples.items()}
    names = ("completed", "parallel_tools", "max_turns", "failed")
    baselines = [manifest[n] for n in names if n in manifest]
    if not baselines:
        return
    stepping = SteppingTime(clock - 60)
    modules = (agentor.engine.loop, agentor.session.run, agentor.forking)
    for module in (*modules, agentor.experiments.experiment, agentor.experiments.runner):
        module.time = stepping  # type: ignore[attr-defined]
    agent = Agentor(
        "Weather Agent",
        model=HastyModel("offline-demo-v2", word_delay=0),
        instructions="You are a weather assistant. Answer in one sentence.",
        tools=[get_weather],
        store=FileStore(runs),
        max_turns=10,
    )
    await agent.aexperiment(
        baselines, name="hasty prompt", scorers=["same_tools", "output_contains:°C"], concurrency=1
    )
    await shoot(runs, out, "experiment", clock, ["E", "enter"], before=_pairs_shown)


async def _pairs_shown(app: RunsApp, pilot: Any) -> None:
    for _ in range(200):
        if type(app.screen).__name__ == "PairsScreen" and getattr(app.screen, "experiment", None):
            return
        await asyncio.sleep(0.05)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="?", type=Path, default=ROOT / "runs")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args()
    if not any(args.runs.glob("*.jsonl")):
        sys.exit(f"screenshots: no run logs in {args.runs} (make samples writes them)")
    asyncio.run(main(args.runs, args.out))
