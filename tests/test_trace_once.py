"""`agentor trace --once` against a collector that is down, that refuses, then takes the spans:
it tries once, exits 1 within seconds as `agentor export --format otlp` does, and writes no
state file until a collector took spans (so the right endpoint is never refused for a wrong
one tried first); a state file of another collector is refused saying it may be deleted. Real
`agentor` processes over the sample runs, and a local OTLP receiver (tests/otlp_receiver.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentor.telemetry.ids import trace_id_of
from tests.conftest import ROOT
from tests.otlp_receiver import OTLPReceiver, otlp_receiver_fixture  # noqa: F401 (fixture)

CLI = "from agentor.cli import main; raise SystemExit(main())"
SAMPLES = json.loads((ROOT / "runs" / "manifest.json").read_text())
RUN_IDS = sorted(entry["run_id"] for entry in SAMPLES.values())


def agentor(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """The command's outcome, and how long it took (s)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args],
        cwd=ROOT,
        env={**os.environ, "OTEL_EXPORTER_OTLP_TIMEOUT": "10"},  # the exporter's default
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, time.monotonic() - started


def sample_runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(ROOT / "runs", runs)
    return runs


def test_with_the_collector_down_it_tries_once_exits_1_and_binds_no_state_file(
    tmp_path: Path,
) -> None:
    runs = sample_runs(tmp_path)
    done, took = agentor("trace", str(runs), "--once", "--endpoint", "http://127.0.0.1:1")
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        "agentor trace: the collector at http://127.0.0.1:1/v1/traces did not take the spans: "
        "[Errno 111] Connection refused\n"
    )
    # One try, with the exporter's own retries (about 9 s), not one a run (nine: over 80 s).
    assert took < 30
    assert not (runs / ".agentor-trace-sent").exists()


def test_a_state_file_is_bound_only_once_a_collector_took_spans(
    tmp_path: Path, otlp_receiver: OTLPReceiver
) -> None:
    runs = sample_runs(tmp_path)
    state = runs / ".agentor-trace-sent"
    otlp_receiver.refusing = True
    refused, _ = agentor("trace", str(runs), "--once", "--endpoint", otlp_receiver.url)
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1 and "did not take the spans" in refused.stderr
    assert otlp_receiver.requests == 1  # the first run refused: no other was tried
    assert not state.exists()

    otlp_receiver.refusing = False
    done, _ = agentor("trace", str(runs), "--once", "--endpoint", otlp_receiver.url)
    assert done.returncode == 0, done.stderr
    traces = {s.trace_id for s in otlp_receiver.spans}
    assert traces == {format(trace_id_of(run_id), "032x") for run_id in RUN_IDS}
    header = json.loads(state.read_text().splitlines()[0])
    assert header["endpoint"] == f"{otlp_receiver.url}/v1/traces"

    # Another collector is refused, saying the file may be deleted (and which file).
    other, _ = agentor("trace", str(runs), "--once", "--endpoint", "http://127.0.0.1:1")
    assert other.returncode == 1
    assert other.stderr.count("\n") == 1
    assert f"or delete {state} to send every run to http://127.0.0.1:1/v1/traces" in other.stderr


@pytest.mark.parametrize(
    "idle, says",
    [
        ("-5", "argument --idle: must be 0 seconds or more: -5"),
        ("nan", "argument --idle: must be 0 seconds or more: nan"),
        ("soon", "argument --idle: not a number of seconds: 'soon'"),
    ],
)
def test_idle_takes_seconds_from_0(tmp_path: Path, idle: str, says: str) -> None:
    runs = sample_runs(tmp_path)
    done, _ = agentor("trace", str(runs), "--once", "--idle", idle, "--endpoint", "http://x")
    assert done.returncode == 2
    assert says in done.stderr and done.stderr.count("\n") == 1
    assert not (runs / ".agentor-trace-sent").exists()
