"""`Experimenter`: `X` runs an experiment on the runs selected in the list, in this process
(`agentor.experiments.experiment.start`, in a worker of its own, one experiment at a time),
writing into the source on screen as `agentor experiment run` would: its definition once
everything is checked, then each candidate (a replay of its baseline, an ordinary run) and
each pair's record as it is measured.

Who replays the baselines: the app's agent (`--agent`), when it serves every selected run and
the form chose it (its instructions, tools and model; novel calls may run with it), else each
run's recorded agent asking the form's model through the openai client's environment. What
the form cannot check alone (`refusal`) is checked here before the worker starts; the rest
(the runs ended, the model answers) by `start`, which writes nothing when it refuses.

It reports by messages (`Started`, `Held`, `PairDone`, `Ended`, `Notice`): the screen opens the
experiment's pairs, shows each candidate in the list as it is taken, and refreshes what shows
the experiment as each pair lands. Quitting the app stops the experiment; what was recorded
stays, and the same experiment started again (or `agentor experiment resume`) goes on.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.message import Message
from textual.worker import Worker

from agentor import Agentor
from agentor.agents import AgentSet, experiment_agents
from agentor.engine.statuses import INTERRUPTED, RUNNING, STOPPING, UNREADABLE
from agentor.engine.store.api import Store
from agentor.errors import AgentorError
from agentor.experiments.candidates import judge_asker, model_check
from agentor.experiments.experiment import Experiment, Options
from agentor.experiments.experiment import start as start_experiment
from agentor.experiments.record import Definition, PairRecord
from agentor.experiments.scorers import scorer_of
from agentor.literal import literal_line
from agentor.sources.source import RunSource
from tui.controllers.controller import Controller
from tui.text import experiment_notes
from tui.text.experiment_form import ExperimentRequest
from tui.text.formatting import short_id

NOT_ENDED = (RUNNING, INTERRUPTED, STOPPING)


class Experimenter(Controller):
    """The app's experiments: one at a time, in a worker of its own."""

    @dataclass
    class Started(Message):
        """The experiment's definition is recorded: it can be opened (`done` pairs were
        recorded before: the same experiment, gone on with)."""

        experiment_id: str
        runs: int
        done: int

    @dataclass
    class Held(Message):
        """A candidate's run was taken: it is running from now on."""

        run_id: str

    @dataclass
    class PairDone(Message):
        """A pair was measured and recorded."""

        experiment_id: str
        candidate: str

    @dataclass
    class Ended(Message):
        """The experiment's worker is over (`experiment_id` None: it never started)."""

        experiment_id: str | None

    def __init__(self, source: RunSource, agents: AgentSet) -> None:
        super().__init__()
        self.source = source
        self.agents = agents
        self.worker: Worker[None] | None = None
        self.experiment_id: str | None = None  # the one running here, once recorded

    @functools.cached_property
    def store(self) -> Store:
        """Where experiments are written: the source on screen (made on first use)."""
        return self.source.resume_store(lambda run_id: self.report(self.Held(run_id)))

    @property
    def running(self) -> bool:
        return self.worker is not None and not self.worker.is_finished

    def agent_for(self, runs: Sequence[str]) -> Agentor | None:
        """The app's agent when one serves every run (the agent `r` resumes them with)."""
        found = {id(a): a for a in map(self.agents.for_run, map(self._agent_name, runs))}
        agents = list(found.values())
        return agents[0] if len(agents) == 1 and agents[0] is not None else None

    def _agent_name(self, run_id: str) -> str | None:
        row = self.source.get(run_id)
        return row.summary.agent if row is not None and row.summary is not None else None

    def refusal(self, request: ExperimentRequest) -> str | None:
        """Why the experiment cannot start as asked (one line), before anything is written;
        None when it can (the model is asked by `start`, in the worker)."""
        if self.running:
            return f"✗ experiment {self.experiment_id or '…'} runs here already: one at a time"
        for run_id in request.runs:
            row = self.source.get(run_id)
            if row is None:
                return f"✗ run {literal_line(run_id, 40)} is not in {self.source.where}"
            if row.status in NOT_ENDED or row.status == UNREADABLE:
                return (
                    f"✗ run {short_id(run_id)} is {literal_line(row.status, 20)}: an experiment "
                    "replays runs that ended"
                )
        if request.agent is not None and self.agent_for(request.runs) is None:
            return "✗ the app's agent does not serve every selected run"
        if request.instructions_file is not None:
            try:
                _read(request.instructions_file)
            except (OSError, UnicodeDecodeError) as exc:
                return f"✗ instructions: {_one_line(exc)}"
        for spec in request.scorers:
            try:
                scorer_of(spec)
            except AgentorError as exc:
                return f"✗ {_one_line(exc)}"
        return None

    def start(self, request: ExperimentRequest) -> None:
        """Run the experiment `request` asks for (`refusal` said it may)."""
        agent = self.agent_for(request.runs) if request.agent is not None else None
        bound = self.agents.writing_to(agent, self.store) if agent is not None else None
        self.experiment_id = None
        self.worker = self._run(request, bound)

    @work(group="experiment", exclusive=True, exit_on_error=False)
    async def _run(self, request: ExperimentRequest, agent: Agentor | None) -> None:
        store = self.store
        try:
            experiment = await self._started(request, agent, store)
        except (AgentorError, OSError, ValueError, TypeError) as exc:
            if self.experiment_id is None:
                self.say(experiment_notes.refused(_one_line(exc)))
            else:
                self.say(experiment_notes.stopped(self.experiment_id, _one_line(exc)))
        else:
            s = experiment.summary
            self.say(experiment_notes.ended(experiment.id, s.pairs, s.regressions, s.improvements))
        finally:
            self.report(self.Ended(self.experiment_id))

    async def _started(
        self, request: ExperimentRequest, agent: Agentor | None, store: Store
    ) -> Experiment:
        instructions: str | None = agent.instructions if agent is not None else None
        if request.instructions_file is not None:
            instructions = await asyncio.to_thread(_read, request.instructions_file)
        agent_for, agent_of = experiment_agents(agent, store, request.model, {})
        first = await asyncio.to_thread(agent_of, request.runs[0])
        options = Options(
            model=request.model,
            instructions=instructions,
            match=request.match,
            novel=request.novel,
            scorers=request.scorers,
            concurrency=request.concurrency,
            name=request.name,
        )
        return await start_experiment(
            store,
            request.runs,
            options,
            agent_for,
            judge_asker(first, Agentor),
            agent=agent.name if agent is not None else None,
            check=model_check(first),
            on_start=self._on_start,
            on_pair=self._on_pair,
        )

    def _on_start(self, definition: Definition, done: int) -> None:
        self.experiment_id = definition.id
        self.report(self.Started(definition.id, len(definition.baselines), done))

    def _on_pair(self, record: PairRecord) -> None:
        """A pair was recorded (from the thread that saved it)."""
        if self.experiment_id is not None:
            self.report(self.PairDone(self.experiment_id, record.candidate))


def _read(path: str) -> str:
    return Path(path).expanduser().read_text(encoding="utf-8")


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{literal_line(str(exc.filename), 200)}: {exc.strerror}"
    text = literal_line(" ".join(str(exc).split()), 300)
    return text or type(exc).__name__
