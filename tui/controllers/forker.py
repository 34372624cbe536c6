"""`Forker`: `F` runs a fork in this process. The fork (`agent.afork`, agentor.forking) runs in a
worker of its own, one at a time, writing a new run into the source on screen; the parent is
only read. Its events are reported as they are recorded, so the app shows the new run live
(it is selected and its timeline opened as soon as its first write has landed).

It reports by messages (`Started`, `Progress`, `Ended`, `Notice`); the screen decides what it
shows.
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from typing import Any

from textual import work
from textual.message import Message
from textual.worker import Worker

from agentor import Agentor, RunResult
from agentor.agents import AgentSet, RecordedAgent, recorded_agent
from agentor.collect.origin import collected_source
from agentor.engine.events import FORK, GENERATION, RUN_START, TOOL_RESULT, Event
from agentor.engine.store.api import ServerStore, Store
from agentor.sources.source import RunSource
from tui.controllers.controller import Controller
from tui.text import fork_text
from tui.text.fork_text import ForkRequest


class Forker(Controller):
    """The app's forks: one at a time, in a worker of its own."""

    @dataclass
    class Started(Message):
        """The fork's first write landed (its copy of the parent, its `fork` event): the new
        run `fork_id` can be opened."""

        fork_id: str
        parent: str
        at: int

    @dataclass
    class Progress(Message):
        """An event the fork recorded after its copy of the parent."""

        fork_id: str
        event: Event

    @dataclass
    class Ended(Message):
        """The fork's worker is over (`started`: the fork was written and may be opened)."""

        fork_id: str
        started: bool

    def __init__(self, source: RunSource, agents: AgentSet, store: Store | None = None) -> None:
        super().__init__()
        self.source = source
        self.agents = agents
        self.worker: Worker[None] | None = None
        self.fork_id: str | None = None
        self._store = store

    @property
    def running(self) -> bool:
        return self.worker is not None and not self.worker.is_finished

    @property
    def store(self) -> Store:
        """Where forks are written: the source on screen (made on first use)."""
        if self._store is None:
            self._store = self.source.resume_store(lambda run_id: None)
        return self._store

    def agent_for(self, agent_name: str | None) -> Agentor | None:
        return self.agents.for_run(agent_name)

    def refusal(self, request: ForkRequest) -> str | None:
        """Why the fork cannot run here (no agent for the run), with the command that would
        run it from a shell; None when it can. A run collected from another framework's spans
        has no agent here: it can be replayed with another model (`replay_refusal`)."""
        name = self._agent_name(request.run_id)
        if self.agent_for(name) is not None:
            return None
        start = self._collected_start(request.run_id)
        if start is not None:
            return fork_text.replay_refusal(request, start, store_args(self.source))
        hint = self.agents.missing_hint(name, "fork")
        return fork_text.no_agent_text(request, hint, store_args(self.source))

    def fork(self, request: ForkRequest) -> None:
        """Fork as the form asks, with the run's agent; a collected run, replayed with the
        model the form names (otherwise the form said why not)."""
        agent = self.agent_for(self._agent_name(request.run_id))
        if agent is not None:
            self.start(request, agent)
            return
        start = self._collected_start(request.run_id)
        args = store_args(self.source)
        if start is not None and fork_text.replay_refusal(request, start, args) is None:
            self.start(request, recorded_agent(start, request.model or "", self.store))

    def _collected_start(self, run_id: str) -> Event | None:
        """The run_start of a run collected from spans, else None (read from the source)."""
        try:
            events = self.source.open(run_id)
        except (OSError, KeyError):
            return None
        try:
            events.poll()
            if len(events) == 0:
                return None
            first = events.item(0)
        except OSError:
            return None
        finally:
            events.close()
        if isinstance(first, Event) and collected_source(first) is not None:
            return first
        return None

    def _agent_name(self, run_id: str) -> str | None:
        row = self.source.get(run_id)
        return row.summary.agent if row is not None and row.summary is not None else None

    def start(self, request: ForkRequest, agent: Agentor) -> str | None:
        """Fork as `request` asks, with `agent`; the new run's id (None: refused, said)."""
        if self.running and self.fork_id is not None:
            self.say(fork_text.one_fork_at_a_time(self.fork_id))
            return None
        self.fork_id = uuid.uuid4().hex
        bound = self.agents.writing_to(agent, self.store)
        self.worker = self._fork(request, bound, self.fork_id)
        return self.fork_id

    @work(group="fork", exclusive=True, exit_on_error=False)
    async def _fork(self, request: ForkRequest, agent: Agentor, fork_id: str) -> None:
        """`agent.afork(...)` as `request` asks, reporting what the fork records."""
        started = [False]
        heard = functools.partial(self._heard, request, fork_id, started)
        result: RunResult | None = None
        try:
            if isinstance(agent, RecordedAgent):  # a collected run: replayed with a model
                result = await agent.areplay(
                    request.run_id, model=request.model or "", fork_id=fork_id, listener=heard
                )
            else:
                result = await agent.afork(
                    request.run_id,
                    **fork_arguments(request, agent),
                    fork_id=fork_id,
                    listener=heard,
                )
        except Exception as exc:  # refused (a ValueError says why), or the model failed
            self.say(fork_text.fork_refused(request.run_id, exc))
        else:
            self.say(
                fork_text.fork_ended(fork_id, result.status, result.final_output, result.error)
            )
        finally:
            self.report(self.Ended(fork_id, started[0] or result is not None))

    def _heard(self, request: ForkRequest, fork_id: str, started: list[bool], event: Event) -> None:
        """The engine's listener: the copy of the parent first, then the fork's own events."""
        if event.transient:
            return
        if not started[0]:
            if event.type == FORK and event.forked_from == request.run_id:
                started[0] = True
                self.report(self.Started(fork_id, request.run_id, request.at))
            return
        self.report(self.Progress(fork_id, event))


def fork_arguments(request: ForkRequest, agent: Agentor) -> dict[str, Any]:
    """`afork`'s arguments for `request`: the same model as the agent's is no other model."""
    args: dict[str, Any] = {"at": request.at}
    if request.kind == TOOL_RESULT:
        args["result"] = request.result if request.result is not None else ""
    elif request.kind == GENERATION:
        if request.model and request.model != agent.model.name:
            args["model"] = request.model
        if request.input:
            args["input"] = request.input
    elif request.kind == RUN_START and request.input:
        args["input"] = request.input
    return args


def store_args(source: RunSource) -> list[str]:
    """The `agentor` options naming the source's store (a directory, a database's schema)."""
    store = source.store
    if isinstance(store, ServerStore):
        return ["--store", store.where, "--schema", store.schema]
    return ["--dir", str(source.where)]
