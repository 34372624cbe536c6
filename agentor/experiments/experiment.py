"""`Experiment`: recorded runs replayed against one change, each pair measured and scored, the
change summed up (docs/experiments.md); and starting or resuming one.

`start` checks everything it can before it writes anything (the runs exist and ended, the
scorers import, the model answers), records the definition, then runs the pairs
(agentor.experiments.runner). An experiment is named by what decides its candidates, so the
same start again is the same experiment, gone on with: what is missing is done, failed pairs
are tried again. `resume` does the same from the recorded definition alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.events import RUN_START, Event
from agentor.engine.history import status as run_status
from agentor.engine.statuses import INCOMPLETE
from agentor.engine.store.api import ExperimentStore, Store
from agentor.engine.store.holding import load_lines
from agentor.errors import ExperimentError, RunNotFoundError, ScorerSpecError
from agentor.experiments.judge import DEFAULT_RUBRIC, Asker, Judge
from agentor.experiments.measures import STATUS_RANK, PairMeasures
from agentor.experiments.record import Definition, PairRecord, experiment_id, read_records
from agentor.experiments.runner import AgentFor, Lines, OnPair, run_pairs
from agentor.experiments.scorers import Scorer, Verdict, scorer_of
from agentor.experiments.stats import Interval, McNemar
from agentor.experiments.summary import PairOutcome, Summary, summarize

MATCHES = ("strict", "fifo")
NOVELS = ("error", "stop", "run")
DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class Options:
    """What an experiment changes and how it runs (`Agentor.experiment`'s arguments)."""

    model: str | None = None
    instructions: str | None = None
    model_settings: Mapping[str, Any] = field(default_factory=dict)
    match: str = "strict"
    novel: str = "error"
    scorers: Sequence[str | Scorer] = ()
    concurrency: int = DEFAULT_CONCURRENCY
    name: str | None = None

    def check(self) -> None:
        if self.match not in MATCHES:
            raise ValueError(f"match= is one of {', '.join(MATCHES)}, not {self.match!r}")
        if self.novel not in NOVELS:
            raise ValueError(f"novel= is one of {', '.join(NOVELS)}, not {self.novel!r}")
        if isinstance(self.concurrency, bool) or not isinstance(self.concurrency, int):
            raise TypeError(f"concurrency= takes a whole number, not {self.concurrency!r}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency= is at least 1, not {self.concurrency}")
        if not isinstance(self.model_settings, Mapping):
            raise TypeError("model_settings= takes a dict of request settings")
        if self.name is not None and (not isinstance(self.name, str) or not self.name.strip()):
            raise ValueError("name= takes a non-empty string")


@dataclass(frozen=True)
class Pair:
    """One pair of an experiment: its baseline run, its candidate run and what was measured."""

    baseline: str
    candidate: str
    status: tuple[str, str]  # (baseline's, candidate's)
    measures: PairMeasures | None  # None: the candidate never ran to an end
    verdicts: tuple[Verdict, ...]
    error: str | None
    regressed: bool
    improved: bool

    @property
    def output_changed(self) -> bool | None:
        return None if self.measures is None else self.measures.output_changed

    @property
    def tools_changed(self) -> bool | None:
        return None if self.measures is None else self.measures.tools_changed

    @property
    def scores(self) -> dict[str, Any]:
        """Each scorer's word, as `--json` gives it: a pair verdict's bool, a run score's
        {name: [baseline, candidate]}, or {"error": ...}."""
        return {v.scorer: _score_json(v) for v in self.verdicts}

    def to_json(self) -> dict[str, Any]:
        m = self.measures
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "status": list(self.status),
            "output_changed": self.output_changed,
            "tools_changed": self.tools_changed,
            "scores": self.scores,
            "regressed": self.regressed,
            "improved": self.improved,
            "error": self.error,
            "measures": None
            if m is None
            else {
                "output_json_equal": m.output_json_equal,
                "tools": m.tools,
                "first_divergence": m.first_divergence,
                "turns": list(m.turns),
                "tokens": list(m.tokens),
                "cost": list(m.cost),
                "latency": list(m.latency),
                "served": m.served,
                "executed": m.executed,
            },
        }


def _score_json(v: Verdict) -> Any:
    if v.error is not None:
        return {"error": v.error}
    if set(v.values) == {"verdict"}:
        return v.values["verdict"][1]
    return {name: list(pair) for name, pair in v.values.items()}


class Experiment:
    """An experiment as its store records it (`Experiment.load`): `definition`, `pairs` (the
    measured ones, in the definition's order), `pending` (baselines not measured yet) and
    `summary` (worked out on first use, then kept: its bootstrap is ~0.15 s at 200 pairs;
    `counts` is the summary without its intervals, a few ms)."""

    def __init__(self, store: Store, definition: Definition, records: Mapping[str, PairRecord]):
        self.store = store
        self.definition = definition
        self.pairs = [pair_of(records[b]) for b in definition.baselines if b in records]
        self.pending = [b for b in definition.baselines if b not in records]

    @functools.cached_property
    def summary(self) -> Summary:
        """The pairs summed up: counts, regressions, each delta with its interval, each
        scorer (worked out on first use)."""
        return _summary(self.pairs)

    @functools.cached_property
    def counts(self) -> Summary:
        """The summary without the deltas' intervals (`deltas` empty; no bootstrap): how the
        pairs ended, the regressions and improvements, each scorer."""
        if "summary" in self.__dict__:  # worked out already
            return dataclasses.replace(self.summary, deltas={})
        return _summary(self.pairs, intervals=False)

    def __repr__(self) -> str:
        return f"Experiment({self.id!r}, pairs={len(self.pairs)}, pending={len(self.pending)})"

    @property
    def id(self) -> str:
        return self.definition.id

    @property
    def name(self) -> str:
        return self.definition.name

    @property
    def regressed(self) -> bool:
        return any(p.regressed for p in self.pairs)

    @classmethod
    def load(cls, store: Store, experiment_id: str) -> Experiment:
        """The experiment `experiment_id` of `store`. `ExperimentNotFoundError` when none."""
        keeper = experiments_of(store)
        definition, records = read_records(keeper.load_experiment(experiment_id))
        if definition is None:
            raise ExperimentError(f"experiment {experiment_id} records no definition")
        return cls(store, definition, records)

    @staticmethod
    def ids(store: Store) -> list[str]:
        """Every experiment of `store`."""
        return experiments_of(store).list_experiments()

    def to_json(self) -> dict[str, Any]:
        d = self.definition
        return {
            "experiment_id": d.id,
            "name": d.name,
            "change": d.change,
            "created_at": d.created_at,
            "model": d.model,
            "agent": d.agent,
            "match": d.match,
            "novel": d.novel,
            "scorers": list(d.scorers),
            "pairs": [p.to_json() for p in self.pairs],
            "pending": list(self.pending),
            "summary": summary_json(self.summary, pending=len(self.pending)),
        }


def experiments_of(store: Store) -> ExperimentStore:
    if not isinstance(store, ExperimentStore):
        raise ExperimentError(
            f"{store!r} keeps no experiments: use a FileStore, a PostgresStore or a MemoryStore"
        )
    return store


def pair_of(record: PairRecord) -> Pair:
    """The pair a record holds, with whether it regressed or improved."""
    if record.measures is not None:
        outcome = PairOutcome(record.measures, record.verdicts)
        regressed, improved = outcome.regressed, outcome.improved
    else:
        rank = STATUS_RANK.get
        regressed = rank(record.status[1], 0) < rank(record.status[0], 1)
        improved = False
    return Pair(
        record.baseline,
        record.candidate,
        record.status,
        record.measures,
        record.verdicts,
        record.error,
        regressed,
        improved,
    )


def _summary(pairs: Sequence[Pair], intervals: bool = True) -> Summary:
    measured = [PairOutcome(p.measures, p.verdicts) for p in pairs if p.measures is not None]
    summary = summarize(measured, intervals=intervals)
    unmeasured = [p for p in pairs if p.measures is None]
    return dataclasses.replace(
        summary,
        pairs=len(pairs),
        failed=summary.failed + len(unmeasured),
        regressions=summary.regressions + sum(1 for p in unmeasured if p.regressed),
    )


def summary_json(summary: Summary, *, pending: int = 0) -> dict[str, Any]:
    return {
        "pairs": summary.pairs,
        "completed": summary.completed,
        "diverged": summary.diverged,
        "failed": summary.failed,
        "pending": pending,
        "regressions": summary.regressions,
        "improvements": summary.improvements,
        "deltas": {name: _interval(i) for name, i in summary.deltas.items()},
        "scorers": {
            name: {
                "regressions": s.regressions,
                "improvements": s.improvements,
                "errors": s.errors,
                "mcnemar": _mcnemar(s.mcnemar),
            }
            for name, s in summary.scorers.items()
        },
    }


def _interval(i: Interval | None) -> dict[str, Any] | None:
    if i is None:
        return None
    return {
        "mean": i.mean,
        "low": i.low,
        "high": i.high,
        "pairs": i.pairs,
        "confidence": i.confidence,
    }


def _mcnemar(m: McNemar | None) -> dict[str, Any] | None:
    return None if m is None else {"b": m.b, "c": m.c, "p_value": m.p_value}


# -- starting and resuming ---------------------------------------------------------------------


def resolve_scorers(
    given: Sequence[str | Scorer], asker: Asker, rubric: str | None = None
) -> list[tuple[str, Scorer]]:
    """Each scorer given, as (its spec in the record, the function); a spec that names no
    scorer is a `ScorerSpecError`. A judge is bound to `asker` (and `rubric`)."""
    out: list[tuple[str, Scorer]] = []
    for item in given:
        if isinstance(item, str):
            spec, scorer = item, scorer_of(item)
        elif isinstance(item, Judge):
            spec, scorer = item.spec, item
        elif callable(item):
            spec, scorer = _spec_of(item), item
        else:
            raise ScorerSpecError(f"{item!r}: a scorer is a spec or a function")
        if isinstance(scorer, Judge):
            scorer = Judge(scorer.model, rubric or scorer.rubric).bound(asker)
        if spec in (s for s, _ in out):
            raise ScorerSpecError(f"{spec!r}: given twice")
        out.append((spec, scorer))
    return out


def _spec_of(function: Scorer) -> str:
    module = getattr(function, "__module__", None)
    name = getattr(function, "__qualname__", None) or getattr(function, "__name__", None)
    if module and name and module != "__main__" and "<" not in name:
        return f"{module}:{name}"
    return str(getattr(function, "__name__", "scorer"))


# How many events of the baselines checked before an experiment starts are kept for their
# replays (each baseline is then read once, not twice); past it, a replay reads its own.
KEPT_EVENTS = 20_000


def check_baselines(store: Store, runs: Sequence[str]) -> tuple[list[str], Lines, set[str | None]]:
    """The runs to replay, each once, in order, the lines read of the first of them (up to
    KEPT_EVENTS events, for their replays) and the system prompts they were recorded with;
    one line naming the first that cannot be (`ExperimentError`): unknown, no prompt
    recorded, or not ended."""
    baselines = list(dict.fromkeys(runs))
    if not baselines:
        raise ExperimentError("no runs to replay: give run ids (or a selection that finds some)")
    kept: Lines = {}
    prompts: set[str | None] = set()
    budget = KEPT_EVENTS
    for run_id in baselines:
        try:
            lines = load_lines(store, run_id)
        except RunNotFoundError:
            raise ExperimentError(f"no run {run_id} in {store!r}") from None
        except (OSError, ValueError) as exc:
            raise ExperimentError(f"run {run_id} cannot be read: {exc}") from None
        events = [e for e in lines if isinstance(e, Event)]
        if not any(e.type == RUN_START for e in events):
            raise ExperimentError(f"run {run_id} records no run_start: no prompt to replay")
        if run_status(events) == INCOMPLETE:
            raise ExperimentError(
                f"run {run_id} has not ended (running or interrupted): an experiment replays "
                "ended runs"
            )
        prompts.add(_system_prompt(next(e for e in events if e.type == RUN_START)))
        if len(lines) <= budget:
            kept[run_id] = lines
            budget -= len(lines)
    return baselines, kept, prompts


def _system_prompt(start: Event) -> str | None:
    """The system message a run was started with (what a replay's `instructions` replace)."""
    for m in start.messages or ():
        if isinstance(m, dict) and m.get("role") == "system":
            content = m.get("content")
            return content if isinstance(content, str) else None
    return None


async def start(
    store: Store,
    runs: Sequence[str],
    options: Options,
    agent_for: AgentFor,
    asker: Asker,
    *,
    agent: str | None = None,
    agent_spec: str | None = None,
    rubric: str | None = None,
    check: Callable[[], Awaitable[None]] | None = None,
    on_start: Callable[[Definition, int], None] | None = None,
    on_pair: OnPair | None = None,
) -> Experiment:
    """Start the experiment `options` define over `runs` (or go on with it, when it exists):
    replay each baseline with the agent `agent_for` gives, `agent` naming the candidates'
    agent (None: each baseline's own, recorded). Everything is checked before anything is
    written; `check` asks the model whether it can be used."""
    options.check()
    keeper = experiments_of(store)
    scorers = resolve_scorers(options.scorers, asker, rubric)
    baselines, lines, prompts = await asyncio.to_thread(check_baselines, store, runs)
    # Instructions every baseline was recorded with (an agent's own, given by default) are no
    # change: the definition and its name say none.
    same = prompts == {options.instructions}
    definition = _defined(options, baselines, scorers, agent, agent_spec, same)
    recorded = await asyncio.to_thread(_recorded, keeper, definition.id)
    if check is not None:
        await check()
    if recorded is None:
        await asyncio.to_thread(keeper.append_experiment, definition.id, definition.to_record())
    elif (recorded.scorers, recorded.rubric) != (definition.scorers, definition.rubric):
        # Other scorers: every pair is scored again from its runs, no candidate replayed.
        record = definition.scorers_record()
        await asyncio.to_thread(keeper.append_experiment, definition.id, record)
        definition = dataclasses.replace(
            recorded, scorers=definition.scorers, rubric=definition.rubric
        )
    else:
        definition = recorded
    return await _go(
        store,
        definition,
        agent_for,
        scorers,
        options.concurrency,
        recorded is not None,
        on_start,
        on_pair,
        lines,
    )


async def resume(
    store: Store,
    experiment_id: str,
    agent_for: Callable[[Definition], AgentFor],
    asker: Asker,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    check: Callable[[Definition], Awaitable[None]] | None = None,
    on_start: Callable[[Definition, int], None] | None = None,
    on_pair: OnPair | None = None,
) -> Experiment:
    """Go on with a recorded experiment: its missing pairs done, its failed ones retried."""
    Options(concurrency=concurrency).check()
    keeper = experiments_of(store)
    definition = await asyncio.to_thread(_recorded, keeper, experiment_id, True)
    assert definition is not None
    scorers = resolve_scorers(definition.scorers, asker, definition.rubric)
    if check is not None:
        await check(definition)
    return await _go(
        store, definition, agent_for(definition), scorers, concurrency, True, on_start, on_pair
    )


def _defined(
    options: Options,
    baselines: Sequence[str],
    scorers: Sequence[tuple[str, Scorer]],
    agent: str | None,
    agent_spec: str | None,
    same_instructions: bool = False,
) -> Definition:
    """The definition `options` give over `baselines`, its id made from what decides its
    candidates, its name the change's words when none is given."""
    settings = dict(options.model_settings)
    identity = Definition.identity(
        name=options.name,
        baselines=baselines,
        model=options.model,
        agent=agent,
        instructions=options.instructions,
        model_settings=settings,
        match=options.match,
        novel=options.novel,
    )
    definition = Definition(
        id=experiment_id(identity),
        name=options.name or "",
        baselines=tuple(baselines),
        model=options.model,
        agent=agent,
        agent_spec=agent_spec,
        # None: each baseline's recorded prompt, which these are when every one was recorded
        # with them (the candidates are asked the same either way).
        instructions=None if same_instructions else options.instructions,
        model_settings=settings,
        match=options.match,
        novel=options.novel,
        scorers=tuple(spec for spec, _ in scorers),
        rubric=_rubric_of(scorers),
        created_at=time.time(),
    )
    if not definition.name:
        named = (
            dataclasses.replace(definition, instructions=None) if same_instructions else definition
        )
        definition = dataclasses.replace(definition, name=named.change)
    return definition


def _rubric_of(scorers: Sequence[tuple[str, Scorer]]) -> str | None:
    for _, scorer in scorers:
        if isinstance(scorer, Judge) and scorer.rubric != DEFAULT_RUBRIC:
            return scorer.rubric
    return None


def _recorded(
    keeper: ExperimentStore, experiment_id: str, required: bool = False
) -> Definition | None:
    if not required and experiment_id not in keeper.list_experiments():
        return None
    definition, _ = read_records(keeper.load_experiment(experiment_id))
    if definition is None:
        raise ExperimentError(f"experiment {experiment_id} records no definition")
    return definition


async def _go(
    store: Store,
    definition: Definition,
    agent_for: AgentFor,
    scorers: list[tuple[str, Scorer]],
    concurrency: int,
    retry_failed: bool,
    on_start: Callable[[Definition, int], None] | None,
    on_pair: OnPair | None,
    lines: Lines | None = None,
) -> Experiment:
    if on_start is not None:
        keeper = experiments_of(store)
        _, done = read_records(await asyncio.to_thread(keeper.load_experiment, definition.id))
        on_start(definition, len(done))
    records = await run_pairs(
        store,
        definition,
        agent_for,
        scorers,
        concurrency=concurrency,
        retry_failed=retry_failed,
        on_pair=on_pair,
        lines=lines,
    )
    return Experiment(store, definition, records)
