"""`Agentor.fork` and `Agentor.replay`: run a copy of a recorded run from one of its steps.

A fork is a new run. It reads its parent once and never writes to it (the parent's bytes stay
as they were). It is written as a new run is: under its own lock, its copy of the parent, its
`fork` event, its `run_start` (and a tool_result fork's results) saved at once, before the
model is asked, so a fork stopped or killed after that is an interrupted run that a resume
finishes, its parent deleted or not. What it copies and where it goes on is
agentor.engine.fork.plan; its `fork` event is agentor.engine.fork_mark.

A replay is a fork from the start (with another model, instructions or settings, when given)
whose tool calls are answered from the parent's recorded results
(agentor.engine.fork.recording).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from agentor.engine.events import RUN_START, Event
from agentor.engine.fork.plan import ForkPlan, plan_fork
from agentor.engine.fork.recording import recorded_results
from agentor.engine.fork_mark import (
    EXPERIMENT,
    MATCH,
    MATCH_POLICIES,
    NOVEL,
    NOVEL_POLICIES,
    RECORDING,
)
from agentor.engine.inputs import Input, check_input
from agentor.engine.log.format import BadLine
from agentor.engine.loop import Listener
from agentor.engine.models import Model, OpenAIModel
from agentor.engine.settings import ModelSettings, setting_changes
from agentor.engine.store.api import BatchStore, Store
from agentor.engine.store.holding import holding, load_if_any, load_lines
from agentor.engine.store.run_ids import validate_run_id
from agentor.result import RunResult, from_log, settled


class Agent(Protocol):
    """What a fork asks of the agent that runs it: an `Agentor` (agent.py imports this module,
    so it is named by what it does)."""

    model: Model

    def clone(self, **changes: Any) -> Agent: ...

    def _require_store(self, what: str = "resume") -> Store: ...

    def _structured(self, result: RunResult) -> RunResult: ...

    def _input_messages(self, input: Input) -> list[dict[str, Any]]: ...

    async def _continue(
        self,
        store: Store,
        run_id: str,
        events: list[Event],
        listener: Listener | None,
        opening: tuple[Sequence[Event], Sequence[Event]] = ((), ()),
    ) -> RunResult: ...


async def fork_run(
    agent: Agent,
    run_id: str,
    input: Input | None = None,
    *,
    at: int | None = None,
    result: Any = None,
    model: str | Model | None = None,
    fork_id: str | None = None,
    max_turns: int | None = None,
    listener: Listener | None = None,
) -> RunResult:
    """`Agentor.afork` (see there)."""
    if input is not None:
        check_input(input)
    _check_json(result)
    store, fork_id = _ids(agent, run_id, fork_id)
    runner = _runner(agent, model, max_turns)
    lines = await asyncio.to_thread(load_lines, store, run_id)
    plan = plan_fork(
        run_id,
        lines,
        time.time(),
        at=at,
        result=result,
        added=None if input is None else _user_messages(input),
        prompt=None if input is None else agent._input_messages(input),
        model=runner.model.name if model is not None else None,
    )
    whole_and_settled = at is None and input is None and settled(plan.events)
    if whole_and_settled and (model is not None or max_turns is not None):
        raise ValueError(
            f"run {run_id} needs nothing more: a fork of the whole run would ask no model; "
            "give input= (a new message) or at= (a line to fork at)"
        )
    try:
        if model is not None and not whole_and_settled:
            await _usable(runner.model)
        return await _run_plan(runner, store, run_id, fork_id, plan, listener, whole_and_settled)
    finally:
        await _release(runner, agent)


async def replay_run(
    agent: Agent,
    run_id: str,
    *,
    model: str | Model | None = None,
    fork_id: str | None = None,
    novel: str = "error",
    match: str = "strict",
    instructions: str | None = None,
    model_settings: ModelSettings | dict[str, Any] | None = None,
    experiment: str | None = None,
    listener: Listener | None = None,
    lines: Sequence[Event | BadLine] | None = None,
) -> RunResult:
    """`Agentor.areplay` (see there)."""
    replay = _replay_options(novel, match, instructions, experiment)
    changes = setting_changes(model_settings) if model_settings is not None else {}
    store, fork_id = _ids(agent, run_id, fork_id)
    runner = _with_settings(_runner(agent, model, None), changes)
    if lines is None:
        lines = await asyncio.to_thread(load_lines, store, run_id)
    events = [e for e in lines if isinstance(e, Event)]
    starts = (i for i, e in enumerate(lines) if isinstance(e, Event) and e.type == RUN_START)
    start = next(starts, None)
    if start is None:
        raise ValueError(f"run {run_id} records no run_start: there is no prompt to replay")
    replay[RECORDING] = recorded_results(events)
    prompt = None
    if instructions is not None:
        prompt = _instructed(next(e for e in events if e.type == RUN_START), instructions)
    plan = plan_fork(
        run_id,
        lines,
        time.time(),
        at=start + 1,
        prompt=prompt,
        model=runner.model.name,
        replay=replay,
    )
    try:
        await _usable(runner.model)
        return await _run_plan(runner, store, run_id, fork_id, plan, listener, False)
    finally:
        await _release(runner, agent)


def _replay_options(
    novel: str, match: str, instructions: str | None, experiment: str | None
) -> dict[str, Any]:
    """A replay's options, checked (`ValueError`, one line), as its `fork` event's `replay`
    keeps them (its recording is added to it)."""
    if novel not in NOVEL_POLICIES:
        raise ValueError(f"novel= is one of {', '.join(map(repr, NOVEL_POLICIES))}, not {novel!r}")
    if match not in MATCH_POLICIES:
        raise ValueError(f"match= is one of {', '.join(map(repr, MATCH_POLICIES))}, not {match!r}")
    if instructions is not None and not isinstance(instructions, str):
        raise TypeError(f"instructions= is a string, not {type(instructions).__name__}")
    replay: dict[str, Any] = {NOVEL: novel, MATCH: match}
    if experiment is not None:
        if not isinstance(experiment, str) or not experiment.strip():
            raise ValueError(
                f"experiment= is an experiment id (a non-empty string), not {experiment!r}"
            )
        replay[EXPERIMENT] = experiment
    return replay


def _instructed(start: Event, instructions: str) -> list[dict[str, Any]]:
    """The prompt `start` recorded with its system message (the first) replaced by
    `instructions`, or with them put first when it had none."""
    messages = [dict(m) for m in start.messages or ()]
    at = next((i for i, m in enumerate(messages) if m.get("role") == "system"), None)
    if at is None:
        return [{"role": "system", "content": instructions}, *messages]
    messages[at] = {"role": "system", "content": instructions}
    return messages


def _with_settings(runner: Agent, changes: dict[str, Any]) -> Agent:
    """`runner` asking a copy of its model with `changes` made to its settings (None drops
    one): a replay's `model_settings=`. Only a model on an OpenAI-compatible endpoint has
    settings to change (`ValueError` else)."""
    if not changes:
        return runner
    model = runner.model
    if not isinstance(model, OpenAIModel):
        raise ValueError(
            f"model_settings= changes the settings of a model on an OpenAI-compatible endpoint; "
            f"model {model.name} is a {type(model).__name__}"
        )
    twin = model.renamed(model.name)  # its own settings, client and connections
    for name, value in changes.items():
        if value is None:
            twin.settings.pop(name, None)
        else:
            twin.settings[name] = value
    return runner.clone(model=twin)


async def _run_plan(
    runner: Agent,
    store: Store,
    run_id: str,
    fork_id: str,
    plan: ForkPlan,
    listener: Listener | None,
    snapshot: bool,
) -> RunResult:
    """Write the fork as planned, under its lock: a copy alone when it needs nothing more,
    else with its run_start, and run it."""
    async with holding(store, fork_id):
        if await asyncio.to_thread(load_if_any, store, fork_id):
            raise ValueError(f"run {fork_id} already exists: choose an unused fork_id")
        if snapshot:
            await asyncio.to_thread(_write, store, fork_id, plan.events)
            return runner._structured(from_log(fork_id, plan.events, listener))
        try:
            return await runner._continue(
                store, fork_id, [], listener, opening=(plan.before, plan.after)
            )
        except Exception as exc:
            exc.add_note(f"fork {fork_id} of run {run_id}: resume it to retry if it was saved")
            raise


async def _usable(model: Model) -> None:
    """Refuse, before anything is written, a model that cannot be built or reached (a model
    that can tell, `OpenAIModel.check`): a fork would be left behind failed at its first
    request. `ModelError`."""
    check = getattr(model, "check", None)
    if callable(check):
        await check()


def _ids(agent: Agent, run_id: str, fork_id: str | None) -> tuple[Store, str]:
    store = agent._require_store("fork")
    validate_run_id(run_id)
    if fork_id is None:
        return store, uuid.uuid4().hex
    validate_run_id(fork_id)
    if fork_id == run_id:
        raise ValueError(f"fork_id={fork_id!r} is the run forked: a fork is a new run")
    return store, fork_id


def _runner(agent: Agent, model: str | Model | None, max_turns: int | None) -> Agent:
    changes: dict[str, Any] = {}
    if model is not None:
        changes["model"] = model
    if max_turns is not None:
        changes["max_turns"] = max_turns
    return agent.clone(**changes) if changes else agent


async def _release(runner: Agent, agent: Agent) -> None:
    """A model made for this fork (another `model=`) lets its connections go with it: they
    belong to this event loop, which `fork()` closes."""
    if runner.model is not agent.model:
        close = getattr(runner.model, "aclose", None)
        if close is not None:
            await close()


def _user_messages(input: Input) -> list[dict[str, Any]]:
    """The messages `input=` adds after a conversation (as upstream's fork adds them)."""
    if isinstance(input, str):
        return [{"role": "user", "content": input}]
    return [dict(m) for m in input]


def _check_json(result: Any) -> None:
    """A tool result is written to the log as JSON: refuse one that cannot be, up front."""
    try:
        json.dumps(result)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"result= must be a JSON value (a str, say): {exc}") from None


def _write(store: Store, run_id: str, events: list[Event]) -> None:
    if isinstance(store, BatchStore):
        store.append_many(run_id, events)
    else:
        for e in events:
            store.append(run_id, e)
