"""The agents given on `agentor-tui`'s command line, matched to the runs they may resume.

Loading one from an `--agent` spec is the engine's (`agentor.agents`, shared with the
`agentor` command); which agent serves which run, and what to say when none does, is the TUI's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentor import Agentor
from agentor.agents import load_agent
from agentor.engine.store.api import Store
from agentor.errors import AgentSpecError


class AgentSet:
    """The agents given on the command line, matched to runs by agent name.

    A run is resumed only by an agent of the name that wrote it (its `run_start.agent`): the
    new segment is recorded under the resuming agent's name, model and tools. `any_agent`
    (`--any-agent`, with a single agent) lets that agent resume runs of any name."""

    def __init__(self, agents: Iterable[Agentor] = (), any_agent: bool = False) -> None:
        self.agents: list[Agentor] = list(agents)
        self.any_agent = any_agent
        self._bound: dict[tuple[int, int], Agentor] = {}

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
        return cls(agents, any_agent)

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

    def missing_hint(self, agent_name: str | None) -> str:
        """One line saying how to give the agent a run needs."""
        run_agent = f"agent {agent_name!r}" if agent_name else "an agent"
        if not self.agents:
            return (
                f"no agent to resume with: this run needs {run_agent}; start agentor-tui "
                "with --agent path/to/file.py:name (or package.module:name)"
            )
        if len(self.agents) == 1:
            return (
                f"this run was written by {agent_name}; --agent gives {self.agents[0].name} "
                "(start agentor-tui with --any-agent to resume it with that agent anyway)"
            )
        loaded = ", ".join(repr(n) for n in self.names)
        return (
            f"no --agent for this run: it needs {run_agent}, loaded: {loaded}; add "
            "--agent SPEC for an Agentor with that name"
        )
