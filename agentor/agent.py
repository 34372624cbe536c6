"""`Agentor`: run / arun / resume / aresume / stream_chat / chat / submit / fork / replay /
experiment / approve / reject / from_md."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from agentor.batch import run_input
from agentor.call_options import for_call, release_fallbacks
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
    model_from,
    store_from,
    tools_and_servers,
)
from agentor.engine.log.format import BadLine
from agentor.engine.loop import Listener, Recorder, run_loop
from agentor.engine.mcp import ToolServer
from agentor.engine.models import Model
from agentor.engine.request import RequestConfig, request_config
from agentor.engine.settings import ModelSettings
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.api import Store
from agentor.engine.store.holding import holding, load_if_any, load_run
from agentor.engine.store.run_ids import validate_run_id
from agentor.engine.structured import OutputSpec, check_retries
from agentor.engine.submit import submit_run
from agentor.engine.toolfailures import DEFAULT_LIMIT, check_limit
from agentor.engine.tools import Tool
from agentor.engine.toolset import SegmentTools, segment_tools
from agentor.errors import NothingToResumeError
from agentor.experiments.candidates import candidate_agent, judge_asker, model_check
from agentor.experiments.experiment import Experiment, Options
from agentor.experiments.experiment import start as start_experiment
from agentor.experiments.record import PairRecord
from agentor.forking import fork_run, replay_run
from agentor.result import RunResult, from_log, pending_now, settled, structured_result
from agentor.running import in_own_loop, stream
from agentor.telemetry.inprocess import check_tracing
from agentor.tracing_setting import agent_tracing, attach
from agentor.unsupported import check_engine, check_skills, serve_refused


class Agentor:
    """An LLM agent whose every step is saved to `store` (when given) as it happens.

    The arguments up to `engine` are upstream Agentor 0.1.1's, in its order: `output_type`
    engine/structured.py, `model_settings` engine/settings.py, `max_tool_failures`
    engine/toolfailures.py, `tracer` agentor/tracing_setting.py.

    `tools` takes functions, `Tool`s and MCP servers (`MCPServer`, `MCPServerStdio`), whose
    tools each run segment lists anew (engine/toolset.py).

    `needs_approval` gates tools by name (globs such as `["delete_*", "send_email"]`, or True
    for every tool) on top of each tool's own `needs_approval`; `approval_timeout` is the
    deadline of a gated call whose tool sets none (agentor.engine.approval.gating). `tracing=True`
    sends each run as OpenTelemetry spans to the collector OTEL_EXPORTER_OTLP_ENDPOINT names, or to
    the SDK tracer given instead; `capture_content=True` adds messages, arguments and results
    (agentor/telemetry/inprocess.py). `run(..., tracing=)` decides for one run."""

    def __init__(
        self,
        name: str,
        instructions: str | None = None,
        model: str | Model = "gpt-4o-mini",
        tools: Iterable[Tool | ToolServer | Callable[..., Any]] | None = (),
        output_type: Any = None,
        debug: bool = False,
        api_key: str | None = None,
        model_settings: ModelSettings | None = None,
        skills: list[str] | None = None,
        enable_tracing: bool = False,
        max_turns: int = 10,
        max_tool_failures: int = DEFAULT_LIMIT,
        store: Store | str | os.PathLike[str] | None = None,
        base_url: str | None = None,
        tracer: Any = None,
        trace_group_id: str | None = None,
        trace_metadata: dict[str, Any] | None = None,
        engine: str | None = None,
        *,
        needs_approval: bool | str | Iterable[str] | None = (),
        approval_timeout: timedelta | None = None,
        output_retries: int = 1,
        tracing: Any = None,
        capture_content: bool = False,
        **settings: Any,
    ) -> None:
        check_engine(engine)
        check_skills(skills)
        self.name = name
        self.instructions = instructions
        self.tools, self.mcp_servers = tools_and_servers(tools or ())
        self.store = store_from(store)
        self.max_turns = check_max_turns(max_turns)
        self.max_tool_failures = check_limit(max_tool_failures)
        self.gate = Gate(check_globs(needs_approval), check_timeout(approval_timeout))
        self.output_type = output_type
        retries = check_retries(output_retries)
        self.output = None if output_type is None else OutputSpec(output_type, retries)
        self.model: Model = model_from(
            model, base_url, api_key, model_settings, settings, output_type
        )
        # Runs as OpenTelemetry spans (agentor/telemetry/inprocess.py): True, or an SDK tracer.
        self.tracing = check_tracing(agent_tracing(tracing, tracer, enable_tracing))
        self.capture_content = bool(capture_content)
        self.trace_group_id, self.trace_metadata = trace_group_id, trace_metadata
        self.fallbacks: list[Model] = []  # asked when the model fails: set for one call
        self._call_tracing: Any = self.tracing

    def __repr__(self) -> str:
        return f"Agentor({self.name!r}, model={self.model.name!r})"

    def clone(self, **changes: Any) -> Agentor:
        """This agent with some of `name`, `model`, `instructions`, `tools`, `store`,
        `max_turns`, `needs_approval` and `approval_timeout` changed, checked as the constructor
        checks them; the original is untouched.

        A model given by name keeps this agent's endpoint, key and settings when this agent
        talks to an OpenAI-compatible server (`clone(model="gpt-4o")`); the name of this
        agent's own model keeps that model (an offline one too).
        """
        return cloned(self, changes)

    # -- starting a run ------------------------------------------------------------------------

    def run(self, input: Input, tracing: Any = None, *, run_id: str | None = None) -> RunResult:
        """`arun` in an event loop of its own; inside a running loop, use `arun`."""
        check_input(input)
        result: RunResult = in_own_loop(
            self.model, "run", lambda: self.arun(input, tracing=tracing, run_id=run_id)
        )
        return result

    async def arun(
        self,
        input: Input | Sequence[str],
        limit_concurrency: int = 10,
        max_turns: int | None = None,
        fallback_models: Sequence[str | Model] | None = None,
        tracing: Any = None,
        *,
        run_id: str | None = None,
    ) -> Any:
        """Run the agent on `input`; a list of prompts (strings) is a batch of runs
        (agentor/batch.py: at most `limit_concurrency` at once, a list of results in order).

        `run_id` names the run (a job's id, say) instead of a fresh uuid, so the id is known
        before anything can crash. If the store already holds that run, it is continued as
        `aresume` would (a finished run comes back without a model call), provided it was
        started with the same input: a different input raises `RunIdTakenError` (a
        `ValueError`). So a worker can call `run(input, run_id=job_id)` whether the job is new
        or its last worker died.

        `max_turns` applies to this call; `fallback_models` are asked in order when the model
        endpoint fails (engine/fallback.py); `tracing`: agentor/tracing_setting.py.
        """
        runner = for_call(self, max_turns, fallback_models, tracing)
        try:
            return await run_input(runner._arun_one, input, limit_concurrency, run_id)
        finally:
            await release_fallbacks(runner)

    async def _arun_one(self, input: Input, run_id: str | None = None) -> RunResult:
        messages = self._input_messages(input)
        return await self._start(messages, listener=None, stream_text=False, run_id=run_id)

    def stream_chat(
        self, input: Input, *, run_id: str | None = None, tracing: Any = None
    ) -> AsyncIterator[Event]:
        """The run's events as they are recorded, plus transient `text_delta` events.

        The first event, `run_start`, carries the run id. Abandoning the stream cancels the
        run, which stays saved and resumable. `run_id` is as for `arun`: naming a finished
        run yields its last segment's recorded events again, each `replayed`, with no model
        call and nothing written.
        """
        messages = self._input_messages(input)  # a bad input is refused here, not when read
        runner = for_call(self, None, None, tracing)
        return stream(lambda listener: runner._start(messages, listener, True, run_id))

    def submit(self, input: Input, *, run_id: str | None = None) -> str:
        """Record a new run for a fleet of workers (`agentor worker`) without running it: its
        `run_start` alone; returns the run id. The same input under an existing `run_id`
        writes nothing; another input is a `RunIdTakenError`, as for `run(run_id=)`."""
        messages = self._input_messages(input)
        config = self._request_config()
        return submit_run(
            self._require_store("submit"),
            messages,
            lambda run_id: self._run_start(run_id, messages, config),
            run_id,
        )

    # -- resuming ------------------------------------------------------------------------------

    def resume(
        self, run_id: str, listener: Listener | None = None, *, tracing: Any = None
    ) -> RunResult:
        """`aresume` in an event loop of its own; inside a running loop, use `aresume`."""
        return in_own_loop(
            self.model, "resume", lambda: self.aresume(run_id, listener, tracing=tracing)
        )

    async def aresume(
        self, run_id: str, listener: Listener | None = None, *, tracing: Any = None
    ) -> RunResult:
        """Finish a run from its log. A completed run is returned without a model call.

        A run awaiting approval comes back at once while a call still waits for a decision
        (status "awaiting_approval", `pending` set; no model call, nothing written); once
        every call is decided, approved calls run, rejected ones answer the model with an error,
        and the run goes on.

        `listener`, if given, is called with each event as it is recorded (and with transient
        text deltas); for a completed run, or one still awaiting approval, with its last
        segment's events, each `replayed`. The new segment's run_start is saved and announced
        with its first step: a resume stopped before it has anything to record writes nothing.

        A structured run that failed on an invalid answer is asked again with what was wrong,
        `output_retries` more times (engine/structured.py).
        """
        if tracing is not None:
            return await for_call(self, None, None, tracing).aresume(run_id, listener)
        store = self._require_store()
        validate_run_id(run_id)
        events = await asyncio.to_thread(load_run, store, run_id)
        if settled(events):
            return self._structured(from_log(run_id, events, listener))
        async with holding(store, run_id):
            # Read again under the lock: another process may have finished it meanwhile.
            events = await asyncio.to_thread(load_run, store, run_id)
            return await self._continue(store, run_id, events, listener)

    def stream_resume(self, run_id: str, *, tracing: Any = None) -> AsyncIterator[Event]:
        """Like `stream_chat`, for `aresume`. The first turn's text deltas may come before the
        new segment's run_start, which is recorded with the segment's first step."""
        return stream(lambda listener: self.aresume(run_id, listener, tracing=tracing))

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
        tracing: Any = None,
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
            for_call(self, None, None, tracing),
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
        """Ask `model` (default: this agent's) the recorded conversation of `run_id` again,
        from its prompt, in a fork (`fork_id`, default a fresh id), its tool calls answered
        from the recorded results (agentor/engine/fork/recording.py).

        `match="strict"`: a call equal to a recorded one (same tool, same arguments) gets its
        recorded result; `"fifo"`: the tool's recorded results in order, whatever the
        arguments (a served result records the recorded arguments that differ as `drift`).
        A call with no recorded answer (`novel`): an error result ("not in the recording",
        `"error"`), the end of the replay, status `diverged` (`"stop"`), or run by this agent
        (`"run"`). `instructions` replace the recorded prompt's system message;
        `model_settings` (temperature, max_tokens, ...) are set over the model's for this
        replay; `experiment` names the experiment the replay is a candidate of (recorded on
        its `fork` event). A bad option is refused before anything is written. `lines`: the
        run's lines as `load_lines` reads them, when the caller has them already (an
        experiment reads each baseline once): not read again."""
        return await replay_run(
            self,
            run_id,
            model=model,
            fork_id=fork_id,
            novel=novel,
            match=match,
            instructions=instructions,
            model_settings=model_settings,
            experiment=experiment,
            listener=listener,
            lines=lines,
        )

    # -- experiments (agentor.experiments) ----------------------------------------------------

    def experiment(self, runs: Iterable[str], **options: Any) -> Experiment:
        """`aexperiment` (same arguments) in an event loop of its own."""
        return in_own_loop(self.model, "experiment", lambda: self.aexperiment(runs, **options))

    async def aexperiment(
        self,
        runs: Iterable[str],
        *,
        model: str | None = None,
        instructions: str | None = None,
        model_settings: Mapping[str, Any] | None = None,
        match: str = "strict",
        novel: str = "error",
        scorers: Iterable[Any] = (),
        concurrency: int = 4,
        name: str | None = None,
        on_pair: Callable[[PairRecord], None] | None = None,
    ) -> Experiment:
        """Replay each of `runs` (ended runs of this agent's store) with this agent as a
        candidate run, `model` and `model_settings` changed when given, its prompt's system
        message being `instructions` (default: this agent's instructions, when it has any);
        tool calls answered from each baseline's record (`match`: "strict" or "fifo"; a call
        with no recorded answer: `novel` "error", "stop" or "run"). Each pair is measured and
        scored (`scorers`: "same_output", "same_tools", "output_contains:TEXT", "judge",
        "judge:MODEL", "module:function", or functions); returns the `Experiment` with
        `.pairs` and `.summary`. `concurrency` candidates run at once.

        The experiment is recorded in the store and named by what decides its candidates:
        called again with the same arguments (after a crash, say) it goes on where it was,
        no candidate replayed twice, failed pairs retried (`Experiment.load` reads it)."""
        store = self._require_store("experiment")
        settings = dict(model_settings or {})
        options = Options(
            model=model,
            instructions=self.instructions if instructions is None else instructions,
            model_settings=settings,
            match=match,
            novel=novel,
            scorers=tuple(scorers),
            concurrency=concurrency,
            name=name,
        )
        runner = candidate_agent(self, model, settings)
        return await start_experiment(
            store,
            list(runs),
            options,
            lambda baseline, events: runner,
            judge_asker(runner, Agentor),
            agent=self.name,
            check=model_check(runner),
            on_pair=on_pair,
        )

    # -- upstream Agentor's other calls ------------------------------------------------------

    @classmethod
    def from_md(cls, md_path: str | os.PathLike[str], **options: Any) -> Any:
        """The agent a markdown file describes: frontmatter `name`, `model`, `temperature`
        (`tools` names are ignored: pass `tools=`), the body as its instructions. `options`
        are the constructor's (model, tools, output_type, store, ...) and win over the file
        (agentor/markdown_agent.py)."""
        from agentor.markdown_agent import agent_options

        return cls(**agent_options(md_path, options))

    async def chat(
        self, input: Any, stream: bool = False, serialize: bool = True, tracing: Any = None
    ) -> Any:
        """Upstream's `chat`: `arun(input)`; with `stream=True`, `stream_chat(input)` (this
        project's stream of the run's events; `serialize` is not used)."""
        agent: Any = self
        if stream:
            return for_call(agent, None, None, tracing).stream_chat(input)
        return await agent.arun(input, tracing=tracing)

    def serve(self, *args: Any, **kwargs: Any) -> None:
        """Upstream's HTTP and A2A server: not offered."""
        raise serve_refused()

    # -- deciding gated calls ------------------------------------------------------------------

    def approve(
        self,
        run_id: str,
        call_id: str | None = None,
        *,
        args: Mapping[str, Any] | None = None,
        by: str | None = None,
        note: str | None = None,
        result: Any = None,
    ) -> list[Decision]:
        """`agentor.approve` on this agent's store; an edit (`args`) is checked against this
        agent's tool; `result` gives an interrupted call the result it had. Resume the run to
        go on."""
        store = self._require_store("approve")
        return decisions.approve(
            store, run_id, call_id, args=args, by=by, note=note, tools=self.tools, result=result
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
            return self._structured(from_log(run_id, events, listener))
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
        tracer = await attach(recorder, self._call_tracing, self.capture_content)
        try:
            async with segment_tools(self.tools, self.mcp_servers, known) as offered:
                config = self._request_config(offered)
                run_start = self._run_start(run_id, point.input_messages, config, offered)
                if before or after:  # a new fork: its copies keep their times: stamp run_start
                    run_start.ts = run_start.started_at
                    await recorder.emit(*before, run_start, *after, stamp=False)
                else:  # with the segment's first step: a resume stopped before it writes nothing
                    recorder.hold(run_start)
                recording = recording_of(known)
                return await self._loop(
                    recorder, point, listener is not None, config, offered, gated, recording
                )
        finally:
            await recorder.drain()
            if tracer is not None:
                tracer.finish()

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
        self,
        run_id: str | None,
        messages: list[dict[str, Any]],
        config: RequestConfig,
        offered: SegmentTools | None = None,
    ) -> Event:
        return Event(
            RUN_START,
            run_id=run_id,
            agent=self.name,
            model=self.model.name,
            config=config.digest,
            tools=config.tools,
            settings=config.settings,
            mcp=offered.record if offered is not None else None,
            output=None if self.output is None else self.output.recorded(),
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
            tracer = await attach(recorder, self._call_tracing, self.capture_content)
            try:
                async with segment_tools(self.tools, self.mcp_servers, ()) as offered:
                    config = self._request_config(offered)
                    await recorder.emit(self._run_start(run_id, messages, config, offered))
                    point = ResumePoint(messages=list(messages), turn=0, input_messages=messages)
                    return await self._loop(recorder, point, stream_text, config, offered)
            finally:
                await recorder.drain()
                if tracer is not None:
                    tracer.finish()

    def _request_config(self, offered: SegmentTools | None = None) -> RequestConfig:
        """What the segment asks the model with: `offered`'s tools (the agent's own tools
        alone when none: a submitted run's first record)."""
        tools = offered.tools if offered is not None else self.tools
        return request_config(self.model, [t.schema for t in tools])

    async def _loop(
        self,
        recorder: Recorder,
        point: ResumePoint,
        stream_text: bool,
        config: RequestConfig,
        offered: SegmentTools,
        gated: GatedTurn | None = None,
        recording: Recording | None = None,
    ) -> RunResult:
        outcome = await run_loop(
            model=self.model,
            tools=offered.tools,
            recorder=recorder,
            point=point,
            max_turns=self.max_turns,
            stream_text=stream_text,
            config=config.digest,
            gate=self.gate,
            gated=gated,
            recording=recording,
            output=self.output,
            max_tool_failures=self.max_tool_failures,
            fallbacks=self.fallbacks,
        )
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
        return self._structured(result)

    def _structured(self, result: RunResult) -> RunResult:
        return structured_result(result, self.output)
