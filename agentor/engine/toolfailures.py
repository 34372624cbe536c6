"""`max_tool_failures`: a tool that keeps failing is withdrawn, as upstream Agentor does.

A failure is a `tool_result` recorded as an error, whatever the cause: the tool raised, its name
is unknown, its arguments were not valid JSON or did not fit, a person rejected the call, a
remote (MCP) tool answered with an error. Counted per tool name (an unknown name too: a model
that keeps inventing one would otherwise burn every turn). At `limit` failures the tool is
disabled: its schema is no longer offered, a later call to it is answered with upstream's
"disabled after repeated failures" error without running, and before the next request the
model is told (a `tool_disabled` event, whose notice a resume sends as the live run did).

Durable: the counts and the disabled set are read from the log (`ToolFailures.of`), every
segment of it, so a resumed or forked run keeps them; the loop then counts the results it
records (`add`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from agentor.engine.events import TOOL_DISABLED, TOOL_RESULT, Event

DEFAULT_LIMIT = 2


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError(f"max_tool_failures must be a whole number, 0 or more; got {limit!r}")
    return limit


def disabled_error(name: str) -> str:
    """The error a call to a disabled tool is answered with (the model reads "Error: " and it:
    upstream's words)."""
    return f"tool {name!r} is disabled after repeated failures."


def notice(name: str, count: int) -> dict[str, Any]:
    """The message telling the model a tool was withdrawn (upstream's words)."""
    times = f"{count} time{'s' if count != 1 else ''}"
    text = (
        f"The tool '{name}' failed {times} and is now unavailable. "
        "Answer without it, or explain what you cannot do."
    )
    return {"role": "user", "content": text}


class ToolFailures:
    """Failed calls per tool name, the tools disabled, and those the model was told about."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.counts: Counter[str] = Counter()
        self.disabled: set[str] = set()
        self.announced: set[str] = set()

    @classmethod
    def of(cls, events: Iterable[Event], limit: int) -> ToolFailures:
        failures = cls(limit)
        for e in events:
            if e.type == TOOL_RESULT:
                failures.add(e)
            elif e.type == TOOL_DISABLED and e.name:
                failures.announced.add(e.name)
        return failures

    def add(self, result: Event) -> None:
        """Count a recorded tool result (a refused call to a disabled tool is not counted)."""
        name = result.name or ""
        if result.error is None or name in self.disabled:
            return
        self.counts[name] += 1
        if self.counts[name] >= self.limit:
            self.disabled.add(name)

    def refusal(self, name: str) -> str | None:
        """The error answering a call to `name`, when it is disabled."""
        return disabled_error(name) if name in self.disabled else None

    def offered(self, schemas: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tool schemas still offered."""
        if not self.disabled:
            return list(schemas)
        return [s for s in schemas if _schema_name(s) not in self.disabled]

    def due(self, turn: int) -> list[Event]:
        """A `tool_disabled` event for each tool disabled that the model was not told of yet."""
        events = [
            Event(
                TOOL_DISABLED,
                name=name,
                turn=turn,
                note=f"withdrawn after {self.counts[name]} failed calls",
                messages=[notice(name, self.counts[name])],
            )
            for name in sorted(self.disabled - self.announced)
        ]
        self.announced |= self.disabled
        return events


def _schema_name(schema: dict[str, Any]) -> Any:
    fn = schema.get("function")
    return fn.get("name") if isinstance(fn, dict) else schema.get("name")
