"""`agentor resume RUN --agent SPEC [--store DIR|DSN] [--any-agent]`: finish a run in this
process, each event printed as a line on stdout as it is recorded.

The new segment is written into the store named (`--store`, `--dir`; default `runs`), whatever
store the agent module was built with. A run is
resumed only by an agent of the name that wrote it (its segment would be recorded under the
resuming agent's name, model and tools) unless `--any-agent` is given. Exit status: 0 when
the run completed or waits for approval, 1 when it was refused or ended failed / max_turns,
130 when interrupted (^C): the run is left resumable.
"""

from __future__ import annotations

import sys
from argparse import Namespace

from agentor.agent import Agentor
from agentor.agents import AgentSet, agent_mismatch, load_agent
from agentor.cli.lines import Refusal, UsageError, compact, event_line, plural
from agentor.cli.stores import the_run
from agentor.collect.origin import collected_from
from agentor.engine.events import TOOL_WAIT, Event
from agentor.engine.history import RunSummary, fold
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.api import Store
from agentor.engine.store.holding import load_run
from agentor.errors import AgentSpecError, NothingToResumeError, RunLockedError, RunNotFoundError
from agentor.literal import literal, literal_line
from agentor.result import RunResult


def resume(args: Namespace) -> int:
    store, run_id = the_run(args)
    agent = agent_for(args, store, run_id, "resume")
    printed: list[Event] = []

    def show(event: Event) -> None:
        if event.replayed or (event.transient and event.type != TOOL_WAIT):
            return
        printed.append(event)
        print(event_line(event), flush=True)

    try:
        result = agent.resume(run_id, listener=show)
    except KeyboardInterrupt:
        print(f"agentor resume: interrupted; run {run_id} is left resumable", file=sys.stderr)
        return 130
    except (RunLockedError, RunNotFoundError, NothingToResumeError) as exc:
        raise Refusal(str(exc)) from None
    return ending(run_id, result, nothing_new=not printed)


def agent_for(args: Namespace, store: Store, run_id: str, verb: str) -> Agentor:
    """The `--agent` agent, writing into `store`; refused when another agent name wrote the
    run, unless `--any-agent` (`verb`: what it would do to the run, for the refusal)."""
    try:
        agent = load_agent(args.agent)
    except AgentSpecError as exc:
        raise UsageError(str(exc)) from None
    try:
        events = load_run(store, run_id)
    except OSError as exc:
        raise Refusal(f"cannot read run {run_id}: {exc.strerror or exc}") from None
    made_by = collected_from(events)
    if made_by is not None and verb != "replay":
        raise Refusal(
            f"run {run_id} was collected ({made_by}): there is no agent here to {verb} it; "
            "replay it with a model instead (agentor replay RUN --model M)"
        )
    agents = AgentSet([agent], any_agent=args.any_agent)
    run_agent = fold(RunSummary(run_id=run_id), events).agent
    if agents.for_run(run_agent) is None:
        why = agent_mismatch(agent, run_agent)
        raise Refusal(f"{why} (add --any-agent to {verb} it with that agent anyway)")
    return agents.writing_to(agent, store)


def ending(run_id: str, result: RunResult, nothing_new: bool) -> int:
    """What the resume came to, on stdout; a failed run is a refusal (exit status 1)."""
    already = " already" if nothing_new else ""
    if result.status == COMPLETED:
        print(f"run {run_id} is{already} completed:")
        print(literal(result.final_output or ""))
        return 0
    if result.status == AWAITING_APPROVAL:
        print(f"run {run_id} waits for approval of {plural(len(result.pending), 'call')}:")
        for p in result.pending:
            why = f"  ({p.reason})" if p.reason else ""
            print("  " + literal_line(f"{p.call_id}  {p.name} {compact(p.args)}{why}", 300))
        print(f"decide with: agentor approve|reject {run_id} [CALL], then resume it again")
        if any(p.interrupted for p in result.pending):
            print(
                f"an interrupted call may be given the result it had: agentor approve {run_id} "
                "CALL --result TEXT"
            )
        return 0
    raise Refusal(f"run {run_id} ended {result.status}: {result.error or 'no error recorded'}")
