"""Write the sample runs in `runs/` with the real engine: `make samples`.

    python scripts/make_samples.py [--out runs]

Every sample is a real run of a real agent, driven by the offline `DemoModel` and saved by
`FileStore`. Its model is recorded as gpt-4o-mini (`sample_agents.SAMPLE_MODEL`), a model
the bundled price table prices, so the cost column shows what the runs cost. The crashed
ones are real crashes: a child process running the agent is killed with SIGKILL at the
moment the sample names. The samples are written to a fresh directory and
then replace the run logs in `--out` (any other `*.jsonl` there is removed too), with a
`manifest.json` (sample -> run id and the status a reader should show) and a `README.md`.
Rerunning gives the same runs under the same ids; only times, pids and call ids differ.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: make `examples` importable

from agentor import Agentor  # noqa: E402
from agentor.engine.events import RUN_START, TOOL_CALL, TOOL_RESULT, Event  # noqa: E402
from agentor.engine.store.file import FileStore  # noqa: E402
from examples.weather import build_agent, get_weather  # noqa: E402
from scripts.sample_agents import (  # noqa: E402
    EndpointOutage,
    HangAfter,
    sample_model,
    slow_weather,
    trip_planner,
)

# The run that waits for a person: the demo model looks the weather up, then asks to book.
APPROVAL_PROMPT = "Book a hotel in Rome for two nights and check the weather there."
# Run ids are uuid5 of the sample name, so a rerun rewrites the same files.
ID_NAMESPACE = uuid.UUID("6f1d2a0e-5a0b-4c52-9f57-2d3c1f0b7a41")
CRASH_TIMEOUT = 30.0  # seconds a child may take to reach its crash point


@dataclass
class Sample:
    name: str
    expect: str  # what a reader shows: completed | interrupted | failed | max_turns | ...
    what: str
    run_id: str = ""


SAMPLES = [
    Sample("completed", "completed", "one tool call, then the answer"),
    Sample("parallel_tools", "completed", "three get_weather calls in one generation"),
    Sample("long_run", "completed", "a trip planner: 31 turns, three tools, one call a turn"),
    Sample("max_turns", "max_turns", "stopped by max_turns=3 halfway through five cities"),
    Sample("failed", "failed", "the model endpoint went away after the first turn"),
    Sample(
        "resumed",
        "completed",
        "killed while one of two tools slept, then resumed: two segments, the finished "
        "tool's result replayed, not re-run",
    ),
    Sample("crashed_inside_tool", "interrupted", "killed (SIGKILL) while get_weather slept"),
    Sample(
        "crashed_after_tool_result",
        "interrupted",
        "killed (SIGKILL) after the tool result was saved, while the model was answering: "
        "the guide's worked example",
    ),
    Sample(
        "awaiting_approval",
        "awaiting_approval",
        "the weather looked up, then book_hotel (which needs a person's approval) waits: "
        "approve it (a), edit it (e) or reject it (n) in the TUI, or with agentor approve",
    ),
]


def sample_run_id(name: str) -> str:
    return uuid.uuid5(ID_NAMESPACE, name).hex


# -- the trip planner of the long run ---------------------------------------------------------


async def child(out: Path, name: str, prompt: str, hang_after: int | None, slow: set[str]) -> None:
    """Start the run and print its id; the parent kills this process at the crash point."""
    model = HangAfter(hang_after) if hang_after is not None else sample_model()
    tools = [slow_weather(slow)] if slow else [get_weather]
    agent = build_agent(FileStore(out), model=model, tools=tools)
    async for event in agent.stream_chat(prompt, run_id=sample_run_id(name)):
        if event.type == RUN_START:
            print(f"RUN_ID {event.run_id}", flush=True)
    raise SystemExit(f"sample {name}: the run finished instead of reaching its crash point")


def crash(
    out: Path,
    name: str,
    prompt: str,
    ready: Callable[[list[Event]], bool],
    *,
    hang_after: int | None = None,
    slow: Sequence[str] = (),
) -> str:
    """Run the agent in a child process and SIGKILL it once it waits as planned and `ready`
    holds for the saved events. Returns the run id."""
    cmd = [sys.executable, __file__, "--out", str(out), "--child", name, "--prompt", prompt]
    if hang_after is not None:
        cmd += ["--hang-after", str(hang_after)]
    for city in slow:
        cmd += ["--slow", city]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if not first.startswith("RUN_ID "):
            raise SystemExit(f"sample {name}: the child process failed (exit {proc.wait()})")
        run_id = first.split()[1]
        # The child says when it is stuck where it should be (in the tool, or in the model).
        if not proc.stdout.readline().startswith(("SLEEPING", "WAITING")):
            raise SystemExit(f"sample {name}: the child ended early (exit {proc.wait()})")
        store = FileStore(out)
        deadline = time.monotonic() + CRASH_TIMEOUT
        while not ready(store.load_with_errors(run_id)[0]):
            if time.monotonic() > deadline:
                raise SystemExit(f"sample {name}: the crash point was never reached")
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return run_id
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _count(events: list[Event], kind: str) -> int:
    return sum(1 for e in events if e.type == kind)


# -- the samples ------------------------------------------------------------------------------


def make(out: Path) -> dict[str, str]:
    """Write every sample into the empty directory `out`; returns sample name -> run id."""
    store = FileStore(out)
    weather = build_agent(store, model=sample_model())
    ids: dict[str, str] = {}

    def run(name: str, agent: Agentor, prompt: str) -> None:
        ids[name] = agent.run(prompt, run_id=sample_run_id(name)).run_id or ""

    run("completed", weather, "What is the weather in Lisbon?")
    run("parallel_tools", weather, "What is the weather in London, Paris and Tokyo?")
    run(
        "long_run",
        trip_planner(store),
        "Plan a rail trip, one stop at a time: Amsterdam, Brussels, Paris, Lyon, Geneva, "
        "Zurich, Munich, Vienna, Budapest and Prague.",
    )
    run(
        "max_turns",
        build_agent(store, model=sample_model(), max_turns=3),
        "Check the weather one city at a time: Berlin, Madrid, Rome, Vienna and Prague.",
    )
    outage = EndpointOutage(answers=1)
    try:
        run("failed", build_agent(store, model=outage), "Is it warm in Sydney and Melbourne?")
    finally:
        outage.close()

    ids["resumed"] = crash(
        out,
        "resumed",
        "What is the weather in Oslo and Helsinki?",
        lambda events: _count(events, TOOL_RESULT) == 1,
        slow=["Helsinki"],
    )
    weather.resume(ids["resumed"])  # in this process: Oslo's result is replayed

    ids["crashed_inside_tool"] = crash(
        out,
        "crashed_inside_tool",
        "What is the weather in Reykjavik?",
        lambda events: _count(events, TOOL_CALL) == 1,
        slow=["Reykjavik"],
    )
    ids["crashed_after_tool_result"] = crash(
        out,
        "crashed_after_tool_result",
        "What is the weather in London?",
        lambda events: _count(events, TOOL_RESULT) == 1,
        hang_after=1,
    )
    run("awaiting_approval", weather, APPROVAL_PROMPT)
    return ids


README = """\
# Sample runs

Real run logs, written by `scripts/make_samples.py` (`make samples` rewrites them) with the
real engine and the offline demo model of `examples/demo_model.py`, recorded under the name
gpt-4o-mini (the weather example's model when an OpenAI key is set), so their cost is priced
as that model's. The interrupted ones are real crashes: a child process running the agent was
killed with SIGKILL at the moment named. `manifest.json` maps each sample to its run id and
the status a reader should show.

| sample | run id | status | what happened |
|---|---|---|---|
{rows}

Open them with `make demo` (a scratch copy, with the weather agent on the offline model, whose
own name is offline-demo: what the demo writes names it, and a fork at a generation asks it
again offline under that name) and press `r` on an interrupted, failed or max_turns run; on
the run awaiting approval press `enter`, then `a` to approve the booking (`e` edits its
arguments first, `n` rejects it): the run goes on at once. Or, without the TUI:

    cp -r runs /tmp/runs && AGENTOR_RUNS=/tmp/runs python examples/weather.py --resume {example}
    agentor approve {waiting} --dir /tmp/runs
    AGENTOR_RUNS=/tmp/runs python examples/weather.py --resume {waiting}
"""


def publish(new: Path, out: Path, ids: dict[str, str]) -> None:
    """Replace the run logs in `out` with the ones in `new`, and write manifest and README."""
    out.mkdir(parents=True, exist_ok=True)
    for old in [*out.glob("*.jsonl"), *out.glob("*.jsonl.torn")]:
        old.unlink()
    for path in sorted(new.glob("*.jsonl")):
        shutil.copyfile(path, out / path.name)
    manifest = {s.name: {"run_id": ids[s.name], "expect": s.expect} for s in SAMPLES}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    rows = "\n".join(f"| {s.name} | `{ids[s.name]}` | {s.expect} | {s.what} |" for s in SAMPLES)
    (out / "README.md").write_text(
        README.format(
            rows=rows,
            example=ids["crashed_after_tool_result"],
            waiting=ids["awaiting_approval"],
        )
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="runs", help="where the samples go (default: runs)")
    p.add_argument("--child", metavar="SAMPLE", help=argparse.SUPPRESS)
    p.add_argument("--prompt", help=argparse.SUPPRESS)
    p.add_argument("--hang-after", type=int, help=argparse.SUPPRESS)
    p.add_argument("--slow", action="append", default=[], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    out = Path(args.out)
    if args.child:
        asyncio.run(child(out, args.child, args.prompt, args.hang_after, set(args.slow)))
        return 0
    with tempfile.TemporaryDirectory(prefix="agentor-samples-") as tmp:
        ids = make(Path(tmp))
        publish(Path(tmp), out, ids)
    size = sum(p.stat().st_size for p in out.glob("*.jsonl"))
    print(f"wrote {len(ids)} sample runs to {out}/ ({size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
