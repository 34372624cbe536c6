"""`Agentor`: run / arun / resume / aresume / stream_chat / submit / fork / replay / approve /
reject."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from agentor.cloning import cloned
from agentor.engine.approval import decisions
from agentor.engine.approval.gating import Gate, check_globs, check_timeout
from agentor.engine.approval.pending import Decision, GatedTurn, gated_point, gated_turn
from agentor.engine.events import LOG_VERSION, RUN_START, Event
from agentor.engine.fork.recording import Recording, recording_of
from agentor.engine.history import ResumePoint, resume_point, total_usage
from agentor.engine.inputs import (
    Input,
    check_input,
    check_max_turns,
    check_same_input,
    store_from,
    tools_from,
)
from agentor.engine.loop import Listener, Recorder, run_loop
from agentor.engine.models import Model, OpenAIModel
from agentor.engine.request import RequestConfig, request_config
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.api import Store
from agentor.engine.store.holding import holding, load_if_any, load_run
from agentor.engine.store.run_ids import validate_run_id
from agentor.engine.submit import submit_run
from agentor.engine.tools import Tool
from agentor.errors import NothingToResumeError
from agentor.forking import fork_run, replay_run
from agentor.result import RunResult, from_log, pending_now, settled
from agentor.running import in_own_loop, stream


class Agentor:
    """An LLM agent whose every step is saved to `store` (when given) as it happens.

    `needs_approval` gates tools by name (globs such as `["delete_*", "send_email"]`, or True
    for every tool) on top of each tool's own `needs_approval`; `approval_timeout` is the
    deadline of a gated call whose tool sets none (engine/gating.py)."""

    def __init__(
        self,
        name: str,
        model: str | Model = "gpt-4o-mini",
        instructions: str | None = None,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        store: Store | str | os.PathLike[str] | None = None,
        max_turns: int = 10,
        base_url: str | None = None,
        api_key: str | None = None,
        needs_approval: bool | str | Iterable[str] | None = (),
        approval_timeout: timedelta | None = None,
        **model_settings: Any,
    ) -> None:
        self.name = name
        self.instructions = instructions
        self.tools = tools_from(tools)
        self.store = store_from(store)
        self.max_turns = check_max_turns(max_turns)
        self.gate = Gate(check_globs(needs_approval), check_timeout(approval_timeout))
        if isinstance(model, str):
            self.model: Model = OpenAIModel(
                model, base_url=base_url, api_key=api_key, **model_settings
            )
        else:
            self.model = model

    def __repr__(self) -> str:
        return f"Agentor({self.name!r}, model={self.model.name!r})"

    def clone(self, **changes: Any) -> Agentor:
        """This agent with some of `name`, `model`, `instructions`, `tools`, `store`,
        `max_turns`, `needs_approval` and `approval_timeout` changed, checked as the constructor
        checks them; the original is untouched.

        A model given by name keeps this agent's endpoint, key and settings when this agent
        talks to an OpenAI-compatible server (`clone(model="gpt-4o")`).
        """
        return cloned(self, changes)

    # -- starting a run ------------------------------------------------------------------------

    def run(self, input: Input, *, run_id: str | None = None) -> RunResult:
        """`arun` in an event loop of its own; inside a running loop, use `arun`."""
        check_input(input)
        return in_own_loop(self.model, "run", lambda: self.arun(input, run_id=run_id))

    async def arun(self, input: Input, *, run_id: str | None = None) -> RunResult:
        """Run the agent on `input`.

        `run_id` names the run (a job's id, say) instead of a fresh uuid, so the id is known
        before anything can crash. If the store already holds that run, it is continued as
        `aresume` would (a finished run comes back without a model call), provided it was
        started with the same input: a different input raises `ValueError`. So a worker can
        call `run(input, run_id=job_id)` whether the job is new or its last worker died.
        """
        messages = self._input_messages(input)
        return await self._start(messages, listener=None, stream_text=False, run_id=run_id)

    def stream_chat(self, input: Input, *, run_id: str | None = None) -> AsyncIterator[Event]:
        """The run's events as they are recorded, plus transient `text_delta` events.

        The first event, `run_start`, carries the run id. Abandoning the stream cancels the
        run, which stays saved and resumable. `run_id` is as for `arun`: naming a finished
        run yields its last segment's recorded events again, each `replayed`, with no model
        call and nothing written.
        """
        messages = self._input_messages(input)  # a bad input is refused here, not when read
        return stream(lambda listener: self._start(messages, listener, True, run_id))

    def submit(self, input: Input, *, run_id: str | None = None) -> str:
        """Record a new run for a fleet of workers (`agentor worker`) without running it: its
        `run_start` alone; returns the run id. The same input under an existing `run_id`
        writes nothing; another input is a `ValueError`, as for `run(run_id=)`."""
        messages = self._input_messages(input)
        config = self._request_config()
        return submit_run(
            self._require_store("submit"),
            messages,
            lambda run_id: self._run_start(run_id, messages, config),
            run_id,
        )

    # -- resuming ------------------------------------------------------------------------------

    def resume(self, run_id: str, listener: Listener | None = None) -> RunResult:
        """`aresume` in an event loop of its own; inside a running loop, use `aresume`."""
        return in_own_loop(self.model, "resume", lambda: self.aresume(run_id, listener))

    async def aresume(self, run_id: str, listener: Listener | None = None) -> RunResult:
        """Finish a run from its log. A completed run is returned without a model call.

        A run awaiting approval comes back at once while a call still waits for a decision
        (status "awaiting_approval", `pending` set; no model call, nothing written); once
        every call is decided, approved calls run, rejected ones answer the model with an error,
        and the run goes on.

        `listener`, if given, is called with each event as it is recorded (and with transient
        text deltas); for a completed run, or one still awaiting approval, with its last
        segment's events, each `replayed`. The new segment's run_start is saved and announced
        with its first step: a resume stopped before it has anything to record writes nothing.
        """
        store = self._require_store()
        validate_run_id(run_id)
        events = await asyncio.to_thread(load_run, store, run_id)
        if settled(events):
            return from_log(run_id, events, listener)
        async with holding(store, run_id):
            # Read again under the lock: another process may have finished it meanwhile.
            events = await asyncio.to_thread(load_run, store, run_id)
            return await self._continue(store, run_id, events, listener)

    def stream_resume(self, run_id: str) -> AsyncIterator[Event]:
        """Like `stream_chat`, for `aresume`. The first turn's text deltas may come before the
        new segment's run_start, which is recorded with the segment's first step."""
        return stream(lambda listener: self.aresume(run_id, listener))

    # -- forks and replays (agentor/forking.py) -----------------------------------------------

    def fork(self, run_id: str, input: Input | None = None, **options: Any) -> RunResult:
        """`afork` (same arguments) in an event loop of its own."""
        return in_own_loop(self.model, "fork", lambda: self.afork(run_id, input, **options))

    async def afork(
        self,
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
        """A new run (`fork_id`, default a fresh id) that copies run `run_id` up to a step and
        goes on from there with this agent (`model=`, `max_turns=` changed when given). The
        parent is never written to; tool calls recorded before the step never run again.

        `at=N`, a line of the parent's log as the TUI numbers it: a `tool_result` with
        `result=` (the value the model gets instead), a `generation` (asked again; `input=`
        added as a user message) or the first `run_start` (from the start; `input=` replacing
        the prompt). Without `at`, the whole run: continued with `input=` even if it completed,
        else finished on the fork (copied as it is when it needs nothing). A `ValueError` says
        what can be forked. `listener` is called with each event the fork records.
        """
        return await fork_run(
            self,
            run_id,
            input,
            at=at,
            result=result,
            model=model,
            fork_id=fork_id,
            max_turns=max_turns,
            listener=listener,
        )

    def replay(self, run_id: str, **options: Any) -> RunResult:
        """`areplay` (same arguments) in an event loop of its own."""
        return in_own_loop(self.model, "replay", lambda: self.areplay(run_id, **options))

    async def areplay(
        self,
        run_id: str,
        *,
        model: str | Model,
        fork_id: str | None = None,
        novel: str = "error",
        listener: Listener | None = None,
    ) -> RunResult:
        """Ask `model` the recorded conversation of `run_id` again, from its prompt, in a fork:
        a call equal to a recorded one (same tool, same arguments) gets the recorded result;
        a novel call gets an error ("not in the recording"), or runs with `novel="run"`."""
        return await replay_run(
            self, run_id, model=model, fork_id=fork_id, novel=novel, listener=listener
        )

    # -- deciding gated calls ------------------------------------------------------------------

    def approve(
        self,
        run_id: str,
        call_id: str | None = None,
        *,
        args: Mapping[str, Any] | None = None,
        by: str | None = None,
        note: str | None = None,
    ) -> list[Decision]:
        """`agentor.approve` on this agent's store; an edit (`args`) is checked against this
        agent's tool. Resume the run to go on."""
        store = self._require_store("approve")
        return decisions.approve(
            store, run_id, call_id, args=args, by=by, note=note, tools=self.tools
        )

    def reject(
        self, run_id: str, call_id: str | None = None, *, reason: str, by: str | None = None
    ) -> list[Decision]:
        """`agentor.reject` on this agent's store. Resume the run to go on."""
        return decisions.reject(
            self._require_store("reject"), run_id, call_id, reason=reason, by=by
        )

    # -- internals -----------------------------------------------------------------------------

    async def _continue(
        self,
        store: Store,
        run_id: str,
        events: list[Event],
        listener: Listener | None,
        opening: tuple[Sequence[Event], Sequence[Event]] = ((), ()),
    ) -> RunResult:
        """Finish a run from its events, read under its lock. `opening`: a new fork's first
        events (agentor/forking.py), saved at once around its run_start, as a new run's are."""
        if settled(events):
            return from_log(run_id, events, listener)
        before, after = opening
        known = [*events, *before, *after]
        gated = gated_turn(known)
        point = resume_point(known) if gated is None else gated_point(known, gated)
        if not point.messages:
            # Killed between taking the lock and writing run_start, or written by hand.
            started = any(e.type == RUN_START for e in known)
            why = "its run_start holds no messages" if started else "its log has no run_start"
            raise NothingToResumeError(run_id, why)
        recorder = Recorder(run_id, store, events=list(events))
        if listener is not None:
            recorder.listeners.append(listener)
        try:
            config = self._request_config()
            run_start = self._run_start(run_id, point.input_messages, config)
            if before or after:  # a new fork: its copies keep their times, so stamp run_start
                run_start.ts = run_start.started_at
                await recorder.emit(*before, run_start, *after, stamp=False)
            else:  # with the segment's first step: a resume stopped before it writes nothing
                recorder.hold(run_start)
            return await self._loop(
                recorder, point, listener is not None, config, gated, recording_of(known)
            )
        finally:
            await recorder.drain()

    def _require_store(self, what: str = "resume") -> Store:
        if self.store is None:
            raise ValueError(f"{what} needs a store: build the Agentor with store=FileStore(...)")
        return self.store

    def _input_messages(self, input: Input) -> list[dict[str, Any]]:
        check_input(input)
        msgs: list[dict[str, Any]] = []
        if self.instructions:
            msgs.append({"role": "system", "content": self.instructions})
        if isinstance(input, str):
            msgs.append({"role": "user", "content": input})
        else:
            msgs.extend(dict(m) for m in input)
        return msgs

    def _run_start(
        self, run_id: str | None, messages: list[dict[str, Any]], config: RequestConfig
    ) -> Event:
        return Event(
            RUN_START,
            run_id=run_id,
            agent=self.name,
            model=self.model.name,
            config=config.digest,
            tools=config.tools,
            settings=config.settings,
            messages=messages,
            v=LOG_VERSION,
            pid=os.getpid(),
            host=socket.gethostname(),
            started_at=time.time(),
        )

    async def _start(
        self,
        messages: list[dict[str, Any]],
        listener: Listener | None,
        stream_text: bool,
        run_id: str | None = None,
    ) -> RunResult:
        store = self.store
        named = run_id is not None
        if run_id is None:
            run_id = uuid.uuid4().hex if store is not None else None
        elif store is None:
            raise ValueError("run_id= needs a store: build the Agentor with store=FileStore(...)")
        else:
            validate_run_id(run_id)
        recorder = Recorder(run_id, store, events=[])
        if listener is not None:
            recorder.listeners.append(listener)
        async with holding(store, run_id):
            if named:
                assert store is not None and run_id is not None
                events = await asyncio.to_thread(load_if_any, store, run_id)
                if events:  # this run exists (an empty log: killed before its run_start)
                    check_same_input(run_id, events, messages)
                    return await self._continue(store, run_id, events, listener)
            try:
                config = self._request_config()
                await recorder.emit(self._run_start(run_id, messages, config))
                point = ResumePoint(messages=list(messages), turn=0, input_messages=messages)
                return await self._loop(recorder, point, stream_text, config)
            finally:
                await recorder.drain()

    def _request_config(self) -> RequestConfig:
        return request_config(self.model, [t.schema for t in self.tools])

    async def _loop(
        self,
        recorder: Recorder,
        point: ResumePoint,
        stream_text: bool,
        config: RequestConfig,
        gated: GatedTurn | None = None,
        recording: Recording | None = None,
    ) -> RunResult:
        outcome = await run_loop(
            model=self.model,
            tools=self.tools,
            recorder=recorder,
            point=point,
            max_turns=self.max_turns,
            stream_text=stream_text,
            config=config.digest,
            gate=self.gate,
            gated=gated,
            recording=recording,
        )
        waiting = outcome.status == AWAITING_APPROVAL
        return RunResult(
            run_id=recorder.run_id,
            final_output=outcome.final_output,
            status=outcome.status,
            events=recorder.events,
            usage=total_usage(recorder.events),
            messages=outcome.messages,
            error=outcome.error,
            save_failures=recorder.save_failures,
            pending=pending_now(recorder.events) if waiting else [],
        )
