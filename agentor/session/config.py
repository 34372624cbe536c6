"""`AgentConfig`: what an `Agentor` runs with, as its constructor checked it, frozen for a call
(a run never sees the agent change under it); and `changed`, the settings `Agentor.clone`
changes, each checked as the constructor checks it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from agentor.engine.approval.gating import Gate, check_globs, check_timeout
from agentor.engine.inputs import (
    Input,
    check_input,
    check_max_turns,
    store_from,
    tools_and_servers,
    tools_from,
)
from agentor.engine.mcp import ToolServer
from agentor.engine.models import Model, OpenAIModel
from agentor.engine.store.api import Store
from agentor.engine.structured import OutputSpec
from agentor.engine.tools import Tool

CLONABLE = (
    "name",
    "model",
    "instructions",
    "tools",
    "store",
    "max_turns",
    "needs_approval",
    "approval_timeout",
)


@dataclass(frozen=True)
class AgentConfig:
    """An agent's configuration, read once for a call. `tracing` as the agent was given it
    (agentor.tracing_setting); `fallbacks`: the agent's own, asked when its model fails."""

    name: str
    instructions: str | None
    model: Model
    tools: tuple[Tool, ...]
    mcp_servers: tuple[ToolServer, ...]
    store: Store | None
    max_turns: int
    max_tool_failures: int
    gate: Gate
    output: OutputSpec | None
    tracing: Any
    capture_content: bool
    fallbacks: tuple[Model, ...] = ()

    def require_store(self, what: str = "resume") -> Store:
        return require_store(self.store, what)

    def input_messages(self, input: Input) -> list[dict[str, Any]]:
        """The messages a run of `input` starts with: the instructions, then the input."""
        check_input(input)
        msgs: list[dict[str, Any]] = []
        if self.instructions:
            msgs.append({"role": "system", "content": self.instructions})
        if isinstance(input, str):
            msgs.append({"role": "user", "content": input})
        else:
            msgs.extend(dict(m) for m in input)
        return msgs

    def changed(self, changes: Mapping[str, Any]) -> AgentConfig:
        """This configuration with `changes` (of CLONABLE) made, each checked as the
        constructor checks it. A model given by name is read by `model_named`."""
        unknown = sorted(set(changes) - set(CLONABLE))
        if unknown:
            raise TypeError(f"clone() cannot change {', '.join(unknown)}; it changes {CLONABLE}")
        if "tools" in changes:
            tools, servers = tools_and_servers(changes["tools"])
        else:
            tools, servers = tools_from(self.tools), list(self.mcp_servers)
        store = store_from(changes["store"]) if "store" in changes else self.store
        turns = changes.get("max_turns", self.max_turns)
        max_turns = check_max_turns(turns) if "max_turns" in changes else self.max_turns
        globs = check_globs(changes.get("needs_approval", self.gate.globs))
        timeout = check_timeout(changes.get("approval_timeout", self.gate.timeout))
        model = model_named(self.model, changes["model"]) if "model" in changes else self.model
        return replace(
            self,
            name=changes.get("name", self.name),
            instructions=changes.get("instructions", self.instructions),
            model=model,
            tools=tuple(tools),
            mcp_servers=tuple(servers),
            store=store,
            max_turns=max_turns,
            gate=Gate(globs, timeout),
        )


def require_store(store: Store | None, what: str = "resume") -> Store:
    """`store`, or a ValueError saying that `what` needs one."""
    if store is None:
        raise ValueError(f"{what} needs a store: build the Agentor with store=FileStore(...)")
    return store


def model_named(was: Model, model: str | Model) -> Model:
    """The model `model` means beside an agent's model `was`: a model object as it is; by name,
    `was` itself when it is its name (an offline model too: `agentor replay RUN --model
    offline-demo`); else one on `was`'s OpenAI-compatible endpoint, with its key and settings;
    else an `OpenAIModel`."""
    if not isinstance(model, str):
        return model
    if getattr(was, "name", None) == model:
        return was
    return was.renamed(model) if isinstance(was, OpenAIModel) else OpenAIModel(model)
