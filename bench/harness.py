"""What every bench script shares: `--quick`, interleaved repetitions, the table, the last line.

Benches run on a noisy shared machine, so a figure is only trusted as a ratio: ours and the
baseline are measured in the same process, their repetitions interleaved (ABAB..., the order
flipped every round so neither side always runs warm), and medians compared.

The last line a script prints is `NAME ratio=X goal=Y ours=... baseline=...`, one token per
value, for `make bench` and for tests/test_bench_quick.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The benches use tests/openai_server.py, which is not installed: make the repo importable.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def parse_args(doc: str | None, **extra: tuple[type, object, str]) -> argparse.Namespace:
    """`--quick` plus any `name=(type, default, help)` options a script needs."""
    p = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny inputs: checks the bench runs")
    for name, (kind, default, help_) in extra.items():
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=default, help=help_)
    return p.parse_args()


def interleaved(
    cases: Sequence[tuple[str, Callable[[], float]]], reps: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Run each case `warmup + reps` times, alternating cases; keep the last `reps` results.

    A case returns its own measurement (usually seconds of the part it times), so setup and
    teardown stay out of the figure.
    """
    out: dict[str, list[float]] = {name: [] for name, _ in cases}
    for i in range(warmup + reps):
        order = cases if i % 2 == 0 else list(reversed(cases))
        for name, fn in order:
            value = fn()
            if i >= warmup:
                out[name].append(value)
    return out


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100), nearest rank: on few samples it is the worst one seen."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, -(-len(ordered) * p // 100))  # ceil without floats surprises
    return ordered[int(rank) - 1]


def spread(values: Sequence[float]) -> str:
    """min..max of the repetitions, to see how noisy a figure was."""
    return f"{fmt_s(min(values))}..{fmt_s(max(values))}"


def fmt_s(seconds: float) -> str:
    if seconds != seconds:
        return "n/a"
    if seconds >= 1:
        return f"{seconds:.2f}s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f}ms"
    return f"{seconds * 1e6:.0f}us"


def fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024
    return f"{n}"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for j, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if j == 0:
            print("  ".join("-" * w for w in widths))


def machine() -> str:
    return f"nproc={os.cpu_count()} python={sys.version.split()[0]}"


def result_line(name: str, ratio: float, goal: str, ours: str, baseline: str) -> None:
    """The one line `make bench` and the quick test read: printed last."""
    for value in (goal, ours, baseline):
        assert " " not in value, f"one token per value: {value!r}"
    print(f"{name} ratio={ratio:.3f} goal={goal} ours={ours} baseline={baseline}", flush=True)
