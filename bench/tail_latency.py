"""tail-latency: events appended to a live run appear in the app's timeline how fast?

The app (`RunsApp(dir, watch=True)` under `run_test`) has the live run open (it is the newest,
so it opens at start). Another process holds the run's lock, as a running agent does, and
appends events through FileStore at random gaps (20-80 ms), printing when each append
returned (fsync done). The latency of an event is from there until the timeline first draws
its row. Both sides read `time.monotonic()`, which is one clock for the whole machine.

No baseline: the goal is absolute (p50 <= 50 ms, p99 <= 150 ms). The ratio printed is the
larger of p50 / 50 ms and p99 / 150 ms, so <= 1 meets both.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import harness
import synthetic

NAME = "tail-latency"
GOAL_P50 = 0.050
GOAL_P99 = 0.150

WRITER = r"""
import json, random, sys, time
from agentor.engine.events import Event
from agentor.engine.store.file import FileStore

directory, run_id, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = FileStore(directory)
rng = random.Random(5)
with store.lock(run_id):
    print("ready", flush=True)
    sys.stdin.readline()
    for k in range(count):
        time.sleep(rng.uniform(0.02, 0.08))
        turn = 100 + k // 2
        call_id = f"call_live{k // 2:06d}"
        if k % 2 == 0:
            event = Event("tool_call", name="get_weather", args={"city": "Oslo", "day": turn},
                          call_id=call_id, turn=turn, ts=time.time())
        else:
            event = Event("tool_result", name="get_weather", args={"city": "Oslo", "day": turn},
                          call_id=call_id, turn=turn, result=f"Day {turn}: sunny, 22C.",
                          ts=time.time())
        store.append(run_id, event)
        print(json.dumps({"k": k, "t": time.monotonic()}), flush=True)
"""


async def measure_app(
    source: Callable[[], object], writer_argv: list[str], live_id: str, count: int, timeout: float
) -> list[tuple[float, float]]:
    """(written -> drawn, written -> read by the timeline) per event; inf if never.

    `source()` makes what the app shows (a directory, a RunSource); `writer_argv` is the
    writer's code and arguments: it prints "ready" holding the run, waits for a line on its
    stdin, then appends `count` events, printing `{"k": k, "t": monotonic}` after each."""
    from tui.app import RunsApp
    from tui.widgets.timeline import Timeline

    drawn: dict[int, float] = {}
    original = Timeline.render_row
    # Where the time goes, when the timeline reads new lines through `grow()` (a widget
    # detail, so only if it is there): written -> read by the timeline -> drawn.
    grown: dict[int, float] = {}
    original_grow = getattr(Timeline, "grow", None)

    def render_row(self: Timeline, index: int, width: int):  # type: ignore[no-untyped-def]
        if self.run_id == live_id and index not in drawn:
            drawn[index] = time.monotonic()
        return original(self, index, width)

    def grow(self: Timeline) -> int:
        before = len(self.run_log) if self.run_log is not None else 0
        added = original_grow(self)  # type: ignore[misc]
        if self.run_id == live_id and self.run_log is not None:
            t = time.monotonic()
            for i in range(before, len(self.run_log)):
                grown.setdefault(i, t)
        return added

    writer = subprocess.Popen(
        [sys.executable, "-c", *writer_argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(harness.ROOT)},
    )
    Timeline.render_row = render_row  # type: ignore[method-assign]
    if original_grow is not None:
        Timeline.grow = grow  # type: ignore[method-assign]
    try:
        assert writer.stdout is not None and writer.stdin is not None
        ready = await asyncio.to_thread(writer.stdout.readline)
        assert ready.strip() == "ready", ready
        app = RunsApp(source(), watch=True)  # type: ignore[arg-type]
        async with app.run_test(size=(160, 45)) as pilot:
            deadline = time.monotonic() + timeout
            # The live run open, and the watcher (a worker started at mount) armed.
            while (
                app.runs_screen.timeline.run_id != live_id
                or app.runs_screen.timeline.run_log is None
                or not app.watcher.armed
            ):
                if time.monotonic() > deadline:
                    raise TimeoutError("the live run never opened")
                await asyncio.sleep(0.01)
            first_new = len(app.runs_screen.timeline.run_log)
            writer.stdin.write("go\n")
            writer.stdin.flush()
            deadline = time.monotonic() + timeout + count * 0.08
            while len([i for i in drawn if i >= first_new]) < count:
                if time.monotonic() > deadline or writer.poll() not in (None, 0):
                    break
                await asyncio.sleep(0.005)
            await pilot.pause()
        out, _ = await asyncio.to_thread(writer.communicate)
    finally:
        Timeline.render_row = original  # type: ignore[method-assign]
        if original_grow is not None:
            Timeline.grow = original_grow  # type: ignore[method-assign]
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    written = {d["k"]: d["t"] for d in map(json.loads, out.splitlines())}
    assert len(written) == count, f"the writer wrote {len(written)} of {count} events"
    inf = float("inf")
    return [
        (
            max(0.0, drawn[first_new + k] - written[k]) if first_new + k in drawn else inf,
            max(0.0, grown[first_new + k] - written[k]) if first_new + k in grown else inf,
        )
        for k in range(count)
    ]


def main() -> None:
    args = harness.parse_args(__doc__)
    count = 6 if args.quick else 150
    tmp = Path(tempfile.mkdtemp(prefix="bench-tail-"))
    try:
        now = time.time()
        for i in range(20):  # older runs around it
            run_id = synthetic.run_id_for(i)
            events = synthetic.run_events(run_id, 1 + i % 4, now - 3600 + 60 * i, agent=i)
            synthetic.write_run(tmp, run_id, events)
        live_id = "live" + synthetic.run_id_for(99)[:12]
        events = synthetic.run_events(live_id, 99, now - 30, ending="interrupted", step=0.1)
        synthetic.write_run(tmp, live_id, events)
        writer = [WRITER, str(tmp), live_id, str(count)]
        pairs = asyncio.run(measure_app(lambda: tmp, writer, live_id, count, timeout=20.0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(NAME, f"{count} events appended by another process", pairs)


def report(name: str, what: str, pairs: list[tuple[float, float]]) -> None:
    """The table and the result line of a tail bench."""
    count = len(pairs)
    latencies = [drawn for drawn, _ in pairs]
    read = [r for _, r in pairs]
    seen = [x for x in latencies if x != float("inf")]
    p50 = harness.percentile(latencies, 50)
    p99 = harness.percentile(latencies, 99)
    print(f"{name}: {what}, {harness.machine()}")
    rows = [["written -> drawn", latencies], ["written -> read (Timeline.grow)", read]]
    harness.table(
        ["latency", "seen", "p50", "p90", "p99", "max"],
        [
            [
                label,
                f"{sum(1 for x in values if x != float('inf'))}/{count}",
                *(harness.fmt_s(harness.percentile(values, p)) for p in (50, 90, 99, 100)),
            ]
            for label, values in rows
            if any(x != float("inf") for x in values)
        ],
    )
    print(f"goal: p50 <= {GOAL_P50 * 1e3:.0f} ms, p99 <= {GOAL_P99 * 1e3:.0f} ms (drawn)")
    harness.result_line(
        name,
        max(p50 / GOAL_P50, p99 / GOAL_P99),
        f"p50<={GOAL_P50 * 1e3:.0f}ms,p99<={GOAL_P99 * 1e3:.0f}ms",
        f"p50:{harness.fmt_s(p50)},p99:{harness.fmt_s(p99)},seen:{len(seen)}/{count}",
        "none",
    )


if __name__ == "__main__":
    main()
