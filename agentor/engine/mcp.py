"""MCP tool servers as tools: `MCPServer` (Streamable HTTP, as upstream Agentor's) and
`MCPServerStdio` (a local server started as a child process), on the `mcp` package's client.

Give either in `Agentor(tools=[...])`. Each run segment (a run, or each resume of it) opens a
fresh connection to each server, lists its tools (every page), and closes it when the segment
ends: a stdio server is a child process of the segment, its stderr kept in a temporary file
(never the terminal; its last lines explain a server that would not start). The tools become
ordinary `Tool`s (`MCPTool`): their parameters are the server's `inputSchema`; a result's
text, embedded text resources and structured content become the text the model gets; a
result marked `isError` is the tool's error (`MCPToolError`), as a function tool's exception
is. A server that cannot be reached, or whose connection is lost, answers each call with an
`MCPServerError` saying so: a tool error in the run, never a crash of it.

Secrets: header values, environment values, a URL's password and query values are never
written to the log nor shown: a server's record (`describe`) names headers and variables
without their values, and every text taken from a server (results, errors, its stderr) has
those values masked.

The `mcp` package is imported on first connection: `pip install 'agentor-tui[mcp]'`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentor.engine.interrupted import ASK, check_on_interrupt
from agentor.engine.mcp_connection import Connection
from agentor.engine.mcp_text import Secrets, masked_args, masked_url, result_text, url_secrets
from agentor.engine.tools import Tool
from agentor.errors import MCPServerError, MCPToolError, ToolArgumentsError

__all__ = ["MCPServer", "MCPServerError", "MCPServerStdio", "MCPTool", "MCPToolError"]

log = logging.getLogger("agentor")

STDERR_TAIL = 400  # characters of a stdio server's stderr quoted when it would not start


class ToolServer:
    """What both kinds of server share: a name, a tool prefix, what a crash during a call
    means (`on_interrupt`, "ask" by default: a call may have had its effect), the time a
    connection and listing may take, and a connection for direct use (`async with`)."""

    transport = ""

    def __init__(
        self, name: str, tool_prefix: str | None, timeout: float, on_interrupt: str | None
    ) -> None:
        if importlib.util.find_spec("mcp") is None:  # said where the server is made
            raise ImportError(
                f"{type(self).__name__} needs the mcp package: pip install 'agentor-tui[mcp]'"
            )
        self.name = name
        self.tool_prefix = tool_prefix
        self.timeout = float(timeout)
        self.on_interrupt = check_on_interrupt(on_interrupt) or ASK
        self._direct: Connection[ToolServer] | None = None

    # -- what a kind of server provides -------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The server as the log records it (secrets masked)."""
        raise NotImplementedError

    def secrets(self) -> Secrets:
        raise NotImplementedError

    def where(self) -> str:
        """Where it is, for messages: its URL or command (secrets masked)."""
        raise NotImplementedError

    def client_for(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Callable[[], str]]:
        """A `mcp.Client` for it, whose resources close with `stack`, and what tells the end
        of the server's stderr (when it has one of its own)."""
        raise NotImplementedError

    # -- direct use, as upstream Agentor's MCPServer -----------------------------------------

    async def connect(self) -> list[Tool]:
        """Connect and list the tools (for direct use; an agent connects each segment)."""
        if self._direct is not None:
            raise RuntimeError(f"MCP server {self.name!r} is already connected; close() it first")
        connection = Connection(self)
        self._direct = connection
        try:
            return tools_of(self, connection, await connection.open())
        except BaseException:
            self._direct = None
            await connection.close()
            raise

    async def list_tools(self) -> list[Tool]:
        if self._direct is None:
            raise RuntimeError(f"MCP server {self.name!r} is not connected")
        return tools_of(self, self._direct, await self._direct.listing())

    async def close(self) -> None:
        connection, self._direct = self._direct, None
        if connection is not None:
            await connection.close()

    async def __aenter__(self) -> ToolServer:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.where()!r})"


class MCPServer(ToolServer):
    """An MCP server over Streamable HTTP at `url` (upstream Agentor's signature). `headers`
    go with every request (their values are never logged); `timeout` bounds connecting and
    listing, and each request but a call's wait for its answer (300 s, as upstream's);
    `name` defaults to the URL; `tool_prefix` is put before each tool's name."""

    transport = "streamable-http"

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        name: str | None = None,
        tool_prefix: str | None = None,
        http_client_factory: Callable[..., Any] | None = None,
        *,
        on_interrupt: str | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"MCPServer takes an http:// or https:// URL; got {url!r}")
        self.url = url
        self.headers = dict(headers or {})
        # Hosts may enforce their own endpoint or redirect policies (upstream's hook).
        self.http_client_factory = http_client_factory
        super().__init__(name or masked_url(url), tool_prefix, timeout, on_interrupt)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.name, "transport": self.transport}
        out["url"] = masked_url(self.url)
        if self.headers:
            out["headers"] = sorted(self.headers)
        return out

    def secrets(self) -> Secrets:
        return Secrets([*self.headers.values(), *url_secrets(self.url)])

    def where(self) -> str:
        return masked_url(self.url)

    def client_for(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Callable[[], str]]:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        factory = self.http_client_factory or httpx2.AsyncClient
        http = factory(headers=self.headers, timeout=httpx2.Timeout(self.timeout, read=300.0))
        stack.push_async_callback(http.aclose)
        client = Client(streamable_http_client(self.url, http_client=http), cache=None)
        return client, str


class MCPServerStdio(ToolServer):
    """A local MCP server: `command` with `args`, started as a child process for each run
    segment and ended with it, talking over its stdin and stdout. `env` is added to the
    child's environment (values never logged), `cwd` is where it runs. Its stderr goes to a
    temporary file, never to the terminal."""

    transport = "stdio"

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        name: str | None = None,
        tool_prefix: str | None = None,
        *,
        timeout: float = 30.0,
        on_interrupt: str | None = None,
    ) -> None:
        if not isinstance(command, str) or not command:
            raise ValueError(f"MCPServerStdio takes a command to run; got {command!r}")
        if isinstance(args, str):
            raise TypeError("args takes a sequence of strings, such as ['server.py', '-v']")
        self.command = command
        self.args = [str(a) for a in args]
        self.env = {str(k): str(v) for k, v in (env or {}).items()}
        self.cwd = cwd
        super().__init__(name or Path(command).name, tool_prefix, timeout, on_interrupt)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.name, "transport": self.transport}
        out["command"] = [self.command, *masked_args(self.args, self.secrets())]
        if self.env:
            out["env"] = sorted(self.env)
        if self.cwd is not None:
            out["cwd"] = str(self.cwd)
        return out

    def secrets(self) -> Secrets:
        return Secrets(self.env.values())

    def where(self) -> str:
        return " ".join(self.describe()["command"])

    def client_for(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Callable[[], str]]:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=self.command, args=self.args, env=self.env or None, cwd=self.cwd
        )
        stderr = _Stderr()
        stack.callback(stderr.close)  # with the connection: the child writes to it till then
        client = Client(stdio_client(params, errlog=stderr.file), cache=None)
        return client, stderr.tail


class _Stderr:
    """A child's stderr, in a temporary file; its end is kept when the file is closed."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self.last = ""

    def tail(self) -> str:
        """The last characters the child wrote, on one line."""
        if self.file.closed:
            return self.last
        try:
            self.file.flush()
            self.file.seek(0)
            text = self.file.read()
        except (OSError, ValueError):
            return ""
        return " ".join(text.split())[-STDERR_TAIL:]

    def close(self) -> None:
        self.last = self.tail()
        self.file.close()


class MCPTool(Tool):
    """A tool an MCP server listed: called on the segment's connection to it."""

    def __init__(
        self,
        server: ToolServer,
        connection: Connection[ToolServer] | None,
        remote: str,
        description: str,
        parameters: dict[str, Any],
    ) -> None:
        # No function to read a signature from: the server's schema is the parameters.
        self.name = f"{server.tool_prefix or ''}{remote}"
        self.remote = remote
        self.description = description
        self.parameters = parameters
        self.server = server.name
        self.needs_approval = False
        self.approval_timeout = None
        self.on_interrupt = server.on_interrupt
        self.is_async = True
        self.fn = self._call
        self._connection = connection
        self._server_obj = server

    @property
    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": json.loads(json.dumps(self.parameters)),
            },
        }

    def parse_args(self, raw: str | dict[str, Any] | None) -> dict[str, Any]:
        """A JSON object: the server checks it against its schema."""
        if raw is None or raw == "":
            return {}
        data: Any = raw
        if isinstance(raw, str):
            try:
                data = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                raise ToolArgumentsError(f"arguments are not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ToolArgumentsError("arguments must be a JSON object")
        return dict(data)

    async def _call(self, **args: Any) -> str:
        connection = self._connection
        if connection is None:
            raise MCPServerError(f"MCP server {self.server!r} is not connected")
        result = await connection.call(self.remote, args)
        text = connection.secrets.mask(result_text(result))
        if getattr(result, "is_error", False):
            raise MCPToolError(text or "the MCP tool reported an error")
        return text

    def __repr__(self) -> str:
        return f"MCPTool({self.name!r}, server={self.server!r})"


def tools_of(
    server: ToolServer, connection: Connection[ToolServer] | None, listed: list[Any]
) -> list[Tool]:
    """The `MCPTool`s of a server's listing (the `mcp` package's `Tool`s)."""
    return [
        MCPTool(
            server,
            connection,
            remote.name,
            remote.description or "",
            dict(remote.input_schema or {"type": "object", "properties": {}}),
        )
        for remote in listed
    ]
