"""`Agentor`: run / arun / resume / aresume / stream_chat / chat / submit / fork / replay /
experiment / approve / reject / from_md."""

from __future__ import annotations

import copy
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from agentor.batch import run_input
from agentor.engine.approval import decisions
from agentor.engine.approval.gating import Gate, check_globs, check_timeout
from agentor.engine.approval.pending import Decision
from agentor.engine.events import Event
from agentor.engine.inputs import (
    Input,
    check_input,
    check_max_turns,
    model_from,
    store_from,
    tools_and_servers,
)
from agentor.engine.log.format import BadLine
from agentor.engine.loop import Listener
from agentor.engine.mcp import ToolServer
from agentor.engine.models import Model
from agentor.engine.settings import ModelSettings
from agentor.engine.store.api import Store
from agentor.engine.structured import OutputSpec, check_retries
from agentor.engine.toolfailures import DEFAULT_LIMIT, check_limit
from agentor.engine.tools import Tool
from agentor.experiments.candidates import candidate_agent, judge_asker, model_check
from agentor.experiments.experiment import Experiment, Options
from agentor.experiments.experiment import start as start_experiment
from agentor.experiments.record import PairRecord
from agentor.forking import fork_run, replay_run
from agentor.result import RunResult
from agentor.running import in_own_loop, stream
from agentor.session.config import AgentConfig, require_store
from agentor.session.options import CallOptions, let_go
from agentor.session.run import RunSession
from agentor.telemetry.inprocess import check_tracing
from agentor.tracing_setting import agent_tracing
from agentor.unsupported import check_engine, check_skills, serve_refused

NO_OPTIONS = CallOptions()


class Agentor:
    """An LLM agent whose every step is saved to `store` (when given) as it happens.

    The arguments up to `engine` are upstream Agentor 0.1.1's, in its order: `output_type`
    agentor.engine.structured, `model_settings` agentor.engine.settings, `max_tool_failures`
    agentor.engine.toolfailures, `tracer` agentor.tracing_setting.

    `tools` takes functions, `Tool`s and MCP servers (`MCPServer`, `MCPServerStdio`), whose
    tools each run segment lists anew (agentor.engine.toolset).

    `needs_approval` gates tools by name (globs such as `["delete_*", "send_email"]`, or True
    for every tool) on top of each tool's own `needs_approval`; `approval_timeout` is the
    deadline of a gated call whose tool sets none (agentor.engine.approval.gating). `tracing=True`
    sends each run as OpenTelemetry spans to the collector OTEL_EXPORTER_OTLP_ENDPOINT names, or to
    the SDK tracer given instead; `capture_content=True` adds messages, arguments and results
    (agentor.telemetry.inprocess). `run(..., tracing=)` decides for one run."""

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
        # Runs as OpenTelemetry spans (agentor.telemetry.inprocess): True, or an SDK tracer.
        self.tracing = check_tracing(agent_tracing(tracing, tracer, enable_tracing))
        self.capture_content = bool(capture_content)
        self.trace_group_id, self.trace_metadata = trace_group_id, trace_metadata
        self.fallbacks: list[Model] = []  # asked in turn when the model fails

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
        config = self._frozen().changed(changes)
        twin = copy.copy(self)
        twin.name, twin.instructions, twin.model = config.name, config.instructions, config.model
        twin.tools, twin.mcp_servers = list(config.tools), list(config.mcp_servers)
        twin.store, twin.max_turns, twin.gate = config.store, config.max_turns, config.gate
        twin.fallbacks = list(config.fallbacks)
        return twin

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
        (agentor.batch: at most `limit_concurrency` at once, a list of results in order).

        `run_id` names the run (a job's id, say) instead of a fresh uuid, so the id is known
        before anything can crash. If the store already holds that run, it is continued as
        `aresume` would (a finished run comes back without a model call), provided it was
        started with the same input: a different input raises `RunIdTakenError` (a
        `ValueError`). So a worker can call `run(input, run_id=job_id)` whether the job is new
        or its last worker died.

        `max_turns` applies to this call; `fallback_models` are asked in order when the model
        endpoint fails (agentor.engine.fallback); `tracing`: agentor.tracing_setting.
        """
        config = self._frozen()
        options = CallOptions.checked(
            config, max_turns=max_turns, fallback_models=fallback_models, tracing=tracing
        )

        async def run_one(input: Input, run_id: str | None) -> RunResult:
            messages = config.input_messages(input)
            return await RunSession(config, options).start(messages, run_id)

        try:
            return await run_input(run_one, input, limit_concurrency, run_id)
        finally:
            await let_go(options.fallbacks_for(config))

    def stream_chat(
        self, input: Input, *, run_id: str | None = None, tracing: Any = None
    ) -> AsyncIterator[Event]:
        """The run's events as they are recorded, plus transient `text_delta` events.

        The first event, `run_start`, carries the run id. Abandoning the stream cancels the
        run, which stays saved and resumable. `run_id` is as for `arun`: naming a finished
        run yields its last segment's recorded events again, each `replayed`, with no model
        call and nothing written.
        """
        config = self._frozen()
        messages = config.input_messages(input)  # a bad input is refused here, not when read
        options = CallOptions(tracing=tracing)
        return stream(
            lambda listener: RunSession(config, options, listener).start(messages, run_id, True)
        )

    def submit(self, input: Input, *, run_id: str | None = None) -> str:
        """Record a new run for a fleet of workers (`agentor worker`) without running it: its
        `run_start` alone; returns the run id. The same input under an existing `run_id`
        writes nothing; another input is a `RunIdTakenError`, as for `run(run_id=)`."""
        config = self._frozen()
        return RunSession(config, NO_OPTIONS).submit(config.input_messages(input), run_id)

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
        `output_retries` more times (agentor.engine.structured).
        """
        session = RunSession(self._frozen(), CallOptions(tracing=tracing), listener)
        return await session.resume(run_id)

    def stream_resume(self, run_id: str, *, tracing: Any = None) -> AsyncIterator[Event]:
        """Like `stream_chat`, for `aresume`. The first turn's text deltas may come before the
        new segment's run_start, which is recorded with the segment's first step."""
        return stream(lambda listener: self.aresume(run_id, listener, tracing=tracing))

    # -- forks and replays (agentor.forking) -----------------------------------------------

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
            self._frozen(),
            run_id,
            input,
            at=at,
            result=result,
            model=model,
            fork_id=fork_id,
            max_turns=max_turns,
            listener=listener,
            tracing=tracing,
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
        from the recorded results (agentor.engine.fork.recording).

        `match="strict"`: a call equal to a recorded one (same tool, same arguments) gets its
        recorded result; `"fifo"`: the tool's recorded results in order, whatever the
        arguments (a served result records the recorded arguments that differ as `drift`).
        A call with no recorded answer (`novel`): an error result ("not in the recording",
        `"error"`), the end of the replay, status `diverged` (`"stop"`), or run by this agent
        (`"run"`). `instructions` replace the recorded prompt's system message;
        `model_settings` (temperature, max_tokens, ...) are set over the model's for this
        replay; `experiment` names the experiment the replay is a candidate of (recorded on
        its `fork` event). Its model and settings are kept on its `fork` event: a resume asks
        them again, whatever the resuming agent's model (its endpoint, with the replay's model
        name). A bad option is refused before anything is written. `lines`: the
        run's lines as `load_lines` reads them, when the caller has them already (an
        experiment reads each baseline once): not read again."""
        return await replay_run(
            self._frozen(),
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
        store = require_store(self.store, "experiment")
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
        (agentor.markdown_agent)."""
        from agentor.markdown_agent import agent_options

        return cls(**agent_options(md_path, options))

    async def chat(
        self, input: Any, stream: bool = False, serialize: bool = True, tracing: Any = None
    ) -> Any:
        """Upstream's `chat`: `arun(input)`; with `stream=True`, `stream_chat(input)` (this
        project's stream of the run's events; `serialize` is not used)."""
        if stream:
            return self.stream_chat(input, tracing=tracing)
        return await self.arun(input, tracing=tracing)

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
        store = require_store(self.store, "approve")
        return decisions.approve(
            store, run_id, call_id, args=args, by=by, note=note, tools=self.tools, result=result
        )

    def reject(
        self, run_id: str, call_id: str | None = None, *, reason: str, by: str | None = None
    ) -> list[Decision]:
        """`agentor.reject` on this agent's store. Resume the run to go on."""
        return decisions.reject(
            require_store(self.store, "reject"), run_id, call_id, reason=reason, by=by
        )

    # -- internals -----------------------------------------------------------------------------

    def _frozen(self) -> AgentConfig:
        """This agent's configuration as it is now, for one call (agentor.session.config)."""
        return AgentConfig(
            name=self.name,
            instructions=self.instructions,
            model=self.model,
            tools=tuple(self.tools),
            mcp_servers=tuple(self.mcp_servers),
            store=self.store,
            max_turns=self.max_turns,
            max_tool_failures=self.max_tool_failures,
            gate=self.gate,
            output=self.output,
            tracing=self.tracing,
            capture_content=self.capture_content,
            fallbacks=tuple(self.fallbacks),
        )
