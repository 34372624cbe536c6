"""The tools a run segment offers the model: the agent's own and those its MCP servers list
now, and what the segment's `run_start` records of the servers (`mcp`).

Each entry of `mcp` is a server as `ToolServer.describe` gives it (name, transport, URL or
command with secrets masked, the names of its headers or environment variables) plus

    tools     [{name, remote?, description, parameters}]  the tools offered (`remote`: the
              server's own name for a prefixed tool)
    shadowed  [name]   tools skipped: another tool has the name (a warning is logged)
    error     why the server could not be reached: the tools it listed in the log's last
              record are offered, and each call of one answers with that error
    changed   [{name, change: "gone" | "schema changed"}]  tools the run used whose listing
              changed since the log's last record: said once, in the segment that sees it

The model is offered the tools as they are now.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from agentor.engine.events import TOOL_CALL, Event
from agentor.engine.mcp import MCPTool, ToolServer, tools_of
from agentor.engine.mcp_connection import Connection
from agentor.engine.mcp_record import GONE, SCHEMA_CHANGED, last_record
from agentor.engine.tools import Tool
from agentor.errors import MCPServerError

log = logging.getLogger("agentor")


@dataclass
class SegmentTools:
    """The tools of one segment, and the `mcp` record of its run_start (None: no server)."""

    tools: list[Tool]
    record: list[dict[str, Any]] | None = None

    @property
    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema for t in self.tools]


@contextlib.asynccontextmanager
async def segment_tools(
    own: Sequence[Tool], servers: Sequence[ToolServer], events: Sequence[Event]
) -> AsyncIterator[SegmentTools]:
    """Connect to each server (all at once), list their tools, and yield the segment's tools;
    every connection is closed on the way out. `events`: the run's log so far."""
    if not servers:
        yield SegmentTools(list(own))
        return
    connections = [Connection(server) for server in servers]
    try:
        listings = await asyncio.gather(*(_listing(c) for c in connections))
        yield _merged(own, connections, listings, events)
    finally:
        await asyncio.gather(*(c.close() for c in connections))


async def _listing(connection: Connection[ToolServer]) -> list[Any] | None:
    try:
        return await connection.open()
    except MCPServerError as exc:
        log.warning("%s", exc)
        return None


def _merged(
    own: Sequence[Tool],
    connections: Sequence[Connection[ToolServer]],
    listings: Sequence[list[Any] | None],
    events: Sequence[Event],
) -> SegmentTools:
    before = last_record(events)
    used = {e.name for e in events if e.type == TOOL_CALL and e.name}
    tools = list(own)
    names = {t.name for t in tools}
    record = []
    for connection, listed in zip(connections, listings, strict=True):
        server = connection.server
        entry = server.describe()
        if listed is None:
            entry["error"] = connection.down
            offered = recorded_tools(server, connection, before.get(server.name))
        else:
            offered = tools_of(server, connection, listed)
        kept = []
        for tool in offered:
            if tool.name in names:
                log.warning(
                    "MCP server %s exposes %r, which shadows an existing tool; "
                    "use tool_prefix to disambiguate.",
                    server.name,
                    tool.name,
                )
                entry.setdefault("shadowed", []).append(tool.name)
                continue
            names.add(tool.name)
            kept.append(tool)
        tools.extend(kept)
        entry["tools"] = [_tool_record(t) for t in kept]
        changed = changes(before.get(server.name), kept, used)
        if changed:
            entry["changed"] = changed
            said = ", ".join(f"{c['name']} ({c['change']})" for c in changed)
            log.warning("MCP server %s: tools this run used have changed: %s", server.name, said)
        record.append(entry)
    return SegmentTools(tools, record)


def recorded_tools(
    server: ToolServer, connection: Connection[ToolServer], entry: dict[str, Any] | None
) -> list[Tool]:
    """The tools a server offered in the log's last record, on a connection that is down:
    the model sees them as before, and a call of one is answered with why."""
    out: list[Tool] = []
    for t in (entry or {}).get("tools") or ():
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            continue
        params = t.get("parameters")
        out.append(
            MCPTool(
                server,
                connection,
                str(t.get("remote") or t["name"]),
                str(t.get("description") or ""),
                params if isinstance(params, dict) else {"type": "object", "properties": {}},
            )
        )
    return out


def changes(
    entry: dict[str, Any] | None, now: Sequence[Tool], used: set[str]
) -> list[dict[str, str]]:
    """The tools of a server's last record that the run used and that are gone now, or
    listed with other parameters."""
    listed = {t.name: getattr(t, "parameters", None) for t in now}
    out = []
    for t in (entry or {}).get("tools") or ():
        name = t.get("name") if isinstance(t, dict) else None
        if name not in used:
            continue
        if name not in listed:
            out.append({"name": name, "change": GONE})
        elif listed[name] != t.get("parameters"):
            out.append({"name": name, "change": SCHEMA_CHANGED})
    return out


def _tool_record(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    remote = getattr(tool, "remote", tool.name)
    if remote != tool.name:
        out["remote"] = remote
    out["description"] = tool.description
    out["parameters"] = getattr(tool, "parameters", None)
    return out
