"""`Agentor.fork` and `Agentor.replay`: run a copy of a recorded run from one of its steps.

A fork is a new run. It reads its parent once and never writes to it (the parent's bytes stay
as they were). It is written as a new run is: under its own lock, its copy of the parent, its
`fork` event, its `run_start` (and a tool_result fork's results) saved at once, before the
model is asked, so a fork stopped or killed after that is an interrupted run that a resume
finishes, its parent deleted or not. What it copies and where it goes on is
agentor.engine.fork.plan; its `fork` event is agentor.engine.fork_mark; the run session
(agentor.session.run.RunSession.fork) writes and runs it.

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
from typing import Any

from agentor.engine.events import RUN_START, Event
from agentor.engine.fork.plan import plan_fork
from agentor.engine.fork.recording import recorded_results
from agentor.engine.fork_mark import (
    EXPERIMENT,
    MATCH,
    MATCH_POLICIES,
    MODEL_SETTINGS,
    NOVEL,
    NOVEL_POLICIES,
    RECORDING,
)
from agentor.engine.inputs import Input, check_input
from agentor.engine.log.format import BadLine
from agentor.engine.loop import Listener
from agentor.engine.models import Model, OpenAIModel
from agentor.engine.settings import ModelSettings, setting_changes
from agentor.engine.store.api import Store
from agentor.engine.store.holding import load_lines
from agentor.engine.store.run_ids import validate_run_id
from agentor.result import RunResult, settled
from agentor.session.config import AgentConfig, model_named
from agentor.session.options import CallOptions, let_go
from agentor.session.run import RunSession


async def fork_run(
    config: AgentConfig,
    run_id: str,
    input: Input | None = None,
    *,
    at: int | None = None,
    result: Any = None,
    model: str | Model | None = None,
    fork_id: str | None = None,
    max_turns: int | None = None,
    listener: Listener | None = None,
    tracing: Any = None,
) -> RunResult:
    """`Agentor.afork` (see there)."""
    if input is not None:
        check_input(input)
    _check_json(result)
    store, fork_id = _ids(config, run_id, fork_id)
    options = CallOptions.checked(config, max_turns=max_turns, tracing=tracing, model=model)
    session = RunSession(config, options, listener)
    lines = await asyncio.to_thread(load_lines, store, run_id)
    plan = plan_fork(
        run_id,
        lines,
        time.time(),
        at=at,
        result=result,
        added=None if input is None else _user_messages(input),
        prompt=None if input is None else config.input_messages(input),
        model=session.model.name if model is not None else None,
    )
    whole_and_settled = at is None and input is None and settled(plan.events)
    if whole_and_settled and (model is not None or max_turns is not None):
        raise ValueError(
            f"run {run_id} needs nothing more: a fork of the whole run would ask no model; "
            "give input= (a new message) or at= (a line to fork at)"
        )
    try:
        if model is not None and not whole_and_settled:
            await _usable(session.model)
        return await session.fork(store, run_id, fork_id, plan, whole_and_settled)
    finally:
        await _release(session, config)


async def replay_run(
    config: AgentConfig,
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
    if changes:  # kept with the replay: a resume asks with them again
        replay[MODEL_SETTINGS] = changes
    store, fork_id = _ids(config, run_id, fork_id)
    chosen = config.model if model is None else model_named(config.model, model)
    session = RunSession(config, CallOptions(model=_with_settings(chosen, changes)), listener)
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
        model=session.model.name,  # kept in its edit: a resume asks this model again
        replay=replay,
    )
    try:
        await _usable(session.model)
        return await session.fork(store, run_id, fork_id, plan, False)
    finally:
        await _release(session, config)


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


def _with_settings(model: Model, changes: dict[str, Any]) -> Model:
    """A copy of `model` with `changes` made to its settings (None drops one): a replay's
    `model_settings=`. Only a model on an OpenAI-compatible endpoint has settings to change
    (`ValueError` else)."""
    if not changes:
        return model
    if not isinstance(model, OpenAIModel):
        raise ValueError(
            f"model_settings= changes the settings of a model on an OpenAI-compatible endpoint; "
            f"model {model.name} is a {type(model).__name__}"
        )
    return model.with_settings(changes)  # its own client and connections


async def _usable(model: Model) -> None:
    """Refuse, before anything is written, a model that cannot be built or reached (a model
    that can tell, `OpenAIModel.check`): a fork would be left behind failed at its first
    request. `ModelError`."""
    check = getattr(model, "check", None)
    if callable(check):
        await check()


def _ids(config: AgentConfig, run_id: str, fork_id: str | None) -> tuple[Store, str]:
    store = config.require_store("fork")
    validate_run_id(run_id)
    if fork_id is None:
        return store, uuid.uuid4().hex
    validate_run_id(fork_id)
    if fork_id == run_id:
        raise ValueError(f"fork_id={fork_id!r} is the run forked: a fork is a new run")
    return store, fork_id


async def _release(session: RunSession, config: AgentConfig) -> None:
    """A model made for this fork (another `model=`) lets its connections go with it: they
    belong to this event loop, which `fork()` closes."""
    if session.model is not config.model:
        await let_go([session.model])


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
