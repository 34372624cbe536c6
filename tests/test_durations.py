"""One way to say how long a run took: `agentor show` and `agentor diff` say it as the TUI's run
list does ("250ms", not "0.2s" or "0.0s"), from the one definition (`agentor.durations`)."""

from __future__ import annotations

import json
from pathlib import Path

from agentor.durations import duration
from agentor.sources.directory.source import DirectorySource
from tests.test_agentor_command import agentor
from tui.text.run_line import took

START = 1796037200.0  # + 0.25 s: exact in binary, so the span is exactly 250 ms


def write_run(runs: Path, run_id: str, seconds: float) -> None:
    events = [
        {"type": "run_start", "agent": "A", "model": "m", "started_at": START,
         "messages": [{"role": "user", "content": "Hi?"}]},
        {"type": "run_end", "text": "Hello.", "turn": 1, "status": "completed",
         "started_at": START, "ended_at": START + seconds},
    ]  # fmt: skip
    runs.mkdir(exist_ok=True)
    (runs / f"{run_id}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


def test_show_diff_and_the_run_list_say_a_duration_alike(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs, "quick", 0.25)
    write_run(runs, "slow", 185.5)
    source = DirectorySource(runs)
    source.scan()
    listed = {r.run_id: took(r, START + 1000) for r in source.rows()}
    assert listed == {"quick": "250ms", "slow": "3m05s"}

    shown = agentor("show", "quick", "--store", str(runs))
    assert shown.returncode == 0, shown.stderr
    [started] = [line for line in shown.stdout.splitlines() if line.startswith("started ")]
    assert " · took 250ms · " in started
    assert "took 3m05s" in agentor("show", "slow", "--store", str(runs)).stdout

    diffed = agentor("diff", "quick", "slow", "--store", str(runs))
    assert diffed.returncode == 0, diffed.stderr
    assert "took: a 250ms, b 3m05s" in diffed.stdout.splitlines()
    assert duration(0.021) == "21ms" and duration(None) == "-"
