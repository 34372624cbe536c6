"""index: listing 10,000 run files, by the TUI's data layer and by the app, vs plain Python.

The directory holds runs of every kind (completed, failed, interrupted; 1 in 100 long, well
over 64 KiB), written in the engine's format (bench/synthetic.py). Measured, interleaved:

- data layer: `DirectorySource(dir).scan()` then `.rows()` (every file has its row: status, agent,
  model, start, prompt);
- app: `RunsApp(dir, watch=False)` under `run_test`, from construction until the run list
  holds every run and has drawn a row of the complete list;
- baseline: plain Python reading the first and the last line of every file (`readline`, then
  the last block, growing until it holds a whole line) and `json.loads` of both.

The ratio is data layer / baseline (goal 3x); the app must also finish within 1 s.
`DirectorySource.fill()` (reading every file whole, done lazily by the app) is shown for
information.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import harness
import synthetic

NAME = "index"
GOAL_RATIO = 3.0
GOAL_APP_S = 1.0
TAIL_BLOCK = 4096


def first_and_last_lines(directory: Path) -> int:
    """The baseline: first and last line of every log, decoded."""
    n = 0
    with os.scandir(directory) as it:
        for entry in it:
            if not entry.name.endswith(".jsonl"):
                continue
            with open(entry.path, "rb") as f:
                first = f.readline()
                size = os.fstat(f.fileno()).st_size
                block = TAIL_BLOCK
                while True:
                    start = max(0, size - block)
                    f.seek(start)
                    tail = f.read()
                    cut = tail.rfind(b"\n", 0, len(tail) - 1)
                    if cut >= 0 or start == 0:
                        break
                    block *= 4
            json.loads(first)
            json.loads(tail[cut + 1 :])
            n += 1
    return n


def data_layer(directory: Path, count: int) -> float:
    from tui.data.directory import DirectorySource

    t = time.perf_counter()
    index = DirectorySource(directory)
    index.scan()
    rows = index.rows()
    elapsed = time.perf_counter() - t
    assert len(rows) == count, (len(rows), count)
    assert index.error is None, index.error
    return elapsed


def app_listing(directory: Path, count: int, timeout: float = 60.0) -> float:
    """Seconds from building the app to a drawn row of the complete run list."""
    from tui.app import RunsApp
    from tui.widgets.run_list import RunList

    drawn: list[float] = []
    original = RunList.render_row

    def render_row(self: RunList, index: int, width: int):  # type: ignore[no-untyped-def]
        if not drawn and self.row_count() == count:
            drawn.append(time.perf_counter())
        return original(self, index, width)

    async def go() -> float:
        t = time.perf_counter()
        app = RunsApp(directory, watch=False)
        async with app.run_test(size=(160, 45)) as pilot:
            deadline = time.perf_counter() + timeout
            while not drawn:
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"the list never showed {count} runs")
                await asyncio.sleep(0.002)
            elapsed = drawn[0] - t
            await pilot.pause()
        return elapsed

    RunList.render_row = render_row  # type: ignore[method-assign]
    try:
        return asyncio.run(go())
    finally:
        RunList.render_row = original  # type: ignore[method-assign]


def baseline(directory: Path, count: int) -> float:
    t = time.perf_counter()
    n = first_and_last_lines(directory)
    elapsed = time.perf_counter() - t
    assert n == count, (n, count)
    return elapsed


def main() -> None:
    args = harness.parse_args(__doc__)
    # Over 300 files the data layer switches to quick rows, so even --quick takes that path.
    count, reps, app_reps = (400, 2, 1) if args.quick else (10_000, 7, 3)
    tmp = Path(tempfile.mkdtemp(prefix="bench-index-"))
    try:
        t = time.perf_counter()
        size = synthetic.directory_of_runs(tmp, count, time.time())
        made = time.perf_counter() - t
        times = harness.interleaved(
            [
                ("data", lambda: data_layer(tmp, count)),
                ("baseline", lambda: baseline(tmp, count)),
            ],
            reps,
            warmup=0 if args.quick else 1,
        )
        # The app is slower to start; fewer repetitions, each next to a baseline run.
        app_times = harness.interleaved(
            [("app", lambda: app_listing(tmp, count)), ("baseline", lambda: baseline(tmp, count))],
            app_reps,
            warmup=0 if args.quick else 1,
        )
        times["app"] = app_times["app"]
        times["baseline"] += app_times["baseline"]

        from tui.data.directory import DirectorySource

        index = DirectorySource(tmp)
        index.scan()
        t = time.perf_counter()
        while index.fill(256):
            pass
        fill_s = time.perf_counter() - t
        assert index.incomplete == 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = {k: harness.median(v) for k, v in times.items()}
    base = med["baseline"]
    print(
        f"{NAME}: {count} run files, {harness.fmt_bytes(size)} (made in {made:.1f}s), "
        f"{harness.machine()}"
    )
    harness.table(
        ["case", "median", "per file", "min..max", "vs baseline", "goal"],
        [
            [
                "DirectorySource.scan + rows",
                harness.fmt_s(med["data"]),
                harness.fmt_s(med["data"] / count),
                harness.spread(times["data"]),
                f"{med['data'] / base:.2f}x",
                f"<={GOAL_RATIO:g}x",
            ],
            [
                "RunsApp run_test, list drawn",
                harness.fmt_s(med["app"]),
                harness.fmt_s(med["app"] / count),
                harness.spread(times["app"]),
                f"{med['app'] / base:.2f}x",
                f"<={GOAL_APP_S:g}s",
            ],
            [
                "first+last line, json (baseline)",
                harness.fmt_s(base),
                harness.fmt_s(base / count),
                harness.spread(times["baseline"]),
                "1.00x",
                "",
            ],
            [
                "DirectorySource.fill, every file whole",
                harness.fmt_s(fill_s),
                harness.fmt_s(fill_s / count),
                "(once)",
                f"{fill_s / base:.2f}x",
                "lazy",
            ],
        ],
    )
    harness.result_line(
        NAME,
        med["data"] / base,
        f"<={GOAL_RATIO:g}x,app<={GOAL_APP_S:g}s",
        f"data:{harness.fmt_s(med['data'])},app:{harness.fmt_s(med['app'])}",
        harness.fmt_s(base),
    )


if __name__ == "__main__":
    main()
