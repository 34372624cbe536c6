"""An experiment killed (SIGKILL) at several points and gone on with by `agentor experiment
resume` in new processes: every pair done once (one candidate run a baseline, each candidate's
two model turns answered once); and two processes going on with one PostgreSQL experiment at
once: each candidate made and finished by one of them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from agentor.engine.events import FORK, RUN_START
from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from tests.conftest import WeatherAgents
from tests.experimentkit import prompt_of, prompts, script
from tests.openai_server import FakeOpenAI
from tests.test_agentor_command import ENV, SCRIPT

MODEL = "same-model"


class Gate:
    """The server's script for the candidates: answers as `same-model` does, except the
    requests named in `hang` (prompt, turn), which never answer; counts what it answered."""

    def __init__(self, srv: FakeOpenAI, together: int = 0) -> None:
        self.hang: set[tuple[str, int]] = set()
        self.hung = threading.Event()
        self.answered: Counter[str] = Counter()
        self.lock = threading.Lock()
        # No answer until candidates of `together` baselines have asked: more than one
        # process's worth, so that two processes are at work at once.
        self.together = together
        self.seen: set[str] = set()
        self.all_asked = threading.Event()
        srv.script = self

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("model") != MODEL:
            return script(request)
        prompt = prompt_of(request)
        turn = 2 if request["messages"][-1].get("role") == "tool" else 1
        if (prompt, turn) in self.hang:
            self.hung.set()
            return {"hang": True}
        with self.lock:
            self.answered[prompt] += 1
            self.seen.add(prompt)
            if len(self.seen) >= self.together:
                self.all_asked.set()
        # (the server holds its lock while it asks this script: the waiting is its own)
        return {**script(request), "wait": self.all_asked}


def command(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(SCRIPT), "experiment", *args],
        env={**ENV, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def killed(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def finished(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def candidates_of(store: Store) -> dict[str, list[str]]:
    """Each forked run's parent, and the run's run_start count: by parent."""
    found: dict[str, list[str]] = {}
    for run_id in store.list_runs():
        events = store.load(run_id)
        forks = [e for e in events if e.type == FORK]
        if forks:
            found.setdefault(str(forks[-1].forked_from), []).append(run_id)
    return found


def test_killed_at_several_points_then_resumed_every_pair_is_done_once(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    runs_dir = tmp_path / "runs"
    store = FileStore(runs_dir)
    fake_openai.script = script
    agent = WeatherAgents(fake_openai)(store=store)
    asked = prompts()
    baselines = [agent.run(p).run_id for p in asked]
    gate = Gate(fake_openai)
    env = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test"}
    where = ("--store", str(runs_dir), "--concurrency", "1", "--json")

    # 1: killed at its first candidate's first request, before any pair was measured.
    gate.hang = {(asked[0], 1)}
    proc = command("run", *baselines, "--model", MODEL, *where, env=env)
    assert gate.hung.wait(60), proc.stderr.read() if proc.poll() is not None else ""
    killed(proc)
    (experiment,) = [p.stem for p in (runs_dir / ".experiments").iterdir()]

    # 2: killed mid-candidate (the third's tool turn), after two pairs were measured.
    gate.hang, gate.hung = {(asked[2], 2)}, threading.Event()
    proc = command("resume", experiment, *where, env=env)
    assert gate.hung.wait(60)
    killed(proc)
    records = (runs_dir / ".experiments" / f"{experiment}.jsonl").read_text().splitlines()
    assert [json.loads(r)["kind"] for r in records] == ["definition", "pair", "pair"]

    # 3: the rest, in one more process.
    gate.hang = set()
    data = finished(command("resume", experiment, *where, env=env))
    assert [p["baseline"] for p in data["pairs"]] == baselines
    assert all(p["status"] == ["completed", "completed"] for p in data["pairs"])
    assert data["summary"]["pairs"] == 5 and data["pending"] == []

    by_parent = candidates_of(store)
    assert {b: len(c) for b, c in by_parent.items()} == dict.fromkeys(baselines, 1)
    assert gate.answered == dict.fromkeys(asked, 2), "each candidate's two turns answered once"
    for (candidate,) in by_parent.values():
        starts = [e for e in store.load(candidate) if e.type == RUN_START]
        assert len(starts) <= 3  # the copied prompt's, the replay's, one resumed segment
    again = finished(command("resume", experiment, *where, env=env))
    assert again == data, "a finished experiment resumed asks nothing"
    assert gate.answered == dict.fromkeys(asked, 2)


def test_two_processes_going_on_with_one_postgres_experiment_do_each_candidate_once(
    fake_openai: FakeOpenAI, pg_stores: Any
) -> None:
    store = pg_stores()
    fake_openai.script = script
    agent = WeatherAgents(fake_openai)(store=store)
    asked = prompts()
    baselines = [agent.run(p).run_id for p in asked]
    gate = Gate(fake_openai, together=3)  # each process has at most 2 in flight
    env = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test"}
    where = ("--store", pg_stores.dsn, "--schema", pg_stores.schema, "--concurrency", "2")
    args = ("run", *baselines, "--model", MODEL, *where, "--json")
    first, second = command(*args, env=env), command(*args, env=env)
    one, two = finished(first), finished(second)

    assert one["experiment_id"] == two["experiment_id"]
    assert (
        [p["baseline"] for p in one["pairs"]] == baselines == [p["baseline"] for p in two["pairs"]]
    )
    by_parent = candidates_of(store)
    assert {b: len(c) for b, c in by_parent.items()} == dict.fromkeys(baselines, 1)
    assert gate.answered == dict.fromkeys(asked, 2), "each candidate asked by one process"
    pids = {
        e.pid
        for run_ids in by_parent.values()
        for e in store.load(run_ids[0])
        if e.type == RUN_START and e.model == MODEL
    }
    assert pids == {first.pid, second.pid}, "both processes made candidates"
