"""The agents a command or the TUI resumes runs with: loaded from `--agent` specs
(`load_agent`), and matched to the runs they may resume (`AgentSet`: the one rule for which
agent serves a run, and the agent bound to the store the run is in).

A spec is `path/to/file.py:name` or `package.module:name`; `name` (dots allowed, for an
attribute of an attribute) is an `Agentor` or a zero-argument callable returning one. Loading
runs the module's code, as `python path/to/file.py` would, so its imports of sibling modules
work: the file's directory (or, for a module, the current directory) goes on `sys.path`.

Textual-free, for the `agentor` command and the TUI alike.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from agentor.agent import Agentor
from agentor.engine.events import RUN_START, Event
from agentor.engine.models import Model
from agentor.engine.store.api import Store
from agentor.engine.store.holding import load_run
from agentor.engine.tools import RecordedTool
from agentor.errors import AgentSpecError, ExperimentError

if TYPE_CHECKING:
    from agentor.experiments.runner import AgentFor


class RecordedAgent(Agentor):
    """An agent of a run's record alone (`recorded_agent`): it replays, it never forks."""


def recorded_agent(start: Event, model: str | Model, store: Store) -> RecordedAgent:
    """An agent made from a run's record alone, to replay the run with `model` (a name, or a
    model shared by several such agents) when no agent is given (a run another framework
    made): the run's agent name, the tools its `run_start` offered (`RecordedTool`: never run
    here), no instructions of its own (the recorded conversation carries them)."""
    tools = [RecordedTool(schema) for schema in start.tools or () if _named(schema)]
    return RecordedAgent(name=start.agent or "recorded", model=model, tools=tools, store=store)


def _named(schema: dict[str, Any]) -> bool:
    function = schema.get("function")
    return isinstance(function, dict) and isinstance(function.get("name"), str)


def experiment_agents(
    agent: Agentor | None, store: Store, model: str | None, settings: Mapping[str, Any]
) -> tuple[AgentFor, Callable[[str], Agentor]]:
    """Who replays an experiment's baselines (`agent_for`), and the agent of a baseline by its
    id alone (the first baseline's asks the judge and is asked whether the model answers):
    `agent` changed once (`model`, `settings`), or, without one, an agent of each baseline's
    record asking `model` (`recorded_agent`; through the openai client's environment). A bad
    setting is a `ValueError` or `TypeError` when the agent is made (for `agent`: now)."""
    from agentor.experiments.candidates import candidate_agent  # loaded for experiments only

    if agent is not None:
        runner = candidate_agent(agent, model, settings)
        return (lambda baseline, events: runner), (lambda baseline: runner)
    if model is None:
        raise ValueError("without an agent, an experiment needs a model to ask")
    # One agent for the baselines of one agent name and tools, all of them asking one model
    # (with the settings), made with the first agent: one client, its connections and its
    # check, not one a candidate (a client costs ~36 ms to make; an agent, its tools' schemas).
    made: dict[tuple[str | None, str], Agentor] = {}
    shared: list[Model] = []

    def recorded(baseline: str, events: list[Event]) -> Agentor:
        start = next((e for e in events if e.type == RUN_START), None)
        if start is None:
            raise ExperimentError(f"run {baseline} records no run_start: no prompt to replay")
        key = (start.agent, json.dumps(start.tools, sort_keys=True, default=str))
        if key not in made:
            if shared:
                made[key] = recorded_agent(start, shared[0], store)
            else:
                made[key] = candidate_agent(recorded_agent(start, model, store), None, settings)
                shared.append(made[key].model)
        return made[key]

    def first(baseline: str) -> Agentor:
        return recorded(baseline, load_run(store, baseline))

    return recorded, first


def load_agent(spec: str) -> Agentor:
    """The `Agentor` a spec names. Raises `AgentSpecError`."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise AgentSpecError(spec, "expected path/to/file.py:name or package.module:name")
    if target.endswith(".py") or os.sep in target or "/" in target:
        module, where = _load_file(spec, Path(target)), target
    else:
        module, where = _load_module(spec, target), f"module {target}"
    value: Any = module
    for i, part in enumerate(attr.split(".")):
        try:
            value = getattr(value, part)
        except AttributeError:
            owner = where if i == 0 else ".".join(attr.split(".")[:i])
            raise AgentSpecError(spec, f"no attribute {part!r} in {owner}") from None
        except Exception as exc:
            raise AgentSpecError(spec, f"reading {attr}: {_one_line(exc)}") from None
    if isinstance(value, Agentor):
        return value
    if not callable(value):
        raise AgentSpecError(spec, f"not an Agentor: {attr} is a {type(value).__name__}")
    try:
        made = value()
    except Exception as exc:
        raise AgentSpecError(spec, f"calling {attr}() failed: {_one_line(exc)}") from None
    if not isinstance(made, Agentor):
        raise AgentSpecError(spec, f"not an Agentor: {attr}() returned a {type(made).__name__}")
    return made


def absolute_spec(spec: str) -> str:
    """`spec` with its file's path made absolute (`path/to/file.py:name`); a module's spec
    as it is."""
    target, sep, attr = spec.rpartition(":")
    if sep and target and (target.endswith(".py") or os.sep in target or "/" in target):
        return f"{Path(target).expanduser().resolve()}:{attr}"
    return spec


def _load_file(spec: str, path: Path) -> ModuleType:
    if not path.is_file():
        cause = "is not a file" if path.exists() else "no such file"
        raise AgentSpecError(spec, f"{cause}: {path}")
    path = path.resolve()
    name = f"_agentor_agent_{path.stem}_{abs(hash(str(path))):x}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise AgentSpecError(spec, f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    _on_path(str(path.parent))
    sys.modules[name] = module  # as an import does: dataclasses and pickling look it up
    try:
        module_spec.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise AgentSpecError(spec, f"import error: {_one_line(exc)}") from None
    return module


def _load_module(spec: str, target: str) -> ModuleType:
    _on_path(os.getcwd())
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and (target == exc.name or target.startswith(exc.name + ".")):
            raise AgentSpecError(spec, f"no module named {exc.name!r}") from None
        raise AgentSpecError(spec, f"import error: {_one_line(exc)}") from None
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise AgentSpecError(spec, f"import error: {_one_line(exc)}") from None


def _on_path(directory: str) -> None:
    if directory not in sys.path:
        sys.path.insert(0, directory)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, SyntaxError) and exc.lineno:
        text = f"{exc.msg} ({Path(exc.filename or '?').name}, line {exc.lineno})"
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def agent_mismatch(agent: Agentor, run_agent: str | None) -> str | None:
    """Why `agent` should not resume a run written by the agent named `run_agent` (the new
    segment would be recorded under another agent's name, tools and model); None if it may."""
    if run_agent is None or run_agent == agent.name:
        return None
    return f"this run was written by {run_agent}; --agent gives {agent.name}"


class AgentSet:
    """The agents given on the command line, matched to runs by agent name.

    A run is resumed only by an agent of the name that wrote it (its `run_start.agent`): the
    new segment is recorded under the resuming agent's name, model and tools. `any_agent`
    (`--any-agent`, with a single agent) lets that agent resume runs of any name."""

    def __init__(self, agents: Iterable[Agentor] = (), any_agent: bool = False) -> None:
        self.agents: list[Agentor] = list(agents)
        self.any_agent = any_agent
        self._bound: dict[tuple[int, int], Agentor] = {}
        self._specs: dict[int, str] = {}  # each loaded agent's spec, by id(agent)

    @classmethod
    def load(cls, specs: Sequence[str], any_agent: bool = False) -> AgentSet:
        """Load every spec. Raises `AgentSpecError` (the first failure)."""
        agents: list[Agentor] = []
        names: dict[str, str] = {}
        for spec in specs:
            agent = load_agent(spec)
            if len(specs) > 1 and agent.name in names:
                raise AgentSpecError(
                    spec, f"two agents are named {agent.name!r} (also {names[agent.name]})"
                )
            names[agent.name] = spec
            agents.append(agent)
        made = cls(agents, any_agent)
        made._specs = {id(agent): spec for agent, spec in zip(agents, specs, strict=True)}
        return made

    def spec_of(self, agent: Agentor) -> str | None:
        """The spec `agent` was loaded from, a file's path made absolute (another process,
        in another directory, loads the same agent from it); None for an agent given as
        is."""
        spec = self._specs.get(id(agent))
        return None if spec is None else absolute_spec(spec)

    def __len__(self) -> int:
        return len(self.agents)

    @property
    def names(self) -> list[str]:
        return [a.name for a in self.agents]

    def for_run(self, agent_name: str | None) -> Agentor | None:
        """The agent to resume a run of `agent_name` (its `run_start.agent`) with, if any."""
        if len(self.agents) == 1 and (self.any_agent or agent_name is None):
            return self.agents[0]  # allowed to serve every run (or the run names none)
        for agent in self.agents:
            if agent.name == agent_name:
                return agent
        return None

    def writing_to(self, agent: Agentor, store: Store) -> Agentor:
        """`agent` as it is, but saving to `store`: a resume writes into the directory the TUI
        shows, whatever store the agent module was built with."""
        if agent.store is store:
            return agent
        key = (id(agent), id(store))
        bound = self._bound.get(key)
        if bound is None:
            bound = self._bound[key] = agent.clone(store=store)
        return bound

    def missing_hint(self, agent_name: str | None, doing: str = "resume") -> str:
        """One line saying how to give the agent a run needs to `doing` it ("resume", "fork")."""
        run_agent = f"agent {agent_name!r}" if agent_name else "an agent"
        if not self.agents:
            return (
                f"no agent to {doing} with: this run needs {run_agent}; start agentor-tui "
                "with --agent path/to/file.py:name (or package.module:name)"
            )
        if len(self.agents) == 1:
            return (
                f"this run was written by {agent_name}; --agent gives {self.agents[0].name} "
                f"(start agentor-tui with --any-agent to {doing} it with that agent anyway)"
            )
        loaded = ", ".join(repr(n) for n in self.names)
        return (
            f"no --agent for this run: it needs {run_agent}, loaded: {loaded}; add "
            "--agent SPEC for an Agentor with that name"
        )
