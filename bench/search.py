"""search: `agentor.ops.run_search` over 1 GB of run logs vs `grep -c` over the same files.

The directory holds ~115,000 runs of every kind written in the engine's format
(bench/synthetic.py: 1 in 50 long, the rest 1 to 6 turns), about 1 GB, plus 12 runs whose
prompt names Reykjavik. The files are read once before timing, so both sides read from the
page cache. Measured, interleaved, each a median of repetitions:

- `Reykjavik` (12 lines), exact case: `sum(1 for _ in search(dir, q))` vs `grep -rc q dir`;
- `reykjavik`, smart case (no upper-case letter: case ignored) vs `grep -rci q dir`;
- `Day 17 in` (2,300 lines, one per long run): each hit decoded, its field and snippet made;
- a regex, `Reykjav[i1]k` (every line decoded) vs `grep -rcE`: shown, no goal.

Every search must count the lines grep counts. Wall time is the figure (goal: ours <= 1.5x
grep); CPU time (ours: this process and the helper process that scans half of the directory
for a plain query; grep: its process) is shown too, the steadier figure on a shared machine.
The ratio on the last line is the exact-case query's.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import harness
import synthetic

from agentor.ops.run_search import search

NAME = "search"
GOAL = 1.5
PLANTED = 12  # runs asking about Reykjavik


def make_logs(directory: Path, count: int) -> int:
    """`count` synthetic runs plus PLANTED naming Reykjavik; returns the bytes written."""
    now = time.time()
    size = synthetic.directory_of_runs(directory, count, now, big_every=50)
    for i in range(PLANTED):
        run_id = synthetic.run_id_for(10_000_000 + i)
        events = synthetic.run_events(run_id, turns=2, started=now - 3600 * i)
        events[0].messages[-1]["content"] = "What is the weather in Reykjavik this week?"  # type: ignore[index]
        size += synthetic.write_run(directory, run_id, events)
    return size


def warm(directory: Path) -> None:
    for path in directory.iterdir():
        path.read_bytes()


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def ours(directory: Path, query: str, expect: int, cpu: list[float], **kw: bool) -> float:
    c, t = time.process_time() + children_cpu(), time.perf_counter()
    n = sum(1 for _ in search(directory, query, **kw))
    elapsed = time.perf_counter() - t
    cpu.append(time.process_time() + children_cpu() - c)  # its helper process included
    assert n == expect, (query, n, expect)
    return elapsed


def grep_count(directory: Path, flags: list[str], query: str) -> tuple[int, float, float]:
    c, t = children_cpu(), time.perf_counter()
    out = subprocess.run(["grep", "-rc", *flags, query, str(directory)], capture_output=True)
    elapsed = time.perf_counter() - t
    lines = sum(int(row.rsplit(b":", 1)[1]) for row in out.stdout.splitlines())
    return lines, elapsed, children_cpu() - c


def case(
    directory: Path, query: str, grep_flags: list[str], reps: int, **kw: bool
) -> dict[str, object]:
    expect, _, _ = grep_count(directory, grep_flags, query)
    cpu: dict[str, list[float]] = {"ours": [], "grep": []}

    def run_grep() -> float:
        n, elapsed, used = grep_count(directory, grep_flags, query)
        assert n == expect
        cpu["grep"].append(used)
        return elapsed

    cases: list[tuple[str, Callable[[], float]]] = [
        ("ours", lambda: ours(directory, query, expect, cpu["ours"], **kw)),
        ("grep", run_grep),
    ]
    times = harness.interleaved(cases, reps)
    cpu = {k: v[-reps:] for k, v in cpu.items()}  # the warm-up's are dropped, as its times
    return {"query": query, "lines": expect, "flags": grep_flags, "times": times, "cpu": cpu}


def main() -> None:
    args = harness.parse_args(__doc__)
    count, reps = (2_000, 2) if args.quick else (115_000, 5)
    tmp = Path(tempfile.mkdtemp(prefix="bench-search-"))
    try:
        t = time.perf_counter()
        size = make_logs(tmp, count)
        made = time.perf_counter() - t
        warm(tmp)
        load = os.getloadavg()
        results = [
            case(tmp, "Reykjavik", ["-F"], reps, ignore_case=False),
            case(tmp, "reykjavik", ["-Fi"], reps),
            case(tmp, "Day 17 in", ["-F"], reps),
            case(tmp, "Reykjav[i1]k", ["-E"], max(1, reps // 2), regex=True),
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"{NAME}: {count + PLANTED} run files, {harness.fmt_bytes(size)} "
        f"(made in {made:.1f}s), {harness.machine()}, load average before/after "
        f"{load[0]:.2f}/{os.getloadavg()[0]:.2f} (other work on the machine slows ours, on two "
        "processes, more than grep's one)"
    )
    rows = []
    for r in results:
        times, cpu = r["times"], r["cpu"]  # type: ignore[assignment]
        ours_s, grep_s = harness.median(times["ours"]), harness.median(times["grep"])
        ours_c, grep_c = harness.median(cpu["ours"]), harness.median(cpu["grep"])
        rows.append(
            [
                repr(r["query"]),
                f"grep -rc {' '.join(r['flags'])}",  # type: ignore[arg-type]
                r["lines"],
                harness.fmt_s(ours_s),
                harness.fmt_s(grep_s),
                f"{ours_s / grep_s:.2f}x",
                f"{ours_c / grep_c:.2f}x",
                harness.spread(times["ours"]),
            ]
        )
    harness.table(
        ["query", "baseline", "lines", "ours", "grep", "wall", "cpu", "ours min..max"], rows
    )
    first = results[0]
    ours_s = harness.median(first["times"]["ours"])  # type: ignore[index]
    grep_s = harness.median(first["times"]["grep"])  # type: ignore[index]
    harness.result_line(
        NAME, ours_s / grep_s, f"<={GOAL:g}x", harness.fmt_s(ours_s), harness.fmt_s(grep_s)
    )


if __name__ == "__main__":
    main()
