"""`agentor submit PROMPT --agent SPEC` and `agentor worker --agent SPEC...`: a fleet of
workers finishing runs by themselves (agentor/fleet).

`submit` records a run and prints its id; any worker with an agent of that name runs it.
`worker` runs until SIGTERM or ^C: then each run in hand finishes its turn (the model call in
flight is answered and recorded, the tools it asked for run and are recorded), starts no new
one and is let go, interrupted, for the next worker; the worker exits 0. A second signal
stops the runs at once (a running tool is still waited for) and exits 130. A worker killed
outright leaves its runs to the other workers. What the worker does is one line each on
stdout: `HH:MM:SS  what  RUN  detail`.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from argparse import Namespace

from agentor.agent import Agentor
from agentor.agents import load_agent
from agentor.cli.lines import Refusal, UsageError, clock
from agentor.cli.stores import store_of, where
from agentor.engine.store.run_ids import RUN_ID_RE, RUN_ID_RULE
from agentor.errors import AgentSpecError, RunIdTakenError, RunLockedError
from agentor.fleet.worker import Report, Worker
from agentor.literal import literal_line


def submit(args: Namespace) -> int:
    if len(args.agent) > 1:
        raise UsageError("submit takes one --agent: the agent whose run it is")
    if args.run_id is not None and not RUN_ID_RE.fullmatch(args.run_id):
        raise UsageError(f"--run-id {args.run_id!r} is not a run id ({RUN_ID_RULE})")
    # Piped text ends with the newline `echo` or an editor put there, not part of the message.
    prompt = sys.stdin.read().removesuffix("\n") if args.prompt == "-" else args.prompt
    if not prompt.strip():
        raise UsageError("PROMPT is empty: give the user's message (- reads it from stdin)")
    agent = _agents(args.agent)[0]
    store = store_of(args, make_schema=True)
    try:
        run_id = agent.clone(store=store).submit(prompt, run_id=args.run_id)
    except RunIdTakenError as exc:
        raise Refusal(
            f"run {exc.run_id} exists and was started with a different input: "
            f"agentor resume {exc.run_id} --agent SPEC continues it, or give another --run-id"
        ) from None
    except (ValueError, RunLockedError) as exc:
        raise Refusal(str(exc)) from None
    except OSError as exc:  # an entry named so that is no log (a directory, a symlink)
        raise Refusal(f"cannot read run {args.run_id}: {exc.strerror or exc}") from None
    print(run_id)
    return 0


def worker(args: Namespace) -> int:
    agents = _agents(args.agent)
    if not args.poll > 0:
        raise UsageError(f"--poll must be more than 0 seconds, not {args.poll}")
    store = store_of(args, pool_size=min(16, args.concurrency // 2 + 4), make_schema=True)
    try:
        fleet = Worker(
            store,
            agents,
            concurrency=args.concurrency,
            retry_failed=args.retry_failed,
            max_attempts=args.max_attempts,
            poll_interval=args.poll,
            name=args.name,
            report=_print,
        )
    except ValueError as exc:  # two agents of one name
        raise UsageError(str(exc)) from None
    names = ", ".join(sorted(fleet.agents.names))
    print(
        literal_line(
            f"worker {fleet.name} on {where(store)}: runs of {names}, up to "
            f"{args.concurrency} at once; woken by {fleet.finder.how}, looking every "
            f"{args.poll:g}s; SIGTERM or ^C lets each run finish its turn, then exits",
            600,
        ),
        flush=True,
    )
    aborted = asyncio.run(_serve(fleet))
    print(f"{clock_now()}  stopped", flush=True)
    return 130 if aborted else 0


async def _serve(fleet: Worker) -> bool:
    """Run the worker; the first SIGTERM / SIGINT stops it, the second aborts (True)."""
    loop = asyncio.get_running_loop()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            fleet.stop()
        else:
            fleet.abort()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    await fleet.run()
    return signals > 1


def _agents(specs: list[str]) -> list[Agentor]:
    try:
        return [load_agent(spec) for spec in specs]
    except AgentSpecError as exc:
        raise UsageError(str(exc)) from None


def _print(report: Report) -> None:
    what = f"{report.kind:<9} {report.run_id or ''}".rstrip()
    print(literal_line(f"{clock_now()}  {what}  {report.text}", 600), flush=True)


def clock_now() -> str:
    return clock(time.time())
