"""`RunSession`: one run of an agent, from taking its lock to letting it go.

Made from the agent's configuration frozen for the call (`AgentConfig`) and the call's options
(`CallOptions`). Its verbs take the run's lock and read what the log holds: `start` (a new run,
or a named one that exists), `resume`, `fork` (a new run that opens with a copy of another:
a fork, a replay). Each segment they run is `_segment`, once for all of them: the recorder
and its listener, the tracer, the segment's tools, its run_start (saved at once for a new
run, with the first step for a resume, with the copy for a fork), the loop; then, on every way
out (an answer, an exception, a cancel), the saves still under way drained while the run is
held, and the tracer finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from agentor.engine.approval.pending import GatedTurn, gated_point, gated_turn
from agentor.engine.events import LOG_VERSION, RUN_START, Event
from agentor.engine.fork.plan import ForkPlan
from agentor.engine.fork.recording import Recording, recording_of
from agentor.engine.fork_mark import replay_mark, replayed_model
from agentor.engine.history import ResumePoint, resume_point, total_usage
from agentor.engine.inputs import check_same_input
from agentor.engine.loop import Listener, LoopOutcome, LoopSpec, Recorder, run_loop
from agentor.engine.models import Model, OpenAIModel
from agentor.engine.request import RequestConfig, request_config
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.api import BatchStore, Store
from agentor.engine.store.holding import holding, load_if_any, load_run
from agentor.engine.store.run_ids import validate_run_id
from agentor.engine.submit import submit_run
from agentor.engine.toolset import SegmentTools, segment_tools
from agentor.errors import NothingToResumeError
from agentor.result import RunResult, from_log, pending_now, settled, structured_result
from agentor.session.config import AgentConfig, model_named
from agentor.session.options import CallOptions, let_go
from agentor.telemetry.inprocess import RunTracing, check_tracing, run_tracing
from agentor.tracing_setting import call_tracing


@dataclass(frozen=True)
class Opening:
    """How a segment's run_start is written: saved at once (a new run, before the model is
    asked); `held` for the segment's first step (a resume: one stopped before it has anything
    to record writes nothing); or saved at once between a new fork's first events, `before`
    and `after` it, which keep their times (a copy of the parent's, the fork's marker)."""

    held: bool = False
    before: Sequence[Event] = ()
    after: Sequence[Event] = ()


NEW_RUN = Opening()
RESUMED = Opening(held=True)


class RunSession:
    """One run of an agent of `config`, with a call's `options`; `listener` is handed each
    event as it is recorded (and the transient text deltas)."""

    def __init__(
        self, config: AgentConfig, options: CallOptions, listener: Listener | None = None
    ) -> None:
        self.config = config
        self.listener = listener
        self.model = config.model if options.model is None else options.model
        self.max_turns = config.max_turns if options.max_turns is None else options.max_turns
        self.fallbacks = options.fallbacks_for(config)
        self.tracing = call_tracing(config.tracing, options.tracing)

    # -- the verbs -----------------------------------------------------------------------------

    async def start(
        self, messages: list[dict[str, Any]], run_id: str | None = None, stream_text: bool = False
    ) -> RunResult:
        """A new run of `messages` (`run_id`, else a fresh id when there is a store). A named
        run the store holds is continued as `resume` continues it, if it began with
        `messages` (`RunIdTakenError` if not)."""
        store = self.config.store
        named = run_id is not None
        if run_id is None:
            run_id = uuid.uuid4().hex if store is not None else None
        elif store is None:
            raise ValueError("run_id= needs a store: build the Agentor with store=FileStore(...)")
        else:
            validate_run_id(run_id)
        async with holding(store, run_id):
            if named:
                assert store is not None and run_id is not None
                events = await asyncio.to_thread(load_if_any, store, run_id)
                if events:  # this run exists (an empty log: killed before its run_start)
                    check_same_input(run_id, events, messages)
                    return await self._continue(store, run_id, events)
            point = ResumePoint(messages=list(messages), turn=0, input_messages=messages)
            return await self._segment(store, run_id, [], [], point, NEW_RUN, stream_text)

    async def resume(self, run_id: str) -> RunResult:
        """Finish run `run_id` from its log (`Agentor.aresume`); a settled one as it is."""
        store = self.config.require_store()
        validate_run_id(run_id)
        events = await asyncio.to_thread(load_run, store, run_id)
        if settled(events):
            return self.structured(from_log(run_id, events, self.listener))
        async with holding(store, run_id):
            # Read again under the lock: another process may have finished it meanwhile.
            events = await asyncio.to_thread(load_run, store, run_id)
            return await self._continue(store, run_id, events)

    async def fork(
        self, store: Store, run_id: str, fork_id: str, plan: ForkPlan, copy_only: bool
    ) -> RunResult:
        """Write run `fork_id` as `plan` (of run `run_id`) says, under its lock: the copy alone
        when `copy_only` (it needs nothing more), else its opening and its run_start, saved
        at once, and run it (agentor.forking)."""
        async with holding(store, fork_id):
            if await asyncio.to_thread(load_if_any, store, fork_id):
                raise ValueError(f"run {fork_id} already exists: choose an unused fork_id")
            if copy_only:
                await asyncio.to_thread(_write, store, fork_id, plan.events)
                return self.structured(from_log(fork_id, plan.events, self.listener))
            try:
                opening = Opening(before=plan.before, after=plan.after)
                return await self._continue(store, fork_id, [], opening)
            except Exception as exc:
                exc.add_note(f"fork {fork_id} of run {run_id}: resume it to retry if it was saved")
                raise

    def submit(self, messages: list[dict[str, Any]], run_id: str | None) -> str:
        """Record a new run of `messages` without running it (`Agentor.submit`)."""
        request = self._request_config(None)
        return submit_run(
            self.config.require_store("submit"),
            messages,
            lambda run_id: self._run_start(run_id, messages, request),
            run_id,
        )

    def structured(self, result: RunResult) -> RunResult:
        """`result` as this agent gives it: its structured output parsed
        (agentor.engine.structured)."""
        return structured_result(result, self.config.output)

    # -- a segment -----------------------------------------------------------------------------

    async def _continue(
        self,
        store: Store,
        run_id: str,
        events: list[Event],
        opening: Opening = RESUMED,
    ) -> RunResult:
        """Finish a run from its events, read under its lock (`opening`: a new fork's)."""
        if settled(events):
            return self.structured(from_log(run_id, events, self.listener))
        known = [*events, *opening.before, *opening.after]
        gated = gated_turn(known)
        point = resume_point(known) if gated is None else gated_point(known, gated)
        if not point.messages:
            # Killed between taking the lock and writing run_start, or written by hand.
            started = any(e.type == RUN_START for e in known)
            why = "its run_start holds no messages" if started else "its log has no run_start"
            raise NothingToResumeError(run_id, why)
        streamed = self.listener is not None
        async with self._resumed_model(known, opening):
            return await self._segment(
                store, run_id, events, known, point, opening, streamed, gated
            )

    @contextlib.asynccontextmanager
    async def _resumed_model(self, known: Sequence[Event], opening: Opening) -> AsyncIterator[None]:
        """A resumed replay is asked, for this segment, with the model and request settings it
        was made with (`replay_model`); a new fork, with the model it was made with."""
        own = self.model
        if opening.held:
            self.model = replay_model(own, known)
        try:
            yield
        finally:
            if self.model is not own:  # made for this resume: its connections go with it
                await let_go([self.model])
            self.model = own

    async def _segment(
        self,
        store: Store | None,
        run_id: str | None,
        events: list[Event],
        known: Sequence[Event],
        point: ResumePoint,
        opening: Opening,
        stream_text: bool,
        gated: GatedTurn | None = None,
    ) -> RunResult:
        """Run one segment of the run, held by the caller: `events`, what its log holds;
        `known`, that and the `opening`'s events, written with its run_start."""
        recorder = Recorder(run_id, store, events=list(events))
        if self.listener is not None:
            recorder.listeners.append(self.listener)
        tracer = await self._tracer(recorder)
        try:
            async with segment_tools(self.config.tools, self.config.mcp_servers, known) as offered:
                request = self._request_config(offered)
                run_start = self._run_start(run_id, point.input_messages, request, offered)
                await _write_start(recorder, run_start, opening)
                spec = self._spec(offered, request, point, stream_text, gated, recording_of(known))
                return self._result(recorder, await run_loop(spec, recorder))
        finally:
            await recorder.drain()
            if tracer is not None:
                tracer.finish()

    async def _tracer(self, recorder: Recorder) -> RunTracing | None:
        """Where the call's tracing joins the run: a `RunTracing` listening to what the recorder
        saves (agentor.telemetry.inprocess), made off the event loop; None when not traced.
        It is finished once the run's saves have landed."""
        if not self.tracing:
            return None
        tracer = await asyncio.to_thread(
            run_tracing,
            check_tracing(self.tracing),
            recorder.store,
            recorder.run_id,
            content=self.config.capture_content,
        )
        if tracer is not None:
            recorder.listeners.append(tracer)
        return tracer

    def _spec(
        self,
        offered: SegmentTools,
        request: RequestConfig,
        point: ResumePoint,
        stream_text: bool,
        gated: GatedTurn | None,
        recording: Recording | None,
    ) -> LoopSpec:
        return LoopSpec(
            model=self.model,
            tools=offered.tools,
            point=point,
            max_turns=self.max_turns,
            config=request.digest,
            fallbacks=self.fallbacks,
            gate=self.config.gate,
            gated=gated,
            recording=recording,
            output=self.config.output,
            max_tool_failures=self.config.max_tool_failures,
            stream_text=stream_text,
        )

    def _result(self, recorder: Recorder, outcome: LoopOutcome) -> RunResult:
        waiting = outcome.status == AWAITING_APPROVAL
        result = RunResult(
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
        return self.structured(result)

    def _request_config(self, offered: SegmentTools | None) -> RequestConfig:
        """What the segment asks the model with: `offered`'s tools (the agent's own tools
        alone when none: a submitted run's first record)."""
        tools = offered.tools if offered is not None else self.config.tools
        return request_config(self.model, [t.schema for t in tools])

    def _run_start(
        self,
        run_id: str | None,
        messages: list[dict[str, Any]],
        request: RequestConfig,
        offered: SegmentTools | None = None,
    ) -> Event:
        output = self.config.output
        return Event(
            RUN_START,
            run_id=run_id,
            agent=self.config.name,
            model=self.model.name,
            config=request.digest,
            tools=request.tools,
            settings=request.settings,
            mcp=offered.record if offered is not None else None,
            output=None if output is None else output.recorded(),
            messages=messages,
            v=LOG_VERSION,
            pid=os.getpid(),
            host=socket.gethostname(),
            started_at=time.time(),
        )


def replay_model(model: Model, events: Sequence[Event]) -> Model:
    """The model a resumed replay asks, as the replay began: the model it was made with (its
    name, on `model`'s endpoint, as `replay --model` reads it: `model_named`) with the request
    settings it was given (its `fork` event keeps both) set over that model's own; `model`
    itself for any other run (a plain fork goes on with the resuming agent's model), when it
    is that model already, or when the log names no model (no settings to set either: a model
    not on an OpenAI-compatible endpoint)."""
    mark = replay_mark(events)
    if mark is None:
        return model
    name = replayed_model(events, mark)
    chosen = model if name is None else model_named(model, name)
    changes = mark.model_settings
    if not changes or not isinstance(chosen, OpenAIModel):
        return chosen
    made = chosen.with_settings(changes)
    return chosen if made.settings == chosen.settings else made


async def _write_start(recorder: Recorder, run_start: Event, opening: Opening) -> None:
    """Write `run_start` as `opening` says (`Opening`)."""
    if opening.before or opening.after:  # a new fork: stamped with its own start
        run_start.ts = run_start.started_at
        await recorder.emit(*opening.before, run_start, *opening.after, stamp=False)
    elif opening.held:
        recorder.hold(run_start)
    else:
        await recorder.emit(run_start)


def _write(store: Store, run_id: str, events: list[Event]) -> None:
    if isinstance(store, BatchStore):
        store.append_many(run_id, events)
    else:
        for e in events:
            store.append(run_id, e)
