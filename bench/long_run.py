"""long-run: runs of 50, 200 and 500 turns, the CPU of the process running them, ours and
upstream Agentor 0.1.1.

One agent with one tool (`step`, a 400-byte result), on a FileStore, asks a local fake model
(tests/openai_server.FakeOpenAI, in a process of its own) for `step` on every turn until the
last, which is answered with text. Each run is a fresh process: ours with this tree's
interpreter, upstream with agentor==0.1.1 installed by this script in a virtual environment of
its own (`$TMPDIR/agentor-bench-upstream-0.1.1`, kept for the next run), the same server and
the same script for both. A run's figure is the CPU (user + system, every thread) of its
process from after its imports (agentor, openai and its chat types) to the run's end; the tool
notes the process's CPU at each call, which gives the CPU of each turn. Ours and upstream are
interleaved run by run (the order flipped every round) and medians compared.

Goals: 200 turns ours / upstream <= 0.15 (the result line); CPU(200) / CPU(50) <= 5.5 (linear
is 4); at turn 500 <= 3 ms a turn; peak RSS of the 500-turn run reported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAME = "long-run"
GOAL = 0.15
GROWTH_GOAL = 5.5
TURN_GOAL = 0.003  # seconds of CPU a turn, at turn 500
UPSTREAM = "agentor==0.1.1"
RESULT_BYTES = 400
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


# -- a run, in a process of its own (ours or upstream's: no import of this tree here) ----------


def child(turns: int, url: str, directory: str) -> None:
    """Run one `turns`-turn run with whichever `agentor` this interpreter has; print what it
    cost as one JSON line."""
    import resource

    import openai
    import openai.resources.chat.completions.completions
    import openai.types.chat  # imports are not measured: loaded before the clock

    from agentor import Agentor, function_tool
    from agentor.engine.store import FileStore  # upstream's path: the child runs on both sides

    # The client's transport modules load when a first client is made: imports, not measured.
    openai.AsyncOpenAI(api_key="sk-bench", base_url=url)
    started = time.process_time()  # the agent's making is measured: upstream's makes its client
    marks: list[float] = []

    @function_tool
    def step(n: int) -> str:
        """Do step n.

        Args:
            n: Which step.
        """
        marks.append(time.process_time())
        return f"step {n} done: ".ljust(RESULT_BYTES, "x")

    agent = Agentor(
        name="Long Run",
        model="gpt-4o-mini",
        instructions="You are a patient agent: take every step you are asked to.",
        tools=[step],
        store=FileStore(directory),
        max_turns=turns + 1,
        base_url=url,
        api_key="sk-bench",
    )
    wall = time.perf_counter()
    result = agent.run(f"Take {turns} steps.")
    cpu, wall = time.process_time() - started, time.perf_counter() - wall
    assert result.status == "completed", result
    assert len(marks) == turns - 1, len(marks)
    turn_cpu = [b - a for a, b in zip([started, *marks], marks, strict=False)]
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"cpu": cpu, "wall": wall, "turns": turn_cpu, "rss": peak_kb * 1024}))


def serve() -> None:
    """The fake model, in a process of its own: `step` until the prompt's count, then text."""
    sys.path.insert(0, str(ROOT))
    import re
    import threading

    from tests.openai_server import FakeOpenAI

    def reply(request: dict) -> dict:
        messages = request.get("messages", [])
        prompt = next(m["content"] for m in messages if m.get("role") == "user")
        turns = int(re.search(r"\d+", prompt).group())
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done + 1 >= turns:
            return {"text": f"Done: {done} steps."}
        return {"calls": [["step", {"n": done + 1}]]}

    with FakeOpenAI(reply) as srv:
        print(srv.url, flush=True)
        threading.Event().wait()


# -- the bench ---------------------------------------------------------------------------------


def upstream_python(install: bool = True) -> Path | None:
    """The interpreter of a virtual environment holding upstream Agentor, made once (~1-3 min:
    ~100 packages) unless `install` is False; None then if there is none yet."""
    venv = Path(tempfile.gettempdir()) / "agentor-bench-upstream-0.1.1"
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import agentor, sys; sys.exit(agentor.__version__ != '0.1.1')"]
    # Run from elsewhere: from this tree, `-c` would import this tree's agentor.
    ready = {"capture_output": True, "cwd": tempfile.gettempdir()}
    if python.exists() and subprocess.run(check, **ready).returncode == 0:
        return python
    if not install:
        return None
    print(f"installing {UPSTREAM} into {venv} (once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", UPSTREAM]
    subprocess.run(pip, check=True, capture_output=True)
    subprocess.run(check, check=True, cwd=tempfile.gettempdir())
    return python


def measure(python: Path, turns: int, url: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="agentor-bench-long-") as tmp:
        out = subprocess.run(
            [str(python), str(HERE / "long_run.py"), "--child", str(turns), url, tmp],
            capture_output=True,
            text=True,
            cwd=tmp,  # neither side imports this tree by accident
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
    if out.returncode != 0:
        raise RuntimeError(f"{python} {turns} turns failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def at_turn(run: dict, turn: int, window: int = 20) -> float:
    """The median CPU of the turns just before `turn` (one turn's figure is noisy)."""
    import statistics

    turns = run["turns"][: turn - 1][-window:]
    return statistics.median(turns)


def main() -> None:
    import harness

    args = harness.parse_args(
        __doc__,
        reps=(int, 3, "repetitions of each length, ours and upstream interleaved"),
        upstream_500=(int, 1, "upstream runs of the longest length (each is ~1 min of CPU)"),
    )
    lengths, reps = ((5, 12, 20), 1) if args.quick else ((50, 200, 500), args.reps)
    # The quick check (tests/test_bench_quick.py) does not wait minutes for an install: it runs
    # upstream only when a full run installed it before.
    ours_python, theirs_python = Path(sys.executable), upstream_python(install=not args.quick)
    server = subprocess.Popen(
        [str(ours_python), str(HERE / "long_run.py"), "--serve"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        got: dict[tuple[str, int], list[dict]] = {}
        for turns in lengths:
            longest = turns == lengths[-1]
            cases = [("ours", ours_python), ("upstream", theirs_python)]
            if theirs_python is None:
                cases = cases[:1]
            for i in range(reps):
                for side, python in cases if i % 2 == 0 else cases[::-1]:
                    if side == "upstream" and longest and i >= args.upstream_500:
                        continue
                    if side == "upstream" and args.quick and turns != lengths[1]:
                        continue  # the quick check: upstream once, for the ratio's length
                    got.setdefault((side, turns), []).append(measure(python, turns, url))
    finally:
        server.terminate()
        server.wait()
    report(got, lengths)


def report(got: dict[tuple[str, int], list[dict]], lengths: tuple[int, ...]) -> None:
    import harness

    short, middle, longest = lengths

    def cpu(side: str, turns: int) -> float:
        runs = got.get((side, turns))
        return harness.median([r["cpu"] for r in runs]) if runs else float("nan")

    print(f"{NAME}: one tool ({RESULT_BYTES}-byte result), FileStore, {harness.machine()}")
    if not any(side == "upstream" for side, _ in got):
        print(f"upstream: not installed yet (a run without --quick installs {UPSTREAM})")
    rows = []
    for turns in lengths:
        for side in ("ours", "upstream"):
            runs = got.get((side, turns), [])
            if not runs:
                continue
            rows.append(
                [
                    f"{turns} turns",
                    side,
                    harness.fmt_s(harness.median([r["cpu"] for r in runs])),
                    harness.spread([r["cpu"] for r in runs]),
                    harness.fmt_s(harness.median([r["cpu"] / turns for r in runs])),
                    harness.fmt_s(harness.median([at_turn(r, turns) for r in runs]))
                    + f" ({harness.spread([at_turn(r, turns) for r in runs])})",
                    harness.fmt_s(harness.median([r["wall"] for r in runs])),
                    harness.fmt_bytes(max(r["rss"] for r in runs)),
                    len(runs),
                ]
            )
    harness.table(
        [
            "run",
            "side",
            "CPU",
            "min..max",
            "per turn",
            "a turn at the end",
            "wall",
            "peak RSS",
            "n",
        ],
        rows,
    )
    ratio = cpu("ours", middle) / cpu("upstream", middle)
    growth = cpu("ours", middle) / cpu("ours", short)
    end = harness.median([at_turn(r, longest) for r in got[("ours", longest)]])
    print(
        f"ours / upstream at {middle} turns: {ratio:.3f} (goal <= {GOAL}); "
        f"CPU({middle}) / CPU({short}): ours {growth:.2f} (goal <= {GROWTH_GOAL}), upstream "
        f"{cpu('upstream', middle) / cpu('upstream', short):.2f}; at turn {longest}: "
        f"{harness.fmt_s(end)} a turn (goal <= {harness.fmt_s(TURN_GOAL)})"
    )
    harness.result_line(
        NAME,
        ratio,
        f"<={GOAL}",
        harness.fmt_s(cpu("ours", middle)),
        harness.fmt_s(cpu("upstream", middle)),
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif sys.argv[1:2] == ["--serve"]:
        serve()
    else:
        main()
