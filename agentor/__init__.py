"""agentor: LLM agents whose every step is saved, so another process can finish the job.

The public API is what this module exports (`__all__`), plus `agentor.ops` (operating a store:
retention, search, export, cost) and `agentor.testing` (a scripted model). Upstream Agentor's
own import paths keep working for code written for it: `agentor.engine.store` (FileStore,
MemoryStore, Store), `agentor.engine.events` (Event, Usage and the event type names),
`agentor.engine.tools` and `agentor.engine.models`. Every other module is internal and may
change between releases.

The names are imported when first used (PEP 562): `agentor --help` and `agentor ls` start
without loading pydantic, asyncio or the model client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentor._version import __version__

if TYPE_CHECKING:
    from agentor.agent import Agentor
    from agentor.backends import open_store
    from agentor.engine.approval.decisions import approve, reject
    from agentor.engine.approval.pending import Decision, PendingCall, pending_calls
    from agentor.engine.events import Event, Usage
    from agentor.engine.fork.compare import Comparison, compare
    from agentor.engine.mcp import MCPServer, MCPServerStdio
    from agentor.engine.models import Model, ModelResponse, OpenAIModel
    from agentor.engine.settings import ModelSettings
    from agentor.engine.store.api import Store
    from agentor.engine.store.copy import copy_runs
    from agentor.engine.store.file import FileStore
    from agentor.engine.store.memory import MemoryStore
    from agentor.engine.store.postgres import PostgresStore
    from agentor.engine.tools import Tool, function_tool
    from agentor.errors import (
        AgentorError,
        AgentSpecError,
        AlreadyDecidedError,
        ApprovalError,
        ApprovalTimedOutError,
        DeleteRefusedError,
        ExperimentError,
        ExperimentNotFoundError,
        InvalidArgsError,
        InvalidResultError,
        MalformedDsnError,
        MCPServerError,
        MCPToolError,
        ModelError,
        NothingToResumeError,
        NotRequestedError,
        OutputValidationError,
        PostgresStoreError,
        RunFailedError,
        RunIdTakenError,
        RunLockedError,
        RunLostError,
        RunNotFoundError,
        SchemaNotFoundError,
        SchemaVersionError,
        ScorerSpecError,
        SpanDecodeError,
        StoreSpecError,
        StoreUnavailableError,
        TelemetryUnavailableError,
        ToolArgumentsError,
        UnreadableRunError,
    )
    from agentor.experiments.experiment import Experiment
    from agentor.experiments.judge import Judge
    from agentor.result import RunResult

_ERRORS = (
    "AgentorError",
    "AgentSpecError",
    "AlreadyDecidedError",
    "ApprovalError",
    "ApprovalTimedOutError",
    "DeleteRefusedError",
    "ExperimentError",
    "ExperimentNotFoundError",
    "InvalidArgsError",
    "InvalidResultError",
    "MalformedDsnError",
    "MCPServerError",
    "MCPToolError",
    "ModelError",
    "NothingToResumeError",
    "NotRequestedError",
    "OutputValidationError",
    "PostgresStoreError",
    "RunFailedError",
    "RunIdTakenError",
    "RunLockedError",
    "RunLostError",
    "RunNotFoundError",
    "SchemaNotFoundError",
    "SchemaVersionError",
    "ScorerSpecError",
    "SpanDecodeError",
    "StoreSpecError",
    "StoreUnavailableError",
    "TelemetryUnavailableError",
    "ToolArgumentsError",
    "UnreadableRunError",
)
_WHERE = {
    "Agentor": "agentor.agent",
    "RunResult": "agentor.result",
    "Event": "agentor.engine.events",
    "Usage": "agentor.engine.events",
    "Tool": "agentor.engine.tools",
    "function_tool": "agentor.engine.tools",
    "Model": "agentor.engine.models",
    "ModelResponse": "agentor.engine.models",
    "OpenAIModel": "agentor.engine.models",
    "ModelSettings": "agentor.engine.settings",
    "Store": "agentor.engine.store.api",
    "FileStore": "agentor.engine.store.file",
    "MemoryStore": "agentor.engine.store.memory",
    "PostgresStore": "agentor.engine.store.postgres",
    "open_store": "agentor.backends",
    "copy_runs": "agentor.engine.store.copy",
    "approve": "agentor.engine.approval.decisions",
    "reject": "agentor.engine.approval.decisions",
    "pending_calls": "agentor.engine.approval.pending",
    "Decision": "agentor.engine.approval.pending",
    "PendingCall": "agentor.engine.approval.pending",
    "compare": "agentor.engine.fork.compare",
    "MCPServer": "agentor.engine.mcp",
    "MCPServerStdio": "agentor.engine.mcp",
    "Comparison": "agentor.engine.fork.compare",
    "Experiment": "agentor.experiments.experiment",
    "Judge": "agentor.experiments.judge",
    **dict.fromkeys(_ERRORS, "agentor.errors"),
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'agentor' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value  # once: later uses find it directly
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
