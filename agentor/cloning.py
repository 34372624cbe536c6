"""`Agentor.clone`: the same agent with some settings changed, each checked as the constructor
checks it; the original is untouched."""

from __future__ import annotations

import copy
from typing import Any, TypeVar, cast

from agentor.engine.approval.gating import Gate, check_globs, check_timeout
from agentor.engine.inputs import check_max_turns, store_from, tools_and_servers, tools_from
from agentor.engine.models import OpenAIModel

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

A = TypeVar("A")


def cloned(agent: A, changes: dict[str, Any]) -> A:
    """A copy of `agent` (an `Agentor`) with `changes` (of CLONABLE) made. A model given by
    name is read by `_by_name`."""
    unknown = sorted(set(changes) - set(CLONABLE))
    if unknown:
        raise TypeError(f"clone() cannot change {', '.join(unknown)}; it changes {CLONABLE}")
    old: Any = agent
    twin: Any = copy.copy(agent)
    if "tools" in changes:
        twin.tools, twin.mcp_servers = tools_and_servers(changes["tools"])
    else:
        twin.tools, twin.mcp_servers = tools_from(old.tools), list(old.mcp_servers)
    if "name" in changes:
        twin.name = changes["name"]
    if "instructions" in changes:
        twin.instructions = changes["instructions"]
    if "store" in changes:
        twin.store = store_from(changes["store"])
    if "max_turns" in changes:
        twin.max_turns = check_max_turns(changes["max_turns"])
    globs = check_globs(changes.get("needs_approval", old.gate.globs))
    timeout = check_timeout(changes.get("approval_timeout", old.gate.timeout))
    twin.gate = Gate(globs, timeout)
    if "model" in changes:
        model = changes["model"]
        if isinstance(model, str):
            model = _by_name(old.model, model)
        twin.model = model
    return cast(A, twin)


def _by_name(was: Any, name: str) -> Any:
    """The model a name given to `clone` means: this agent's own when it is its name (an
    offline model too: `agentor replay RUN --model offline-demo`); else one on this agent's
    OpenAI-compatible endpoint, with its key and settings; else an `OpenAIModel`."""
    if getattr(was, "name", None) == name:
        return was
    return was.renamed(name) if isinstance(was, OpenAIModel) else OpenAIModel(name)
