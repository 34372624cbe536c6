"""agentor: LLM agents whose every step is saved, so another process can finish the job."""

from .agent import Agentor, NothingToResumeError, RunResult
from .engine.store import RunLockedError, RunNotFoundError
from .engine.tools import Tool, function_tool

__all__ = [
    "Agentor",
    "NothingToResumeError",
    "RunLockedError",
    "RunNotFoundError",
    "RunResult",
    "Tool",
    "function_tool",
]
__version__ = "0.1.0"
