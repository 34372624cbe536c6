"""Write screenshots/collected.svg: runs of three other frameworks (pydantic-ai, the OpenAI
Agents SDK, LangGraph), imported from their OpenTelemetry spans, in agentor-tui.

    python scripts/collected_screenshot.py [--out screenshots]

The spans are examples/otlp/three-frameworks.jsonl (OTLP JSON lines, as each framework's own
instrumentation exported them against a local model); the clock is fixed a few minutes after
the newest run started, so the picture comes out the same each time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentor.cli import main as agentor  # noqa: E402
from agentor.sources.directory.source import DirectorySource  # noqa: E402
from tui.app import RunsApp  # noqa: E402

SPANS = ROOT / "examples" / "otlp" / "three-frameworks.jsonl"
SIZE = (160, 45)


async def shoot(runs: Path, out: Path) -> None:
    index = DirectorySource(runs)
    index.scan()
    rows = list(index.rows())
    clock = max(r.summary.started_at for r in rows if r.summary and r.summary.started_at) + 180
    pydantic = next(r.run_id for r in rows if r.summary and r.summary.agent == "weather"
                    and "Lisbon" in (r.summary.first_prompt or ""))  # fmt: skip
    app = RunsApp(runs, watch=False, clock=lambda: clock)
    async with app.run_test(size=SIZE) as pilot:
        while app.source.incomplete:
            await pilot.pause(0.05)
        app.runs_screen.run_list.select(pydantic)
        await pilot.pause()
        await pilot.press("enter", "up")
        await pilot.pause(0.2)
        (out / "collected.svg").write_text(app.export_screenshot(title="agentor-tui"))
    print(f"wrote {out / 'collected.svg'}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HOME"] = scratch  # the title names the runs ~/runs
        runs = Path(scratch) / "runs"
        assert agentor(["import", str(SPANS), "--store", str(runs)]) == 0
        asyncio.run(shoot(runs, args.out))


if __name__ == "__main__":
    main()
