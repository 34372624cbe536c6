"""Reading a run_start's `mcp` record (agentor.engine.toolset writes it): the servers of the log's
latest record, and what a record has to say in words. Plain functions over the events, cheap
to import: `agentor ls` and `show` use them without loading the engine's tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentor.engine.events import RUN_START, Event

GONE = "gone"
SCHEMA_CHANGED = "schema changed"


def last_record(events: Sequence[Event]) -> dict[str, dict[str, Any]]:
    """The servers of the log's latest `mcp` record, by name ({} when it has none)."""
    for e in reversed(events):
        if e.type == RUN_START and e.mcp is not None:
            return {str(s.get("server")): s for s in e.mcp}
    return {}


def offered_words(record: Sequence[dict[str, Any]]) -> str:
    """`files (3 tools), search (cannot be reached)`: a record's servers in a few words."""
    out = []
    for entry in record:
        tools = t if isinstance(t := entry.get("tools"), list) else []
        state = "cannot be reached" if entry.get("error") else f"{len(tools)} tools"
        out.append(f"{entry.get('server')} ({state})")
    return ", ".join(out)


def record_notes(record: Sequence[dict[str, Any]] | None) -> list[str]:
    """What a run_start's `mcp` record warns of, a sentence each: servers that could not be
    reached (their error), tools the run used that changed, tools skipped as shadowed."""
    notes = []
    for entry in record or ():
        server = entry.get("server")
        if isinstance(entry.get("error"), str):
            notes.append(entry["error"])
        changed = [c for c in entry.get("changed") or () if isinstance(c, dict)]
        if changed:
            said = ", ".join(f"{c.get('name')} ({c.get('change')})" for c in changed)
            notes.append(f"MCP server {server!r}: tools this run used have changed: {said}")
        shadowed = [str(n) for n in entry.get("shadowed") or ()]
        if shadowed:
            notes.append(
                f"MCP server {server!r}: skipped {', '.join(shadowed)}: another tool has the name"
            )
    return notes
