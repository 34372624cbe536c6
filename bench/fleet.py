"""fleet: 200 runs of 10 turns finished by 4 `agentor worker`s of concurrency 25 on a model that
answers in 500 ms, on a directory and on PostgreSQL: the CPU a turn costs the workers, their
store and the database server (the headline), and the wall time against the ideal.

The runs are submitted first (`Agentor.submit`), then four `agentor worker` processes start
(`--agent bench/fleet.py:agent`). Each run is the same agent: its model sleeps 500 ms and asks
for the `step` tool on turns 1 to 9, answers on turn 10; `step` returns at once. So a run is
10 model calls, 9 tool calls and 23 appends (a claim, the segment's run_start with the first
generation and its call, a result per tool call, then a generation, a message and a run_end).
The clock starts once the workers are up and hold their first runs (their first model calls
wait for a go-file: worker start-up, imports and the first claims are not timed) and stops
when every run is completed.

- CPU per turn: user + system CPU of the worker processes and of the server processes serving
  their connections (PostgreSQL), while timed, over the 2,000 turns. Goals: a directory <= 1.0
  ms, PostgreSQL <= 1.6 ms.
- Wall time: the ideal, 10 s, is what 100 model calls in flight at all times would take (turns
  x latency x runs / total concurrency): the fleet is latency-bound, as a real one is, so it
  should come within 1.15x of it on both stores.

The stores are measured in turn (`--reps` each, interleaved). The last line's ratio is the
worst of the four figures over its goal: <= 1 when all are met. The server is
`AGENTOR_BENCH_PG`, else `AGENTOR_TEST_PG`, else the local one; the bench works in a schema of
its own, dropped at the end.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness

from agentor import Agentor, function_tool
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel

NAME = "fleet"
CPU_GOALS = {"file": 0.0010, "postgres": 0.0016}  # seconds of CPU a turn
WALL_GOAL = 1.15  # wall time / ideal
DSN = os.environ.get(
    "AGENTOR_BENCH_PG",
    os.environ.get("AGENTOR_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test"),
)
AGENTOR = Path(sys.executable).parent / "agentor"
SETTINGS = json.loads(
    os.environ.get("AGENTOR_BENCH_FLEET", '{"turns": 10, "go": null, "latency": 0.5}')
)


# -- the agent the workers load -------------------------------------------------------------------


class LocalModel:
    """Answers after `latency` seconds: `step` until the last turn, then the answer. Its first
    calls in a process wait for the go-file (the clock starts then)."""

    name = "local-model"

    def __init__(self, turns: int, go: str | None, latency: float) -> None:
        self.turns = turns
        self.go = go
        self.latency = latency
        self.calls = ScriptedModel([])

    async def generate(self, messages: Any, tools: Any, on_text: Any = None) -> ModelResponse:
        while self.go is not None and not os.path.exists(self.go):
            await asyncio.sleep(0.002)
        self.go = None
        await asyncio.sleep(self.latency)
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done + 1 < self.turns:
            return self.calls.calls(("step", {"n": done + 1}))
        return ScriptedModel.text(f"done after {done} steps")


@function_tool
def step(n: int) -> str:
    """Do step n.

    Args:
        n: Which step.
    """
    return f"step {n} done"


agent = Agentor(
    "Fleet Bench",
    model=LocalModel(SETTINGS["turns"], SETTINGS["go"], SETTINGS["latency"]),
    tools=[step],
    max_turns=SETTINGS["turns"],
)


# -- the bench -------------------------------------------------------------------------------------


@dataclass
class Shape:
    runs: int
    turns: int
    workers: int
    concurrency: int
    latency: float

    @property
    def ideal(self) -> float:
        return self.turns * self.latency * self.runs / (self.workers * self.concurrency)


class Place:
    """A store for one measure: a schema of the server, or a scratch directory."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.tmp = Path(tempfile.mkdtemp(prefix="agentor-bench-fleet-"))
        self._counter: Any = None
        self._done: set[str] = set()
        if kind == "postgres":
            from agentor.engine.store.postgres import PostgresStore

            self.schema = f"agentor_bench_fleet_{os.getpid()}"
            self.store: Any = PostgresStore(DSN, schema=self.schema)
            self.args = ["--store", DSN, "--schema", self.schema]
        else:
            self.store = FileStore(self.tmp / "runs")
            self.args = ["--store", str(self.tmp / "runs")]

    def held(self, run_ids: list[str]) -> int:
        if self.kind == "postgres":
            return len(self.store.held_runs())
        return sum(self.store.is_locked(r) for r in run_ids)

    def count_completed(self, run_ids: list[str]) -> int:
        """How many runs are completed: a cheap look, made every few milliseconds."""
        if self.kind == "postgres":
            if self._counter is None:
                import psycopg

                self._counter = psycopg.connect(DSN, autocommit=True)
            query = f'SELECT count(*) FROM "{self.schema}".runs WHERE status = %s'
            return self._counter.execute(query, ("completed",)).fetchone()[0]
        for run_id in set(run_ids) - self._done:  # a completed log ends with its run_end
            with open(self.store.path(run_id), "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 400))
                # A log just made may be empty still: its last line is then b"".
                if b'"type":"run_end"' in f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]:
                    self._done.add(run_id)
        return len(self._done)

    def server_pids(self, workers: list[int]) -> list[int]:
        """The server processes serving the workers' connections (same host only)."""
        if self.kind != "postgres":
            return []
        rows = self.store._read(
            "", lambda c: c.execute("SELECT pid, application_name FROM pg_stat_activity").fetchall()
        )
        return [pid for pid, app in rows if any(f"pid={w} " in (app or "") for w in workers)]

    def close(self) -> None:
        if self.kind == "postgres":
            import psycopg

            self.store.close()
            if self._counter is not None:
                self._counter.close()
            with psycopg.connect(DSN, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{self.schema}" CASCADE')
        shutil.rmtree(self.tmp, ignore_errors=True)


def measure(kind: str, shape: Shape) -> dict[str, Any]:
    place = Place(kind)
    go = place.tmp / "go"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        submitter = agent.clone(store=place.store)
        run_ids = [submitter.submit(f"job {i}", run_id=f"b{i:04d}") for i in range(shape.runs)]
        env = {
            **os.environ,
            "PYTHONPATH": str(harness.ROOT),
            "AGENTOR_BENCH_FLEET": json.dumps(
                {"turns": shape.turns, "go": str(go), "latency": shape.latency}
            ),
        }
        for i in range(shape.workers):
            command = [str(AGENTOR), "worker", "--agent", "bench/fleet.py:agent", *place.args]
            command += ["--concurrency", str(shape.concurrency), "--name", f"w{i}"]
            out = open(place.tmp / f"w{i}.out", "wb")  # noqa: SIM115 (the process has it)
            procs.append(
                subprocess.Popen(command, cwd=harness.ROOT, env=env, stdout=out, stderr=out)
            )
            out.close()
        first = min(shape.runs, shape.workers * shape.concurrency)
        _wait(lambda: place.held(run_ids) >= first, 120, "the workers to hold their first runs")
        workers = [p.pid for p in procs]
        servers = place.server_pids(workers)
        cpu, cpu_workers = _cpu(workers + servers), _cpu(workers)
        started = time.perf_counter()
        go.touch()
        _wait(lambda: place.count_completed(run_ids) == shape.runs, 600, "every run")
        wall = time.perf_counter() - started
        cpu, cpu_workers = _cpu(workers + servers) - cpu, _cpu(workers) - cpu_workers
        for p in procs:
            p.send_signal(signal.SIGTERM)
        codes = [p.wait(timeout=60) for p in procs]
        assert codes == [0] * shape.workers, codes
        claims = sum(1 for r in run_ids for e in place.store.load(r) if e.type == "claim")
        assert claims == shape.runs, f"{claims} claims for {shape.runs} runs"
        return {"wall": wall, "claims": claims, "cpu": cpu, "workers": cpu_workers}
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        place.close()


def _cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes used so far (Linux; 0 elsewhere)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _wait(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.005)


def main() -> None:
    args = harness.parse_args(__doc__, reps=(int, 2, "measures of each store, interleaved"))
    shape = Shape(20, 3, 2, 5, 0.05) if args.quick else Shape(200, 10, 4, 25, 0.5)
    reps = 1 if args.quick else args.reps
    got: dict[str, list[dict[str, Any]]] = {"file": [], "postgres": []}
    for i in range(reps):
        for kind in ("file", "postgres") if i % 2 == 0 else ("postgres", "file"):
            got[kind].append(measure(kind, shape))
    turns = shape.runs * shape.turns
    print(
        f"{NAME}: {shape.runs} runs x {shape.turns} turns, {shape.workers} workers x "
        f"concurrency {shape.concurrency}, model latency {shape.latency * 1000:.0f} ms, "
        f"{reps} measure(s) a store, {harness.machine()}"
    )
    cpu = {k: harness.median([g["cpu"] / turns for g in v]) for k, v in got.items()}
    wall = {k: harness.median([g["wall"] for g in v]) for k, v in got.items()}
    harness.table(
        [
            "store",
            "CPU per turn",
            "min..max",
            "goal",
            "of it workers",
            "wall",
            "min..max",
            "ideal",
            "wall / ideal",
        ],
        [
            [
                kind,
                harness.fmt_s(cpu[kind]),
                harness.spread([g["cpu"] / turns for g in got[kind]]),
                f"<= {harness.fmt_s(CPU_GOALS[kind])}",
                harness.fmt_s(harness.median([g["workers"] / turns for g in got[kind]])),
                harness.fmt_s(wall[kind]),
                harness.spread([g["wall"] for g in got[kind]]),
                harness.fmt_s(shape.ideal),
                f"{wall[kind] / shape.ideal:.3f} (goal <= {WALL_GOAL})",
            ]
            for kind in got
        ],
    )
    print(
        "CPU: the workers' processes and the server processes serving them, while timed, over "
        f"the {turns} turns; the ratio below is the worst figure over its goal"
    )
    worst = max(
        *(cpu[k] / CPU_GOALS[k] for k in got), *(wall[k] / shape.ideal / WALL_GOAL for k in got)
    )
    harness.result_line(
        NAME,
        worst,
        f"cpu<={CPU_GOALS['file'] * 1e3:.1f}ms(dir),{CPU_GOALS['postgres'] * 1e3:.1f}ms(pg);"
        f"wall<={WALL_GOAL}x",
        f"cpu:{harness.fmt_s(cpu['file'])}(dir),{harness.fmt_s(cpu['postgres'])}(pg);"
        f"wall:{wall['file']:.2f}s(dir),{wall['postgres']:.2f}s(pg)",
        f"ideal:{shape.ideal:.2f}s",
    )


if __name__ == "__main__":
    main()
