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

`x` stops the experiment running here (`stop`): its worker is cancelled, the candidates in
flight with it; each is left as an interrupted run (resumed from its record later, its answered
turns not asked again) and no pair is recorded for it. `r` resumes a recorded experiment that
has pending pairs (`resume`, as `agentor experiment resume` does, in the same worker): with the
app's agent when the definition names one the app has, else the agent its spec names
(`Definition.agent_spec`, recorded when the app's agent was loaded from one), else each
baseline's recorded agent asking the definition's model; refused in one line when none can.

It reports by messages (`Started`, `Held`, `PairDone`, `Stopping`, `Ended`, `Notice`): the
screen opens the experiment's pairs, shows each candidate in the list as it is taken, and
refreshes what shows the experiment as each pair lands and as its state changes. Quitting the
app stops the experiment; what was recorded stays, and the same experiment started again (or
resumed) goes on.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.message import Message
from textual.worker import Worker

from agentor import Agentor
from agentor.agents import AgentSet, experiment_agents, load_agent
from agentor.engine.statuses import INTERRUPTED, RUNNING, STOPPING, UNREADABLE
from agentor.engine.store.api import Store
from agentor.errors import AgentorError, ExperimentError
from agentor.experiments.candidates import judge_asker, model_check
from agentor.experiments.experiment import DEFAULT_CONCURRENCY, Experiment, Options
from agentor.experiments.experiment import resume as resume_experiment
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
# What `state_of` says of an experiment.
RUNNING_HERE, STOPPING_HERE, STOPPED_HERE = "running", "stopping", "stopped"


class Experimenter(Controller):
    """The app's experiments: one at a time, in a worker of its own."""

    @dataclass
    class Started(Message):
        """The experiment's definition is recorded: it can be opened (`done` pairs were
        recorded before: the same experiment, gone on with)."""

        experiment_id: str
        runs: int
        done: int
        resumed: bool = False  # `r`, not the form

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
    class Stopping(Message):
        """`x`: the experiment's worker was cancelled; it unwinds (then `Ended`)."""

        experiment_id: str

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
        self.stopping = False  # `x`: cancelled, and unwinding
        self.stopped: set[str] = set()  # stopped here (with pairs pending), this session
        self._busy = False  # the worker has not reported its end yet
        self._concurrency: dict[str, int] = {}  # as the form asked, for `r` on the same
        self._asked: int | None = None  # the form's concurrency (None: `r` runs)

    @functools.cached_property
    def store(self) -> Store:
        """Where experiments are written: the source on screen (made on first use)."""
        return self.source.resume_store(lambda run_id: self.report(self.Held(run_id)))

    @property
    def running(self) -> bool:
        return self._busy and self.worker is not None and not self.worker.is_finished

    def state_of(self, experiment_id: str) -> str | None:
        """`running` or `stopping` here, `stopped` here (pairs pending), else None."""
        if self.running and self.experiment_id == experiment_id:
            return STOPPING_HERE if self.stopping else RUNNING_HERE
        return STOPPED_HERE if experiment_id in self.stopped else None

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
        """Run the experiment `request` asks for (`refusal` said it may); the app's agent's
        spec, when it was loaded from one, is recorded (a shell resumes with it)."""
        agent = self.agent_for(request.runs) if request.agent is not None else None
        bound = self.agents.writing_to(agent, self.store) if agent is not None else None
        spec = self.agents.spec_of(agent) if agent is not None else None
        self._begin(lambda: self._started(request, bound, spec, self.store), request.concurrency)

    def _begin(self, go: Callable[[], Awaitable[Experiment]], concurrency: int | None) -> None:
        """Run `go` in the worker (`concurrency`: the form's; None: `r`)."""
        self.experiment_id, self.stopping, self._busy = None, False, True
        self._asked = concurrency
        self.worker = self._run(go, concurrency is None)

    @work(group="experiment", exclusive=True, exit_on_error=False)
    async def _run(self, go: Callable[[], Awaitable[Experiment]], resumed: bool) -> None:
        try:
            experiment = await go()
        except asyncio.CancelledError:
            if self.experiment_id is not None:
                self.stopped.add(self.experiment_id)
                self.say(experiment_notes.stopped_here(self.experiment_id))
            raise
        except (AgentorError, OSError, ValueError, TypeError) as exc:
            if self.experiment_id is None:
                self.say(experiment_notes.refused(_one_line(exc), resumed))
            else:
                self.say(experiment_notes.stopped(self.experiment_id, _one_line(exc)))
        else:
            self.stopped.discard(experiment.id)
            s = experiment.counts  # no bootstrap on the app's loop
            self.say(experiment_notes.ended(experiment.id, s.pairs, s.regressions, s.improvements))
        finally:
            self._busy = self.stopping = False
            self.report(self.Ended(self.experiment_id))

    # -- x and r -------------------------------------------------------------------------------

    def stop(self, experiment_id: str) -> None:
        """`x`: stop the experiment running here; its candidates in flight are cancelled
        (interrupted runs, resumed from their records later), the pairs measured kept."""
        if not self.running or self.experiment_id != experiment_id:
            self.say(experiment_notes.not_running_here(experiment_id))
            return
        if self.stopping or self.worker is None:
            return
        self.stopping = True
        self.worker.cancel()
        self.report(self.Stopping(experiment_id))

    def resume_refusal(self, definition: Definition, pending: int) -> str | None:
        """Why `resume` cannot go on with `definition` (one line); None when it can."""
        d = definition
        if self.running:
            return f"✗ experiment {self.experiment_id or '…'} runs here already: one at a time"
        if not pending:
            return f"✗ every pair of {literal_line(d.id, 40)} is measured: nothing to resume"
        if d.agent is None:
            return None if d.model else f"✗ {literal_line(d.id, 40)} records no model to ask"
        if self.agents.for_run(d.agent) is not None or d.agent_spec:
            return None
        return (
            f"✗ {literal_line(d.id, 40)} replays with agent {literal_line(d.agent, 40)!r} and "
            "records no spec for it: start agentor-tui with --agent SPEC for that agent"
        )

    def resume(self, definition: Definition) -> None:
        """`r`: go on with `definition` (`resume_refusal` said it may), its pairs live."""
        self._begin(lambda: self._resumed(definition, self.store), None)

    async def _resumed(self, d: Definition, store: Store) -> Experiment:
        agent = self.agents.for_run(d.agent) if d.agent is not None else None
        if agent is None and d.agent is not None:
            if d.agent_spec is None:
                raise ExperimentError(f"no agent {d.agent!r} to resume {d.id} with")
            agent = await asyncio.to_thread(load_agent, d.agent_spec)
        bound = self.agents.writing_to(agent, store) if agent is not None else None
        agent_for, agent_of = experiment_agents(bound, store, d.model, d.model_settings)
        first = await asyncio.to_thread(agent_of, d.baselines[0])
        check = model_check(first)
        return await resume_experiment(
            store,
            d.id,
            lambda _: agent_for,
            judge_asker(first, Agentor),
            concurrency=self._concurrency.get(d.id, DEFAULT_CONCURRENCY),
            check=lambda _: check(),
            on_start=self._on_start,
            on_pair=self._on_pair,
        )

    async def _started(
        self, request: ExperimentRequest, agent: Agentor | None, spec: str | None, store: Store
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
            agent_spec=spec,
            check=model_check(first),
            on_start=self._on_start,
            on_pair=self._on_pair,
        )

    def _on_start(self, definition: Definition, done: int) -> None:
        self.experiment_id = definition.id
        self.stopped.discard(definition.id)
        if self._asked is not None:
            self._concurrency[definition.id] = self._asked
        resumed = self._asked is None
        self.report(self.Started(definition.id, len(definition.baselines), done, resumed))

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
