"""agentor: LLM agents whose every step is saved, so another process can finish the job.

The public names are imported when first used (PEP 562): `agentor --help` and `agentor ls`
start without loading pydantic, asyncio or the model client.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentor.agent import Agentor
    from agentor.engine.approval.decisions import approve, reject
    from agentor.engine.approval.pending import Decision, PendingCall, pending_calls
    from agentor.engine.tools import Tool, function_tool
    from agentor.errors import (
        AlreadyDecidedError,
        ApprovalError,
        ApprovalTimedOutError,
        InvalidArgsError,
        NothingToResumeError,
        NotRequestedError,
        RunLockedError,
        RunNotFoundError,
    )
    from agentor.result import RunResult

_WHERE = {
    "Agentor": ".agent",
    "NothingToResumeError": ".agent",
    "RunResult": ".result",
    "RunLockedError": ".engine.store",
    "RunNotFoundError": ".engine.store",
    "Tool": ".engine.tools",
    "function_tool": ".engine.tools",
    "approve": ".engine.decisions",
    "reject": ".engine.decisions",
    "ApprovalError": ".engine.decisions",
    "AlreadyDecidedError": ".engine.decisions",
    "ApprovalTimedOutError": ".engine.decisions",
    "NotRequestedError": ".engine.decisions",
    "InvalidArgsError": ".engine.decisions",
    "Decision": ".engine.approvals",
    "PendingCall": ".engine.approvals",
    "pending_calls": ".engine.approvals",
}

__all__ = [
    "Agentor",
    "AlreadyDecidedError",
    "ApprovalError",
    "ApprovalTimedOutError",
    "Decision",
    "InvalidArgsError",
    "NotRequestedError",
    "NothingToResumeError",
    "PendingCall",
    "RunLockedError",
    "RunNotFoundError",
    "RunResult",
    "Tool",
    "approve",
    "function_tool",
    "pending_calls",
    "reject",
]
assert sorted(__all__) == sorted(_WHERE)
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'agentor' has no attribute {name!r}")
    value = getattr(importlib.import_module(where, __name__), name)
    globals()[name] = value  # once: later uses find it directly
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
