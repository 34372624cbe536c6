"""big-run: open a 100,000-event run in the app until its last event is on screen; peak RSS.

The run (about 40 MB; 4 parallel tool calls a turn, compact generations, as FileStore writes
them) is the only one in its directory. Each measurement is a fresh process:
`RunsApp(dir, watch=False)` under `run_test`, which opens the newest run at start. Timed from
the app opening the run (`RunsApp.open_run`) to the timeline drawing the run's last line; the
process then waits for the app's lazy work on the list (`DirectorySource.fill`) to finish and
reports its peak RSS (VmHWM). A process that opens a tiny run the same way gives the
app's own footprint; the run's cost is the difference.

Goals: open <= 0.5 s; peak RSS <= 2x the file's size. The ratio printed is peak RSS / file
size (the whole process, the strict reading); the table also shows what the run adds.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
import synthetic
from big_log import write_big_run

from agentor.engine.events import (
    RUN_END,
)

NAME = "big-run"
GOAL_OPEN_S = 0.5
GOAL_RSS = 2.0


# -- the measured process ---------------------------------------------------------------------


def child(directory: str, lines: int, timeout: float = 120.0) -> None:
    """Open the directory's one run in the app; print timings and peak RSS as JSON."""
    import asyncio

    t_process = time.monotonic()
    from tui.app import RunsApp
    from tui.widgets.timeline import Timeline

    marks: dict[str, float] = {"imported": time.monotonic()}
    last = lines - 1
    original_render = Timeline.render_row
    original_open = getattr(RunsApp, "open_run", None)

    def render_row(self: Timeline, index: int, width: int):  # type: ignore[no-untyped-def]
        if index == last and "drawn" not in marks:
            marks["drawn"] = time.monotonic()
        return original_render(self, index, width)

    def open_run(self: RunsApp, run_id: str | None) -> None:
        if run_id is not None:
            marks.setdefault("open", time.monotonic())
        original_open(self, run_id)  # type: ignore[misc]

    Timeline.render_row = render_row  # type: ignore[method-assign]
    if original_open is not None:
        RunsApp.open_run = open_run  # type: ignore[method-assign]

    async def go() -> None:
        marks["app"] = time.monotonic()
        app = RunsApp(Path(directory), watch=False)
        async with app.run_test(size=(160, 45)) as pilot:
            deadline = time.monotonic() + timeout
            while "drawn" not in marks:
                if time.monotonic() > deadline:
                    raise TimeoutError("the last event never showed")
                await asyncio.sleep(0.002)
            await pilot.pause()
            index = getattr(app, "index", None)
            while index is not None and getattr(index, "incomplete", 0):
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.02)
            marks["settled"] = time.monotonic()
            # The fill worker redraws the list once more after its last batch: let it, so
            # the app is not torn down under it.
            await asyncio.sleep(0.1)
            await pilot.pause()
            await search(app, marks, deadline)

    async def search(app: RunsApp, marks: dict[str, float], deadline: float) -> None:
        """`/` in the timeline: a search of every line (a worker thread), and the longest
        the screen's loop was held meanwhile (gaps between 5 ms ticks)."""
        from tui.widgets.timeline_search import SEARCH

        timeline, gaps, last = app.runs_screen.timeline, [0.0], [time.monotonic()]

        def tick() -> None:
            now = time.monotonic()
            gaps.append(now - last[0])
            last[0] = now

        timer = app.set_interval(0.005, tick)
        started = time.monotonic()
        timeline.search("Lima")  # a city of every turn: a third of the lines match
        while not timeline.finder.complete(SEARCH, lines) and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        marks["search_s"] = time.monotonic() - started
        timer.stop()
        marks["loop_gap_s"] = max(gaps)

    asyncio.run(go())
    marks.setdefault("open", marks["app"])
    print(
        json.dumps(
            {
                "open_s": marks["drawn"] - marks["open"],
                "start_s": marks["drawn"] - marks["app"],
                "import_s": marks["imported"] - t_process,
                "settle_s": marks["settled"] - marks["drawn"],
                "search_s": marks["search_s"],
                "loop_gap_s": marks["loop_gap_s"],
                "rss": peak_rss(),
            }
        ),
        flush=True,
    )


def peak_rss() -> int:
    """This process's peak RSS in bytes.

    VmHWM, not `ru_maxrss`: Linux carries the larger of the parent's RSS at fork over exec
    into `ru_maxrss`, so a child of a big parent would report the parent's size.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run_child(directory: Path, lines: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(directory), "--lines", str(lines)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(harness.ROOT)},
    )
    if out.returncode != 0:
        raise RuntimeError(f"child failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def data_layer(path: Path, lines: int) -> float:
    from agentor.sources.directory.runlog import RunLog

    t = time.perf_counter()
    log = RunLog(path)
    item = log.item(len(log) - 1)
    elapsed = time.perf_counter() - t
    assert len(log) == lines and getattr(item, "type", None) == RUN_END, (len(log), item)
    log.close()
    return elapsed


def main() -> None:
    args = harness.parse_args(
        __doc__,
        child=(str, None, "(internal) measure one app process on this directory"),
        lines=(int, 0, "(internal) lines of the run in --child"),
    )
    if args.child:
        child(args.child, args.lines)
        return
    wanted, reps = (2_000, 1) if args.quick else (100_000, 3)
    tmp = Path(tempfile.mkdtemp(prefix="bench-bigrun-"))
    try:
        big_dir, small_dir = tmp / "big", tmp / "small"
        big_dir.mkdir()
        small_dir.mkdir()
        run_id = synthetic.run_id_for(7)
        big_path = big_dir / f"{run_id}.jsonl"
        lines = write_big_run(big_path, wanted, time.time() - 86400)
        size = big_path.stat().st_size
        small_lines = write_big_run(small_dir / f"{run_id}.jsonl", 10, time.time())
        if args.quick:  # the shortcut encoder against the engine's own reader
            from agentor.engine.store.file import FileStore

            events = FileStore(big_dir).load(run_id)
            assert len(events) == lines and events[-1].type == RUN_END

        results: dict[str, list[dict[str, float]]] = {"big": [], "small": []}

        def measure(kind: str, directory: Path, n: int) -> float:
            r = run_child(directory, n)
            results[kind].append(r)
            return r["open_s"]

        harness.interleaved(
            [
                ("big", lambda: measure("big", big_dir, lines)),
                ("small", lambda: measure("small", small_dir, small_lines)),
            ],
            reps,
            warmup=0,
        )
        data = harness.interleaved([("data", lambda: data_layer(big_path, lines))], reps, warmup=0)[
            "data"
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def med(kind: str, key: str) -> float:
        return harness.median([r[key] for r in results[kind]])

    open_s = med("big", "open_s")
    rss, rss_small = med("big", "rss"), med("small", "rss")
    print(
        f"{NAME}: one run of {lines} lines, {harness.fmt_bytes(size)}, {reps} processes each, "
        f"{harness.machine()}"
    )
    harness.table(
        ["measure", "big run", f"tiny run ({small_lines} lines)", "goal"],
        [
            [
                "open -> last event drawn",
                harness.fmt_s(open_s),
                harness.fmt_s(med("small", "open_s")),
                f"<={GOAL_OPEN_S}s",
            ],
            [
                "app start -> last event drawn",
                harness.fmt_s(med("big", "start_s")),
                harness.fmt_s(med("small", "start_s")),
                "",
            ],
            ["RunLog(path) + last item", harness.fmt_s(harness.median(data)), "", ""],
            [
                "/ search of every line (worker thread)",
                harness.fmt_s(med("big", "search_s")),
                harness.fmt_s(med("small", "search_s")),
                "",
            ],
            [
                "  longest the screen waited meanwhile",
                harness.fmt_s(med("big", "loop_gap_s")),
                harness.fmt_s(med("small", "loop_gap_s")),
                "",
            ],
            [
                "then list filled (DirectorySource.fill)",
                harness.fmt_s(med("big", "settle_s")),
                harness.fmt_s(med("small", "settle_s")),
                "",
            ],
            [
                "peak RSS (process)",
                harness.fmt_bytes(rss),
                harness.fmt_bytes(rss_small),
                f"<={GOAL_RSS:g}x file",
            ],
            ["peak RSS / file size", f"{rss / size:.2f}x", "", ""],
            ["what the run adds / file size", f"{(rss - rss_small) / size:.2f}x", "", ""],
        ],
    )
    harness.result_line(
        NAME,
        rss / size,
        f"rss<={GOAL_RSS:g}x,open<={GOAL_OPEN_S}s",
        f"open:{harness.fmt_s(open_s)},rss:{harness.fmt_bytes(rss)},"
        f"run_adds:{harness.fmt_bytes(rss - rss_small)}",
        f"file:{harness.fmt_bytes(size)}",
    )


if __name__ == "__main__":
    main()
