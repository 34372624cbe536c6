"""`agentor fork RUN [--at N] [--result TEXT | --input TEXT] [--model M] --agent SPEC` and
`agentor replay RUN [--model M] [--agent SPEC] [--novel error|stop|run] [--match strict|fifo]
[--instructions FILE] [--set KEY=VALUE]...`: a new run made from a recorded one, run in this
process (agentor.forking).

The fork is written into the store the run is in (`--store`, `--dir`; default `runs`). Its id
comes first (`--fork-id` names it), then each event the fork records after its copy of the
parent, as a line on stdout, then its answer, as `agentor resume` prints them. As for a
resume, the agent must be of the name that wrote the run unless `--any-agent`. Exit status:
0 when the fork completed or waits for approval, 1 when it was refused (a line that cannot be
forked, an id in use) or ended failed / max_turns / diverged, 2 for a usage error, 130 on ^C (a
fork whose first step was saved is left resumable).
"""

from __future__ import annotations

import json
import sys
import uuid
from argparse import Namespace
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentor.agent import Agentor
from agentor.agents import recorded_agent
from agentor.cli.lines import Refusal, UsageError, event_line
from agentor.cli.resume_cmd import agent_for, ending
from agentor.cli.stores import the_run
from agentor.engine.events import FORK, RUN_START, TOOL_WAIT, Event
from agentor.engine.settings import setting_changes
from agentor.engine.store.api import Store
from agentor.engine.store.holding import load_run
from agentor.engine.store.run_ids import RUN_ID_RE, RUN_ID_RULE
from agentor.errors import ModelError, NothingToResumeError, RunLockedError
from agentor.literal import literal_line
from agentor.result import RunResult


def fork(args: Namespace) -> int:
    if args.result is not None and args.at is None:
        raise UsageError("--result replaces a tool result: give --at, the line of a tool_result")
    store, run_id = the_run(args)
    agent = agent_for(args, store, run_id, "fork")
    fork_id = _fork_id(args)
    where = f" at line {args.at}" if args.at is not None else ""
    return _run(
        run_id,
        f"fork {fork_id} of run {run_id}{where}",
        fork_id,
        lambda listener: agent.fork(
            run_id,
            _text(args.input, "--input"),
            at=args.at,
            result=_text(args.result, "--result"),
            model=args.model,
            fork_id=fork_id,
            max_turns=args.max_turns,
            listener=listener,
        ),
    )


def replay(args: Namespace) -> int:
    instructions = _instructions(args.instructions)
    settings = _settings(args.settings)
    store, run_id = the_run(args)
    if args.agent is None:
        agent = _recorded_agent(args, store, run_id)
    else:
        agent = agent_for(args, store, run_id, "replay")
    fork_id = _fork_id(args)
    model = args.model or agent.model.name
    return _run(
        run_id,
        f"replay {fork_id} of run {run_id} with {literal_line(model)}",
        fork_id,
        lambda listener: agent.replay(
            run_id,
            model=args.model,
            fork_id=fork_id,
            novel=args.novel,
            match=args.match,
            instructions=instructions,
            model_settings=settings or None,
            listener=listener,
        ),
    )


def _instructions(path: str | None) -> str | None:
    """`--instructions FILE`: its text (`-`: stdin's)."""
    if path is None:
        return None
    if path == "-":
        return str(_text(path, "--instructions"))
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read --instructions {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--instructions {path} is not UTF-8 text") from None
    if not text.strip():
        raise UsageError(f"--instructions {path} is empty")
    return text


def _settings(pairs: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE`...: the model settings of the replay, each VALUE read as JSON (0.2,
    200, true, ["END"], null) or else as text, checked (agentor.engine.settings)."""
    given: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {literal_line(pair, 80)!r} is not KEY=VALUE")
        try:
            given[key.strip()] = json.loads(text)
        except ValueError:
            given[key.strip()] = text
    try:
        return setting_changes(given)
    except ValueError as exc:
        raise UsageError(f"--set: {exc}") from None


def _recorded_agent(args: Namespace, store: Store, run_id: str) -> Agentor:
    """`replay` without `--agent`: the run's recorded tools and conversation, asked of
    `--model` (default: the run's own model) through the openai client's environment
    (OPENAI_BASE_URL, OPENAI_API_KEY)."""
    if args.novel == "run":
        raise UsageError("--novel run needs --agent: without one no tool can run here")
    if args.any_agent:
        raise UsageError("--any-agent is for --agent")
    try:
        events = load_run(store, run_id)
    except OSError as exc:
        raise Refusal(f"cannot read run {run_id}: {exc.strerror or exc}") from None
    start = next((e for e in events if e.type == RUN_START), None)
    if start is None:
        raise Refusal(f"run {run_id} records no run_start: there is no prompt to replay")
    model = args.model or start.model
    if not model:
        raise UsageError(f"give --model: run {run_id} records no model to ask again")
    return recorded_agent(start, model, store)


def _run(
    run_id: str, header: str, fork_id: str, go: Callable[[Callable[[Event], None]], RunResult]
) -> int:
    """Run the fork: `header` once it is recorded, then what it records after its copy of the
    parent, then its ending."""
    printed: list[Event] = []
    own = False

    def show(event: Event) -> None:
        nonlocal own
        if event.replayed or (event.transient and event.type != TOOL_WAIT):
            return
        if not own:  # the copy of the parent, up to this fork's own marker
            own = event.type == FORK and event.forked_from == run_id
            if own:
                print(header, flush=True)
            return
        printed.append(event)
        print(event_line(event), flush=True)

    try:
        result = go(show)
    except KeyboardInterrupt:
        print(f"interrupted; fork {fork_id} is left resumable if it was saved", file=sys.stderr)
        return 130
    except (ValueError, TypeError, RunLockedError, NothingToResumeError) as exc:
        raise Refusal(str(exc).splitlines()[0]) from None
    except ModelError as exc:  # refused before the fork was written (`forking._usable`)
        raise Refusal(f"{str(exc).splitlines()[0]}; nothing was written") from None
    if not own:
        print(header)
        print(f"run {run_id} needs nothing more: fork {fork_id} is a copy of it")
    return ending(fork_id, result, nothing_new=not printed)


def _fork_id(args: Namespace) -> str:
    if args.fork_id is None:
        return uuid.uuid4().hex
    if not RUN_ID_RE.fullmatch(args.fork_id):
        raise UsageError(f"--fork-id {args.fork_id!r} is not a run id ({RUN_ID_RULE})")
    return str(args.fork_id)


def _text(value: str | None, flag: str) -> Any:
    """A text option's value; `-` reads it from stdin."""
    if value != "-":
        return value
    text = sys.stdin.read()
    if not text.strip():
        raise UsageError(f"{flag} - read nothing from stdin")
    return text
