"""Which tool calls wait for a person's approval before they run, and until when.

A tool is gated by `function_tool(needs_approval=True)`, or by a rule over its arguments
(`needs_approval=lambda args: args["amount"] > 100`), and an agent gates tools by name
(`Agentor(needs_approval=["delete_*", "send_email"])`). The rules fail closed: a rule that
raises, or arguments that are not a JSON object, ask for approval. A call of a tool the agent
does not have is never gated: nothing can run, the model gets an "unknown tool" error.

A deadline (`approval_timeout`, on the tool or the agent; the tool's wins) makes a call still
undecided after it count as rejected ("timed out") when the run is resumed.
"""

from __future__ import annotations

import fnmatch
import json
import logging
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any, Protocol

log = logging.getLogger("agentor")

ApprovalRule = bool | Callable[[dict[str, Any]], bool]


class Gated(Protocol):
    """What gating reads of a tool (`tools.Tool`, which imports this module for its checks)."""

    name: str
    needs_approval: ApprovalRule
    approval_timeout: timedelta | None


def check_rule(rule: object) -> ApprovalRule:
    """A tool's `needs_approval`: True, False, or a callable of the call's arguments."""
    if isinstance(rule, bool) or callable(rule):
        return rule
    raise TypeError(
        "needs_approval takes True, False or a function of the call's arguments "
        f"(args: dict) -> bool; got {type(rule).__name__}"
    )


def check_timeout(timeout: object) -> timedelta | None:
    """An `approval_timeout`: None or a positive `datetime.timedelta`."""
    if timeout is None:
        return None
    if not isinstance(timeout, timedelta):
        raise TypeError(
            "approval_timeout takes a datetime.timedelta, such as timedelta(hours=1); "
            f"got {type(timeout).__name__}"
        )
    if timeout <= timedelta(0):
        raise ValueError(f"approval_timeout must be positive; got {timeout}")
    return timeout


def check_globs(globs: object) -> tuple[str, ...]:
    """An agent's `needs_approval`: tool-name globs (`"delete_*"`), one glob, True for every
    tool, or False / None / () for none."""
    if globs is None or globs is False:
        return ()
    if globs is True:
        return ("*",)
    if isinstance(globs, str):
        return (globs,)
    if isinstance(globs, Iterable):
        made = tuple(globs)
        if all(isinstance(g, str) for g in made):
            return made
    raise TypeError(
        "Agentor(needs_approval=...) takes tool-name globs such as ['delete_*', 'send_email'] "
        f"(or True for every tool); got {globs!r}"
    )


def rule_says(tool: Gated, raw: str) -> bool:
    """Whether the tool's own rule asks for approval of a call with these raw arguments."""
    rule = tool.needs_approval
    if isinstance(rule, bool):
        return rule
    try:
        args = json.loads(raw) if raw else {}
    except (ValueError, RecursionError):
        return True  # fails closed: arguments the rule cannot read
    if not isinstance(args, dict):
        return True
    try:
        return bool(rule(args))
    except Exception as exc:
        log.warning("needs_approval of %s raised %r: approval is required", tool.name, exc)
        return True


class Gate:
    """An agent's gating: its tools' own rules plus its name globs and default timeout."""

    def __init__(self, globs: Iterable[str] = (), timeout: timedelta | None = None) -> None:
        self.globs = tuple(globs)
        self.timeout = timeout

    def needs(self, tool: Gated | None, name: str, raw: str) -> bool:
        """Whether a call of `name` with the raw JSON arguments `raw` waits for approval."""
        if tool is None:
            return False
        if any(fnmatch.fnmatchcase(name, glob) for glob in self.globs):
            return True
        return rule_says(tool, raw)

    def deadline(self, tool: Gated | None, now: float) -> float | None:
        """When a call requested at `now` times out (seconds since the epoch), if it can."""
        timeout = (tool.approval_timeout if tool is not None else None) or self.timeout
        return None if timeout is None else now + timeout.total_seconds()
