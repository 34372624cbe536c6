"""`make bench-quick`: every bench script runs on tiny inputs and ends with its result line.

Whether a figure meets its goal is never asserted: timing on a shared machine is noise, and
tiny inputs do not show the goals' sizes anyway. This only keeps the scripts from rotting.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Script (also in the Makefile's BENCHES) -> the NAME its last line starts with.
BENCHES = {
    "append": "append",
    "loop_overhead": "loop-overhead",
    "log_size": "log-size",
    "index": "index",
    "tail_latency": "tail-latency",
    "big_run": "big-run",
    "startup": "startup",
    "pg_append": "pg-append",
    "search": "search",
    "fleet": "fleet",
    "pg_list": "pg-list",
    "pg_tail": "pg-tail",
    "compare_view": "compare-view",
    "pg_search": "pg-search",
    "long_run": "long-run",
    "collect": "collect",
    "experiment": "experiment",
}
# Scripts in bench/ that measure without a baseline (not in `make bench`), kept running too.
TOOLS = {"engine_turn": "engine-turn"}
RESULT = re.compile(
    r"^(?P<name>\S+) ratio=(?P<ratio>\d+\.\d+|inf|nan) goal=\S+ ours=\S+ baseline=\S+$"
)


def test_the_makefile_runs_every_bench() -> None:
    makefile = (ROOT / "Makefile").read_text()
    listed = re.search(r"^BENCHES := (.*)$", makefile, re.MULTILINE)
    assert listed is not None
    assert listed.group(1).split() == list(BENCHES)


@pytest.mark.parametrize("script", [*BENCHES, *TOOLS])
def test_bench_runs_quick_and_prints_its_result_line(script: str) -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{script}.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) >= 3, out.stdout  # a header, a table, the result
    match = RESULT.match(lines[-1])
    assert match is not None, lines[-1]
    assert match["name"] == {**BENCHES, **TOOLS}[script]
