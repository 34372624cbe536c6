"""index: listing a directory of run files (10,000 by default, `--runs 100000`), by the TUI's
data layer cold (no run index) and warm (the run index present), and by the app, vs plain Python.

The directory holds runs of every kind (completed, failed, interrupted; 1 in 100 long, well
over 64 KiB), written in the engine's format (bench/synthetic.py). A directory of more than
10,000 runs takes a while to write: it is kept in the temporary directory
(`agentor-bench-index-N-v1`) and reused by the next run. Measured, interleaved:

- cold: `DirectorySource(dir).scan()` then `.rows()` with no index to read (every file's head and
  tail read: status, agent, model, start, prompt);
- warm: the same with the run index saved beforehand (`save_index()`, rows filled): no log is
  read (checked: `bytes_read == 0`);
- app: `RunsApp(dir, watch=False)` under `run_test`, from construction until the run list
  holds every run and has drawn a row of the complete list (cold at 10,000 runs, warm always);
- app, second start: once, with no index, the app (watching, as `agentor-tui` runs) is quit as
  soon as its list is drawn (a short look), then started again and timed as above: what the
  short look saved (at its first scan, at exit) is all the second start has;
- ls: `agentor ls DIR --json` in a fresh process, until it exits (its output read whole):
  cold (no index: every log read whole, on two cores where the machine has them: a forked worker
  reads 45% of the logs, `agentor.sources.directory.forkread`, and a forked process saves the
  index while ls prints, `agentor.sources.listing.table_listed`) and warm (the index the last one
  saved);
- baseline: plain Python reading the first and the last line of every file (`readline`, then
  the last block, growing until it holds a whole line) and `json.loads` of both.

On a machine other work keeps busy, wall times say little: the CPU time (user + system) of each
`ls` process (with the processes it forked) and of the baseline are shown too, with the load
average when the run began; a cold `ls` on two cores spends more CPU than it takes wall time, and
needs a second core free to take less wall time than CPU.

The ratio is the worse of cold / baseline and ls cold / baseline (goal 3x); warm must take at
most 1 s, as must `ls --json` warm, the app warm and its second start. Memory
for the rows: peak RSS (VmHWM) of a fresh process listing the directory warm and cold, and what
tracemalloc saw allocated for the rows. `DirectorySource.fill()` (reading every file whole,
done lazily by the app) and `save_index()` are shown for information.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import harness
import synthetic

NAME = "index"
GOAL_RATIO = 3.0
GOAL_APP_S = 1.0
GOAL_WARM_S = 1.0
GOAL_RSS_MB = 300
TAIL_BLOCK = 4096
CPU: dict[str, list[float]] = {"ls cold": [], "ls warm": [], "baseline": []}  # user + system


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


def data_layer(directory: Path, count: int, warm: bool) -> float:
    """Seconds to list the directory; `warm`: from its run index (else with none)."""
    from agentor.sources.directory.source import DirectorySource

    gc.collect()  # what the last repetition left (a source's rows are freed by the collector)
    t = time.perf_counter()
    source = DirectorySource(directory)
    if not warm:
        source.index.places = lambda: []  # type: ignore[method-assign]
    source.scan()
    rows = source.rows()
    elapsed = time.perf_counter() - t
    assert len(rows) == count, (len(rows), count)
    assert source.error is None, source.error
    if warm:
        assert source.from_index == count and source.bytes_read == 0, source.index.problem
    return elapsed


def memory_child(directory: Path, warm: bool, traced: bool) -> None:
    """In a fresh process: list, then print the peak RSS (VmHWM), or with `traced` what
    tracemalloc saw the rows hold and its peak (tracemalloc's own books inflate RSS, so the
    two are measured in separate processes)."""
    import tracemalloc

    from agentor.sources.directory.source import DirectorySource

    gc.collect()
    before = _rss("VmRSS")
    if traced:
        tracemalloc.start()
    source = DirectorySource(directory)
    if not warm:
        source.index.places = lambda: []  # type: ignore[method-assign]
    source.scan()
    source.rows()
    held, peak = tracemalloc.get_traced_memory()
    gc.collect()
    out = {"hwm": _rss("VmHWM"), "rss": _rss("VmRSS"), "before": before}
    print(json.dumps({"held": held, "peak": peak} if traced else out))


def _rss(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def memory(directory: Path, warm: bool) -> dict[str, int]:
    out: dict[str, int] = {}
    for traced in (False, True):
        mode = ["--warm" if warm else "--cold"] + (["--traced"] if traced else [])
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(directory), *mode],
            capture_output=True,
            text=True,
            check=True,
        )
        out.update(json.loads(proc.stdout.splitlines()[-1]))
    return out


def runs_directory(count: int, quick: bool) -> tuple[Path, int, float, bool]:
    """The directory of `count` runs (kept for the next run when large), its size in bytes,
    the seconds it took to write (0 when reused), and whether to delete it after."""
    keep = count > 10_000
    base = Path(tempfile.gettempdir())
    directory = base / f"agentor-bench-index-{count}-v1" if keep else None
    if directory is not None and (directory / ".complete").exists():
        return directory, int((directory / ".complete").read_text()), 0.0, False
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="bench-index-"))
    else:
        shutil.rmtree(directory, ignore_errors=True)
    t = time.perf_counter()
    size = synthetic.directory_of_runs(directory, count, time.time())
    made = time.perf_counter() - t
    if keep:
        (directory / ".complete").write_text(str(size))  # hidden: not a run, never listed
    return directory, size, made, not keep


def prepare_index(directory: Path) -> tuple[float, float, float, int]:
    """A fresh run index of the directory, rows filled: (fill seconds, save seconds, longest
    wait of the main thread meanwhile, bytes)."""
    from agentor.sources.directory.source import DirectorySource

    shutil.rmtree(directory / ".agentor-index", ignore_errors=True)
    source = DirectorySource(directory)
    source.scan()
    t = time.perf_counter()
    while source.fill(256):
        pass
    fill_s = time.perf_counter() - t
    assert source.incomplete == 0
    save_s, waited = save_in_background(source)
    return fill_s, save_s, waited, (directory / ".agentor-index" / "runs.json").stat().st_size


def save_in_background(source: Any) -> tuple[float, float]:
    """`save_index()` in a thread, as the app does it, while this thread wakes every
    millisecond: the save's seconds, and the longest this thread waited (the screen would)."""
    gc.collect()  # a collection the fill made due must not land in the window
    done = threading.Event()
    worker = threading.Thread(target=lambda: (source.save_index(), done.set()))
    start = last = time.perf_counter()
    worker.start()
    waited = 0.0
    while not done.is_set():
        time.sleep(0.001)
        now = time.perf_counter()
        waited, last = max(waited, now - last), now
    worker.join()
    return time.perf_counter() - start, waited


def app_listing(directory: Path, count: int, timeout: float = 300.0, watch: bool = False) -> float:
    """Seconds from building the app to a drawn row of the complete run list (`watch`: live,
    as `agentor-tui` runs: it saves the index)."""
    from tui.app import RunsApp
    from tui.widgets.run_list import RunList

    drawn: list[float] = []
    original = RunList.render_row

    def render_row(self: RunList, index: int, width: int):  # type: ignore[no-untyped-def]
        if not drawn and self.row_count() == count:
            drawn.append(time.perf_counter())
        return original(self, index, width)

    async def go() -> float:
        gc.collect()
        t = time.perf_counter()
        app = RunsApp(directory, watch=watch)
        async with app.run_test(size=(160, 45)) as pilot:
            deadline = time.perf_counter() + timeout
            while not drawn:
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"the list never showed {count} runs")
                await asyncio.sleep(0.002)
            elapsed = drawn[0] - t
            if not watch:
                await pilot.pause()
        return elapsed

    RunList.render_row = render_row  # type: ignore[method-assign]
    try:
        return asyncio.run(go())
    finally:
        RunList.render_row = original  # type: ignore[method-assign]


def cli_listing(directory: Path, count: int, warm: bool) -> float:
    """Seconds of `agentor ls DIR --json` in a fresh process (this tree's code), until it has
    exited and its output is read; cold: the index removed first (the listing saves one)."""
    if not warm:
        shutil.rmtree(directory / ".agentor-index", ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(harness.ROOT), *sys.path[1:]])}
    argv = [sys.executable, "-c", "from agentor.cli import main; raise SystemExit(main())"]
    gc.collect()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([*argv, "ls", str(directory), "--json"], capture_output=True, env=env)
    elapsed = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["ls warm" if warm else "ls cold"].append(
        after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert proc.stdout.count(b'"run_id": ') == count
    assert (directory / ".agentor-index" / "runs.json").exists()  # saved (cold), kept (warm)
    return elapsed


def app_second_start(directory: Path, count: int) -> float:
    """With no index, a short look (the app, watching, quit once its list is drawn), then the
    second start's seconds to a drawn list."""
    shutil.rmtree(directory / ".agentor-index", ignore_errors=True)
    app_listing(directory, count, watch=True)
    return app_listing(directory, count)


def baseline(directory: Path, count: int) -> float:
    gc.collect()  # as before each of ours
    cpu = time.process_time()
    t = time.perf_counter()
    n = first_and_last_lines(directory)
    elapsed = time.perf_counter() - t
    CPU["baseline"].append(time.process_time() - cpu)
    assert n == count, (n, count)
    return elapsed


@contextlib.contextmanager
def index_hidden(directory: Path) -> Iterator[None]:
    """The app started cold: its index moved aside for a while."""
    here, aside = directory / ".agentor-index", directory / ".agentor-index-aside"
    here.rename(aside)
    try:
        yield
    finally:
        aside.rename(here)


def app_cold(directory: Path, count: int) -> float:
    with index_hidden(directory):
        return app_listing(directory, count)


def measure(directory: Path, count: int, quick: bool) -> dict[str, Any]:
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    reps = 2 if quick else (7 if count <= 10_000 else 3)
    warmup = 0 if quick else 1
    fill_s, save_s, waited, index_bytes = prepare_index(directory)
    times = harness.interleaved(
        [
            ("cold", lambda: data_layer(directory, count, warm=False)),
            ("warm", lambda: data_layer(directory, count, warm=True)),
            ("baseline", lambda: baseline(directory, count)),
        ],
        reps,
        warmup=warmup,
    )
    # The app is slower to start; fewer repetitions, each next to a baseline run.
    app_cases = [("app", lambda: app_listing(directory, count))]
    if count <= 10_000:
        app_cases.append(("app cold", lambda: app_cold(directory, count)))
    app_cases.append(("baseline", lambda: baseline(directory, count)))
    app_times = harness.interleaved(app_cases, 1 if quick else 3, warmup=warmup)
    times["baseline"] += app_times.pop("baseline")
    times.update(app_times)
    mem_warm, mem_cold = memory(directory, warm=True), memory(directory, warm=False)
    # Last, as they replace the filled index: `agentor ls --json` cold then warm (from the index
    # the cold one saved), each beside a baseline; then the app's second start after a short look.
    cli_times = harness.interleaved(
        [
            ("ls cold", lambda: cli_listing(directory, count, warm=False)),
            ("ls warm", lambda: cli_listing(directory, count, warm=True)),
            ("baseline", lambda: baseline(directory, count)),
        ],
        reps,
        warmup=warmup,
    )
    times["baseline"] += cli_times.pop("baseline")
    times.update(cli_times)
    times["app second start"] = [app_second_start(directory, count)]
    return {
        "times": times,
        "fill": fill_s,
        "save": save_s,
        "waited": waited,
        "index_bytes": index_bytes,
        "mem_warm": mem_warm,
        "mem_cold": mem_cold,
        "load": load,
    }


def report(count: int, size: int, made: float, m: dict[str, Any]) -> None:
    times = m["times"]
    med = {k: harness.median(v) for k, v in times.items()}
    base = med["baseline"]
    print(
        f"{NAME}: {count} run files, {harness.fmt_bytes(size)} "
        f"({f'made in {made:.1f}s' if made else 'kept from a previous run'}), "
        f"run index {harness.fmt_bytes(m['index_bytes'])}, {harness.machine()}"
    )

    def line(case: str, key: str, goal: str) -> list[str]:
        t = med[key]
        spread = harness.spread(times[key])
        per = harness.fmt_s(t / count)
        return [case, harness.fmt_s(t), per, spread, f"{t / base:.2f}x", goal]

    rows = [
        line("DirectorySource.scan + rows, cold (no index)", "cold", f"<={GOAL_RATIO:g}x"),
        line("DirectorySource.scan + rows, warm (index)", "warm", f"<={GOAL_WARM_S:g}s"),
        line("agentor ls --json, cold (no index; saves it)", "ls cold", f"<={GOAL_RATIO:g}x"),
        line("agentor ls --json, warm (index)", "ls warm", f"<={GOAL_WARM_S:g}s"),
        line("RunsApp run_test, list drawn, warm", "app", f"<={GOAL_APP_S:g}s"),
        line("RunsApp, second start after a short look", "app second start", f"<={GOAL_APP_S:g}s"),
    ]
    if "app cold" in med:
        rows.append(line("RunsApp run_test, list drawn, cold", "app cold", ""))
    rows.append(line("first+last line, json (baseline)", "baseline", ""))
    waited = f"save_index, a thread (main waited <={harness.fmt_s(m['waited'])})"
    for case, seconds in (("fill, every file whole", m["fill"]), (waited, m["save"])):
        rows.append([case, harness.fmt_s(seconds), harness.fmt_s(seconds / count), "(once)",
                     f"{seconds / base:.2f}x", "background"])  # fmt: skip
    harness.table(["case", "median", "per file", "min..max", "vs baseline", "goal"], rows)
    cpu = {k: harness.median(v) for k, v in CPU.items() if v}
    if {"ls cold", "ls warm", "baseline"} <= cpu.keys():
        print(
            f"CPU (user+system), medians: agentor ls --json cold {harness.fmt_s(cpu['ls cold'])}"
            f" ({cpu['ls cold'] / cpu['baseline']:.2f}x the baseline's "
            f"{harness.fmt_s(cpu['baseline'])}), warm {harness.fmt_s(cpu['ls warm'])}; "
            f"load average at the start {m['load']}"
        )
    for kind in ("warm", "cold"):
        mem = m[f"mem_{kind}"]
        print(
            f"memory, {kind}: peak RSS {harness.fmt_bytes(mem['hwm'])}, after "
            f"{harness.fmt_bytes(mem['rss'])} ({harness.fmt_bytes(mem['before'])} before "
            f"listing); the rows hold {harness.fmt_bytes(mem['held'])} (tracemalloc; peak "
            f"{harness.fmt_bytes(mem['peak'])})"
        )
    rss = max(m["mem_warm"]["hwm"], m["mem_cold"]["hwm"])
    harness.result_line(
        NAME,
        max(med["cold"], med["ls cold"]) / base,
        f"<={GOAL_RATIO:g}x,warm<={GOAL_WARM_S:g}s,rss<{GOAL_RSS_MB}MB",
        f"cold:{harness.fmt_s(med['cold'])},warm:{harness.fmt_s(med['warm'])},"
        f"ls_cold:{harness.fmt_s(med['ls cold'])},ls_warm:{harness.fmt_s(med['ls warm'])},"
        f"app:{harness.fmt_s(med['app'])},app_second:{harness.fmt_s(med['app second start'])},"
        f"rss:{rss / 2**20:.0f}MB",
        harness.fmt_s(base),
    )


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        memory_child(Path(sys.argv[2]), sys.argv[3] == "--warm", "--traced" in sys.argv)
        return
    args = harness.parse_args(
        __doc__, runs=(int, 10_000, "how many runs to list (100000: the size of the goals)")
    )
    count = 400 if args.quick else args.runs  # over 300 files: quick rows, as at 100,000
    directory, size, made, temporary = runs_directory(count, args.quick)
    try:
        figures = measure(directory, count, args.quick)
    finally:
        if temporary:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            shutil.rmtree(directory / ".agentor-index", ignore_errors=True)  # kept cold
    report(count, size, made, figures)


if __name__ == "__main__":
    main()
