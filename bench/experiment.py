"""experiment: 200 recorded runs of 5 turns replayed as an experiment's candidates against a
local model that answers in 200 ms, 16 at a time: the wall time against the ideal, and the
CPU a replayed turn costs against a live turn's, both measured in the same bench run.

A local fake model (tests/openai_server.FakeOpenAI, in a process of its own: its CPU is not
counted) answers every request after 200 ms, whatever the model asked: `lookup` on turns 1 to
4, then the answer. The `lookup` tool returns ~300 bytes.

1. Live (the baseline): a fresh process records 200 runs of one agent (`gpt-4o-mini`, one
   tool, a FileStore) with `Agentor.arun([...], limit_concurrency=16)`: 5 turns a run, 4 tool
   calls run. Its CPU (user + system, every thread) from after its imports to the last run's
   end, over the 1,000 turns: the CPU of a live turn.
2. Replayed (ours): another fresh process, the same agent and store, replays those 200 runs
   with `Agentor.aexperiment(runs, model="gpt-4o", concurrency=16, scorers=["same_output",
   "same_tools"])`: each baseline's candidate asks the same server, every tool call served
   from the record (none runs: checked), each pair measured, scored and recorded. Its CPU from
   after its imports to the experiment's return (the baselines checked, the model checked,
   the candidates, the measuring, the scoring, the records, the summary), over the 1,000
   candidate turns: the CPU of a replayed turn.

Wall time is timed from the first candidate request the server receives (the model's
monotonic clock is the machine's, shared by the processes) to the experiment's return; from
the experiment's call too, for information (that adds checking the 200 baselines and the
model before the first candidate is asked). The ideal is what 16 requests in flight at all
times would take: 200 x 5 x 0.2 s / 16 = 12.5 s.

Goals: wall / ideal <= 1.15; CPU per replayed turn / CPU per live turn <= 1.2. The result
line's ratio is the worse of the two over its goal: <= 1 when both are met. `--reps N`
(default 3) records and replays N times (a fresh store each time, the replay right after its
live runs): the CPU ratio is the median of each replay's over its own recording's (the two
measured a minute apart, under the same load), the wall time the median of the replays'.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAME = "experiment"
WALL_GOAL = 1.15
CPU_GOAL = 1.2
LIVE_MODEL = "gpt-4o-mini"
CANDIDATE_MODEL = "gpt-4o"
LOOKUPS = 4  # tool calls a run makes before its answer: 5 turns
RESULT_BYTES = 300
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass(frozen=True)
class Shape:
    runs: int
    concurrency: int
    latency: float

    @property
    def turns(self) -> int:
        return self.runs * (LOOKUPS + 1)

    @property
    def ideal(self) -> float:
        return self.turns * self.latency / self.concurrency


# -- the model, in a process of its own ----------------------------------------------------------


def serve(latency: float, log: str) -> None:
    """The fake model: `lookup` until the run has LOOKUPS results, then the answer, each after
    `latency` seconds. Each request's model and arrival (monotonic clock) is written to `log`."""
    sys.path.insert(0, str(ROOT))
    import threading

    from tests.openai_server import FakeOpenAI

    out = open(log, "a", buffering=1)  # noqa: SIM115 (the server's life long)

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        out.write(f"{request.get('model')} {time.monotonic()}\n")
        messages = request.get("messages", [])
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done < LOOKUPS:
            return {"delay": latency, "calls": [["lookup", {"record": done + 1}]]}
        return {"delay": latency, "text": f"Looked up {done} records: all in order."}

    with FakeOpenAI(reply) as srv:
        print(srv.url, flush=True)
        threading.Event().wait()


# -- live and replayed, each in a fresh process --------------------------------------------------


def child(mode: str, url: str, directory: str, runs: int, concurrency: int) -> None:
    """Record `runs` runs live, or replay them as an experiment; print what it cost as JSON."""
    sys.path.insert(0, str(ROOT))
    import asyncio

    import openai
    import openai.types.chat  # imports are not measured: loaded before the clock

    from agentor import Agentor, function_tool
    from agentor.engine.store.file import FileStore

    ran: list[int] = []

    @function_tool
    def lookup(record: int) -> str:
        """Look a record up.

        Args:
            record: Which record.
        """
        ran.append(record)
        return f"record {record}: status active, owner ops, ".ljust(RESULT_BYTES, "x")

    # The client's transport modules load when a first client is made: imports, not measured.
    openai.AsyncOpenAI(api_key="sk-bench", base_url=url)
    # The price tables (genai-prices, ~0.14 s to import) load on the first cost asked for: the
    # first pair measured, once a process. An import, not measured either.
    import genai_prices.data_snapshot  # noqa: F401

    ids = Path(directory) / "baselines.json"
    cpu, loop = time.process_time(), time.thread_time()
    called = time.monotonic()
    agent = Agentor(
        "Records Agent",
        model=LIVE_MODEL,
        instructions="You look records up, one at a time, then say what you found.",
        tools=[lookup],
        store=FileStore(Path(directory) / "runs"),
        max_turns=LOOKUPS + 2,
        base_url=url,
        api_key="sk-bench",
    )
    if mode == "live":
        prompts = [f"Job {i}: look up records 1 to {LOOKUPS}." for i in range(runs)]
        results = asyncio.run(agent.arun(prompts, limit_concurrency=concurrency))
        done = time.monotonic()
        cpu, loop = time.process_time() - cpu, time.thread_time() - loop
        assert all(r.status == "completed" for r in results), [r.status for r in results]
        assert len(ran) == runs * LOOKUPS, len(ran)
        ids.write_text(json.dumps([r.run_id for r in results]))
        print(json.dumps({"cpu": cpu, "loop": loop, "called": called, "done": done}))
        return
    baselines = json.loads(ids.read_text())
    parts = _time_parts()
    exp = asyncio.run(
        agent.aexperiment(
            baselines,
            model=CANDIDATE_MODEL,
            concurrency=concurrency,
            scorers=["same_output", "same_tools"],
        )
    )
    summary = exp.summary  # worked out when first read: what every caller reads, in the clock
    done = time.monotonic()
    cpu, loop = time.process_time() - cpu, time.thread_time() - loop
    assert not ran, f"{len(ran)} tool calls ran: every one should be served"
    assert len(exp.pairs) == runs and not exp.pending, exp
    for pair in exp.pairs:
        assert pair.status == ("completed", "completed"), pair
        assert pair.measures is not None and pair.measures.served == LOOKUPS, pair
        assert pair.scores == {"same_output": True, "same_tools": True}, pair
    # For information, after the clock: what the summary (the paired bootstrap: 10,000
    # resamples of each measure over every pair, once an experiment) took of that CPU.
    from agentor.experiments.experiment import _summary

    assert summary.pairs == runs and summary.regressions == 0, summary
    began = time.process_time()
    _summary(exp.pairs)
    summary_cpu = time.process_time() - began
    got = {"cpu": cpu, "loop": loop, "summary": summary_cpu, "called": called, "done": done}
    print(json.dumps({**got, **parts}))


def _time_parts() -> dict[str, float]:
    """For information: the CPU the experiment's own steps take in their threads (checking
    the baselines before anything is written; measuring, scoring and recording each pair),
    added up as they run (a wrapper around each: the product's code is not changed)."""
    from agentor.experiments import experiment, runner

    parts = {"check": 0.0, "record": 0.0}

    def timed(function: Any, part: str) -> Any:
        def wrapper(*args: Any) -> Any:
            began = time.thread_time()
            try:
                return function(*args)
            finally:
                parts[part] += time.thread_time() - began

        return wrapper

    experiment.check_baselines = timed(experiment.check_baselines, "check")
    runner._PairRunner._record = timed(runner._PairRunner._record, "record")
    return parts


def measure(mode: str, url: str, directory: Path, shape: Shape, log: Path) -> dict[str, Any]:
    """One live recording or one replay, in a fresh process; the candidate requests' first
    arrival at the server too (a replay)."""
    command = [sys.executable, str(HERE / "experiment.py"), "--child", mode, url, str(directory)]
    command += [str(shape.runs), str(shape.concurrency)]
    out = subprocess.run(command, capture_output=True, text=True, cwd=directory)
    if out.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{out.stderr[-4000:]}")
    got: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    model = LIVE_MODEL if mode == "live" else CANDIDATE_MODEL
    arrivals = [
        float(t)
        for m, t in (line.split() for line in log.read_text().splitlines())
        if m == model and float(t) >= got["called"]
    ]
    assert len(arrivals) == shape.turns, f"{len(arrivals)} {model} requests, not {shape.turns}"
    got["first"] = min(arrivals)
    got["wall"] = got["done"] - got["first"]
    got["from_call"] = got["done"] - got["called"]
    got["per_turn"] = got["cpu"] / shape.turns
    return got


def main() -> None:
    import harness

    args = harness.parse_args(__doc__, reps=(int, 3, "live recordings, each replayed"))
    shape = Shape(12, 4, 0.02) if args.quick else Shape(200, 16, 0.2)
    reps = 1 if args.quick else max(1, args.reps)
    got: dict[str, list[dict[str, Any]]] = {"live": [], "replayed": []}
    with tempfile.TemporaryDirectory(prefix="agentor-bench-experiment-") as tmp:
        log = Path(tmp) / "requests.log"
        server = subprocess.Popen(
            [sys.executable, str(HERE / "experiment.py"), "--serve", str(shape.latency), str(log)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            for i in range(reps):
                directory = Path(tmp) / f"rep{i}"
                directory.mkdir()
                got["live"].append(measure("live", url, directory, shape, log))
                got["replayed"].append(measure("replay", url, directory, shape, log))
        finally:
            server.terminate()
            server.wait()
    report(got, shape)


def report(got: dict[str, list[dict[str, Any]]], shape: Shape) -> None:
    import harness

    print(
        f"{NAME}: {shape.runs} runs x {LOOKUPS + 1} turns ({LOOKUPS} tool calls, "
        f"{RESULT_BYTES}-byte results), concurrency {shape.concurrency}, model latency "
        f"{shape.latency * 1000:.0f} ms, FileStore, {len(got['live'])} measure(s), "
        f"{harness.machine()}"
    )
    rows = []
    for side, runs in got.items():
        rows.append(
            [
                side,
                harness.fmt_s(harness.median([r["per_turn"] for r in runs])),
                harness.spread([r["per_turn"] for r in runs]),
                harness.fmt_s(harness.median([r["cpu"] for r in runs])),
                harness.fmt_s(harness.median([r["loop"] for r in runs])),
                harness.fmt_s(harness.median([r["wall"] for r in runs])),
                harness.spread([r["wall"] for r in runs]),
                harness.fmt_s(harness.median([r["from_call"] for r in runs])),
            ]
        )
    harness.table(
        [
            "side",
            "CPU a turn",
            "min..max",
            "CPU",
            "of it the loop's thread",
            "wall",
            "min..max",
            "wall from the call",
        ],
        rows,
    )
    live = harness.median([r["per_turn"] for r in got["live"]])
    replayed = harness.median([r["per_turn"] for r in got["replayed"]])
    wall = harness.median([r["wall"] for r in got["replayed"]])
    # Each replay runs right after its own recording: its CPU is compared with that one's, the
    # machine's load of the moment shared (a shared machine moves both by 20% in a minute).
    pairs = list(zip(got["live"], got["replayed"], strict=True))
    ratios = [r["per_turn"] / b["per_turn"] for b, r in pairs]
    cpu_ratio, wall_ratio = harness.median(ratios), wall / shape.ideal
    print(
        f"wall (first candidate request to the experiment's return) {wall:.2f} s / ideal "
        f"{shape.ideal:.2f} s = {wall_ratio:.3f} (goal <= {WALL_GOAL}); CPU a replayed turn / "
        f"its recording's live turn: {', '.join(f'{x:.3f}' for x in ratios)}, median "
        f"{cpu_ratio:.3f} (goal <= {CPU_GOAL}); the ratio below is the worse over its goal"
    )
    rep = got["replayed"]
    own = {k: harness.median([r[k] for r in rep]) for k in ("check", "record", "summary")}
    replays = [
        (r["cpu"] - r["check"] - r["record"] - r["summary"]) / shape.turns / b["per_turn"]
        for b, r in pairs
    ]
    print(
        f"of the replayed CPU (information): checking the baselines {harness.fmt_s(own['check'])}"
        f", measuring, scoring and recording the pairs {harness.fmt_s(own['record'])}, the "
        f"summary's paired bootstrap (once an experiment, whatever its runs' length) "
        f"{harness.fmt_s(own['summary'])}; the rest (the replays, the runner) "
        f"{harness.median(replays):.3f}x a live turn"
    )
    harness.result_line(
        NAME,
        max(wall_ratio / WALL_GOAL, cpu_ratio / CPU_GOAL),
        f"wall<={WALL_GOAL}x,cpu<={CPU_GOAL}x",
        f"wall:{wall:.2f}s,cpu:{harness.fmt_s(replayed)}/turn",
        f"ideal:{shape.ideal:.2f}s,live:{harness.fmt_s(live)}/turn",
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    elif sys.argv[1:2] == ["--serve"]:
        serve(float(sys.argv[2]), sys.argv[3])
    else:
        main()
