"""`agentor experiment run|ls|show|resume|export`: recorded runs replayed against one change
(another model, agent, instructions or settings), each pair measured and scored, the change
summed up with paired statistics (agentor.experiments, docs/experiments.md).

    agentor experiment run --store S (RUN... | --status S | --search TEXT | --since AGE |
        --agent-name NAME | --limit N) [--model M] [--agent SPEC] [--instructions FILE]
        [--set KEY=VALUE]... [--match strict|fifo] [--novel error|stop|run] [--scorer SPEC]...
        [--rubric FILE] [--concurrency N] [--name NAME] [--json] [--fail-on regression]
    agentor experiment ls [--json]
    agentor experiment show ID [--json]
    agentor experiment resume ID [--agent SPEC] [--concurrency N] [--json] [--fail-on regression]
    agentor experiment export ID --format md|html|json [-o FILE]

Without `--agent`, each baseline is replayed by an agent made from its own record (its tools,
none of which runs here) asking `--model` through the openai client's environment
(OPENAI_BASE_URL, OPENAI_API_KEY). Everything is checked before anything is written. Exit
status: 0 done; 1 refused (an unknown run or experiment, a model that cannot be asked, a
scorer that does not import), or, with `--fail-on regression`, a pair regressed; 2 a usage
error; 130 on ^C (what was recorded stays: `resume` goes on).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from argparse import Namespace
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentor.agent import Agentor
from agentor.agents import AgentSet, absolute_spec, experiment_agents, load_agent
from agentor.cli.experiment_text import experiment_lines, export_html, export_markdown
from agentor.cli.lines import Refusal, UsageError, print_json, stamp
from agentor.cli.stores import run_in, source_of, store_of
from agentor.engine.statuses import INTERRUPTED, RUNNING
from agentor.engine.store.api import Store
from agentor.errors import (
    AgentorError,
    AgentSpecError,
    ExperimentNotFoundError,
    ModelError,
)
from agentor.experiments.candidates import judge_asker, model_check
from agentor.experiments.experiment import Experiment, Options, experiments_of, pair_of
from agentor.experiments.experiment import resume as resume_experiment
from agentor.experiments.experiment import start as start_experiment
from agentor.experiments.listing import listed
from agentor.experiments.record import Definition, PairRecord, read_records
from agentor.experiments.runner import AgentFor
from agentor.literal import literal_line
from agentor.ops.run_search import search as find
from agentor.sources.listing import list_rows


def run(args: Namespace) -> int:
    if args.novel == "run" and args.agent is None:
        raise UsageError("--novel run needs --agent: without one no tool can run here")
    if args.agent is None and args.model is None:
        raise UsageError("give --model M (or --agent SPEC): without either no model is asked")
    settings = _settings(args.set or [])
    instructions = _read_text(args.instructions, "--instructions")
    rubric = _read_text(args.rubric, "--rubric")
    store = store_of(args, make_schema=True)
    baselines = _selected(args, store)
    agent = _loaded(args.agent, store)
    options = Options(
        model=args.model,
        instructions=instructions if instructions is not None else _own(agent),
        model_settings=settings,
        match=args.match,
        novel=args.novel,
        scorers=tuple(args.scorer or ()),
        concurrency=args.concurrency,
        name=args.name,
    )
    agent_for, asker_agent = _agents(agent, store, args.model, settings)
    first = _first(asker_agent, baselines[0])
    progress = _Progress(len(baselines))
    try:
        experiment = asyncio.run(
            start_experiment(
                store,
                baselines,
                options,
                agent_for,
                judge_asker(first, Agentor),
                agent=None if agent is None else agent.name,
                # Absolute: `experiment resume` from another directory loads the same file.
                agent_spec=None if args.agent is None else absolute_spec(args.agent),
                rubric=rubric,
                check=model_check(first),
                on_start=progress.start,
                on_pair=progress.pair,
            )
        )
    except (AgentorError, ValueError, TypeError) as exc:
        raise Refusal(_one_line(exc)) from None
    finally:
        progress.done()
    return _report(experiment, args)


def resume(args: Namespace) -> int:
    store = store_of(args)
    definition = _definition(store, args.experiment_id)
    spec = args.agent or definition.agent_spec
    agent = _loaded(spec, store)
    if definition.agent is not None and agent is None:
        raise UsageError(
            f"experiment {definition.id} was run with agent {definition.agent!r}: give --agent"
        )

    def agents(d: Definition) -> AgentFor:
        return _agents(agent, store, d.model, d.model_settings)[0]

    asker_agent = _agents(agent, store, definition.model, definition.model_settings)[1]
    first = _first(asker_agent, definition.baselines[0])
    progress = _Progress(len(definition.baselines))
    try:
        experiment = asyncio.run(
            resume_experiment(
                store,
                definition.id,
                agents,
                judge_asker(first, Agentor),
                concurrency=args.concurrency,
                check=lambda d: model_check(first)(),
                on_start=progress.start,
                on_pair=progress.pair,
            )
        )
    except (AgentorError, ValueError, TypeError) as exc:
        raise Refusal(_one_line(exc)) from None
    finally:
        progress.done()
    return _report(experiment, args)


def ls(args: Namespace) -> int:
    try:
        found = listed(store_of(args))
    except AgentorError as exc:
        raise Refusal(str(exc)) from None
    if args.json:
        print_json([f.to_json() for f in found])
        return 0
    if not found:
        print("no experiments in this store")
        return 0
    for f in found:
        d = f.definition
        print(
            f"{d.id}  {stamp(d.created_at)}  {f.measured}/{f.total} pairs  "
            f"{f.regressions} regressed  {literal_line(d.name, 60)}"
        )
    return 0


def show(args: Namespace) -> int:
    experiment = _experiment(store_of(args), args.experiment_id)
    if args.json:
        print_json(experiment.to_json())
    else:
        print("\n".join(experiment_lines(experiment)))
    return 0


def export(args: Namespace) -> int:
    experiment = _experiment(store_of(args), args.experiment_id)
    if args.format == "json":
        text = json.dumps(experiment.to_json(), ensure_ascii=False, indent=2) + "\n"
    elif args.format == "html":
        text = export_html(experiment)
    else:
        text = export_markdown(experiment)
    if args.output in (None, "-"):
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise Refusal(f"cannot write {args.output}: {exc.strerror or exc}") from None
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


# -- choosing the runs -------------------------------------------------------------------------


def _selected(args: Namespace, store: Store) -> list[str]:
    """The baselines: the runs named, or those the selection options find (newest first)."""
    selecting = any(
        x is not None for x in (args.status, args.search, args.since, args.agent_name, args.limit)
    )
    if args.runs and selecting:
        raise UsageError("give runs, or a selection (--status, --search, ...), not both")
    if args.runs:
        return [run_in(store, given) for given in args.runs]
    if not selecting:
        raise UsageError(
            "which runs? give RUN..., or --status S, --search TEXT, --since AGE, "
            "--agent-name NAME or --limit N"
        )
    source = source_of(args)
    rows = list_rows(source)
    if source.error is not None:
        raise Refusal(source.error)
    now = time.time()
    rows = [r for r in rows if r.summary is not None and r.status not in (RUNNING, INTERRUPTED)]
    if args.status:
        rows = [r for r in rows if r.status == args.status]
    if args.agent_name is not None:
        rows = [r for r in rows if r.summary is not None and r.summary.agent == args.agent_name]
    if args.since is not None:
        cutoff = now - args.since.total_seconds()
        rows = [r for r in rows if r.sort_key >= cutoff]
    if args.search is not None:
        try:
            hits = {h.run_id for h in find(store, args.search)}
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        rows = [r for r in rows if r.run_id in hits]
    if args.limit is not None:
        rows = rows[: args.limit]
    if not rows:
        raise Refusal("no ended runs match the selection: nothing to replay")
    return [r.run_id for r in rows]


# -- the agents --------------------------------------------------------------------------------


def _loaded(spec: str | None, store: Store) -> Agentor | None:
    if spec is None:
        return None
    try:
        agent = AgentSet([], any_agent=True).writing_to(load_agent(spec), store)
    except AgentSpecError as exc:
        raise UsageError(str(exc)) from None
    return agent


def _own(agent: Agentor | None) -> str | None:
    return None if agent is None else agent.instructions


def _agents(
    agent: Agentor | None, store: Store, model: str | None, settings: dict[str, Any]
) -> tuple[AgentFor, Callable[[str], Any]]:
    """Who replays each baseline (and asks a judge): the agent given, changed once; or, without
    one, an agent of each baseline's record asking `model` (`experiment_agents`)."""
    try:
        return experiment_agents(agent, store, model, settings)
    except (ValueError, TypeError) as exc:
        raise UsageError(_one_line(exc)) from None


def _first(asker_agent: Callable[[str], Any], baseline: str) -> Any:
    """The agent of the first baseline, made now: a bad setting is refused before anything is
    written (and it asks the judge, and is asked whether the model answers)."""
    try:
        return asker_agent(baseline)
    except (ValueError, TypeError) as exc:
        raise UsageError(_one_line(exc)) from None
    except AgentorError as exc:
        raise Refusal(_one_line(exc)) from None


# -- reading -----------------------------------------------------------------------------------


def _definition(store: Store, experiment_id: str) -> Definition:
    try:
        definition, _ = read_records(experiments_of(store).load_experiment(experiment_id))
    except ExperimentNotFoundError:
        raise Refusal(
            f"no experiment {experiment_id} in this store (agentor experiment ls)"
        ) from None
    except (AgentorError, ValueError) as exc:
        raise Refusal(_one_line(exc)) from None
    if definition is None:
        raise Refusal(f"experiment {experiment_id} records no definition")
    return definition


def _experiment(store: Store, experiment_id: str) -> Experiment:
    try:
        return Experiment.load(store, experiment_id)
    except ExperimentNotFoundError:
        raise Refusal(
            f"no experiment {experiment_id} in this store (agentor experiment ls)"
        ) from None
    except (AgentorError, ValueError) as exc:
        raise Refusal(_one_line(exc)) from None


def _regressed(record: PairRecord) -> bool:
    return pair_of(record).regressed


# -- output ------------------------------------------------------------------------------------


def _report(experiment: Experiment, args: Namespace) -> int:
    if args.json:
        print_json(experiment.to_json())
    else:
        print("\n".join(experiment_lines(experiment)))
    if args.fail_on == "regression" and experiment.regressed:
        return 1
    return 0


class _Progress:
    """A progress bar on stderr, on a terminal only: `3/10 pairs`."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.count = 0
        self.regressed = 0
        self.shown = sys.stderr.isatty()
        self.id = ""

    def start(self, definition: Definition, done: int) -> None:
        self.id, self.count, self.total = definition.id, done, len(definition.baselines)
        self._draw()

    def pair(self, record: PairRecord) -> None:
        self.count += 1
        self.regressed += _regressed(record)
        self._draw()

    def _draw(self) -> None:
        if not self.shown:
            return
        width = 30
        filled = int(width * self.count / max(1, self.total))
        bar = "#" * filled + "-" * (width - filled)
        sys.stderr.write(
            f"\r{self.id} [{bar}] {self.count}/{self.total} pairs, {self.regressed} regressed"
        )
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown and self.id:
            sys.stderr.write("\n")
            sys.stderr.flush()


# -- arguments ---------------------------------------------------------------------------------


def _settings(pairs: list[str]) -> dict[str, Any]:
    """`--set KEY=VALUE`s: each value read as JSON (0.2, true, "x", [..]), else as text."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set takes KEY=VALUE, not {pair!r}")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def _read_text(path: str | None, flag: str) -> str | None:
    if path is None:
        return None
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"{flag} {path}: {why}") from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, ModelError | AgentorError):
        return text
    return text or type(exc).__name__
