"""`agentor replay` (and `agentor fork --model`) refuse a model that cannot be built (no key) or
reached (no server) before anything is written: no failed fork is left behind. The agent's own
model, named, is that model: the offline demo agent replays a run with no network. The console
script in subprocesses, the fake OpenAI server (tests/openai_server.py) as the endpoint.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.app_support import SAMPLE_MANIFEST, SAMPLES
from tests.openai_server import FakeOpenAI
from tests.test_agentor_command import agentor, refused
from tests.test_agentor_fork_command import Shell

NO_SERVER = "http://127.0.0.1:1/v1"


def test_a_model_that_cannot_be_reached_or_built_is_refused_and_nothing_is_written(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    shell = Shell(fake_openai, tmp_path)
    before = shell.files()
    asked = len(fake_openai.requests)
    spec = ("--agent", f"{shell.spec}:weather", "--store", str(shell.runs))
    no_server = {**shell.env, "OPENAI_BASE_URL": NO_SERVER}
    for command in (
        ("replay", shell.parent, "--model", "gpt-4o"),
        ("fork", shell.parent, "--at", "4", "--result", "Hail.", "--model", "gpt-4o"),
    ):
        line = refused(agentor(*command, *spec, env=no_server), 1)
        assert line.startswith(f"agentor {command[0]}: model gpt-4o cannot be used: "), line
        assert "APIConnectionError" in line and line.endswith("; nothing was written"), line
        assert shell.files() == before  # no failed fork left behind
    assert len(fake_openai.requests) == asked and shell.ran() == []

    # A server that answers (this one lists no models): the replay goes on.
    proc = shell("replay", shell.parent, "--model", "gpt-4o", "--fork-id", "r1")
    assert proc.returncode == 0, proc.stderr
    assert set(shell.files()) == {*before, "r1.jsonl"}


def test_the_offline_demo_agent_replays_a_run_with_its_own_model_by_name(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLES, runs)
    run_id = SAMPLE_MANIFEST["completed"]["run_id"]
    spec = ("--agent", "examples/weather.py:agent", "--store", str(runs))
    # No key (the demo's case): gpt-4o cannot be built, and nothing is written for it.
    before = sorted(p.name for p in runs.iterdir())
    line = refused(agentor("replay", run_id, "--model", "gpt-4o", *spec), 1)
    assert "model gpt-4o cannot be used: OpenAIError: Missing credentials" in line
    assert sorted(p.name for p in runs.iterdir()) == before
    # The agent's own model, named: offline.
    proc = agentor("replay", run_id, "--model", "offline-demo", "--fork-id", "again", *spec)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"replay again of run {run_id} with offline-demo"
    assert lines[-2] == "run again is completed:"
