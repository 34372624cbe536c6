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

import asyncio
import contextlib
import json
import logging
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from .interrupted import ASK, check_on_interrupt
from .tools import Tool, ToolArgumentsError

log = logging.getLogger("agentor")

MASKED = "***"
# Command-line flags whose value is a credential (`--token X`, `--api-key=X`).
_SECRET_FLAG = re.compile(r"token|key|secret|passw|auth|credential|bearer", re.IGNORECASE)
# Values shorter than this are not masked inside other text: "1" or "on" would mangle it.
_MIN_SECRET = 6
STDERR_TAIL = 400  # characters of a stdio server's stderr quoted when it would not start


class MCPToolError(Exception):
    """An MCP tool's result marked `isError`: its text is the error the model gets."""


class MCPServerError(Exception):
    """An MCP server that cannot be reached, or that a call could not get an answer from."""


class Secrets:
    """Values never to be written or shown, masked wherever they appear in a text."""

    def __init__(self, values: Iterable[str]) -> None:
        self.values = sorted({v for v in values if len(v) >= _MIN_SECRET}, key=len, reverse=True)

    def mask(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASKED)
        return text


class ToolServer:
    """What both kinds of server share: a name, a tool prefix, what a crash during a call
    means (`on_interrupt`, "ask" by default: a call may have had its effect), the time a
    connection and listing may take, and a connection for direct use (`async with`)."""

    transport = ""

    def __init__(
        self, name: str, tool_prefix: str | None, timeout: float, on_interrupt: str | None
    ) -> None:
        self.name = name
        self.tool_prefix = tool_prefix
        self.timeout = float(timeout)
        self.on_interrupt = check_on_interrupt(on_interrupt) or ASK
        self._direct: Connection | None = None

    # -- what a kind of server provides -------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """The server as the log records it (secrets masked)."""
        raise NotImplementedError

    def secrets(self) -> Secrets:
        raise NotImplementedError

    def where(self) -> str:
        """Where it is, for messages: its URL or command (secrets masked)."""
        raise NotImplementedError

    def _client(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Callable[[], str]]:
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
        super().__init__(name or _masked_url(url), tool_prefix, timeout, on_interrupt)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.name, "transport": self.transport}
        out["url"] = _masked_url(self.url)
        if self.headers:
            out["headers"] = sorted(self.headers)
        return out

    def secrets(self) -> Secrets:
        return Secrets([*self.headers.values(), *_url_secrets(self.url)])

    def where(self) -> str:
        return _masked_url(self.url)

    def _client(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Callable[[], str]]:
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
        out["command"] = [self.command, *_masked_args(self.args, self.secrets())]
        if self.env:
            out["env"] = sorted(self.env)
        if self.cwd is not None:
            out["cwd"] = str(self.cwd)
        return out

    def secrets(self) -> Secrets:
        return Secrets(self.env.values())

    def where(self) -> str:
        return " ".join(self.describe()["command"])

    def _client(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Callable[[], str]]:
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


class Connection:
    """One segment's connection to a server, held by a task of its own.

    The `mcp` client keeps task groups and cancel scopes for as long as it is open; held in
    the run's own task, a transport failing mid-run would cancel the run. Held here, a failure
    ends this task only: the calls under way and later ones fail with `MCPServerError`."""

    def __init__(self, server: ToolServer) -> None:
        self.server = server
        self.secrets = server.secrets()
        self.client: Any = None
        self.down: str | None = None  # why calls cannot be made, once they cannot
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[list[Any]] | None = None
        self._stop = asyncio.Event()

    async def open(self) -> list[Any]:
        """Connect and list every tool (the `mcp` package's `Tool`s); `MCPServerError` when
        that fails or takes longer than the server's `timeout`."""
        ready: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._ready = ready
        self._task = asyncio.ensure_future(self._hold(ready))
        try:
            async with asyncio.timeout(self.server.timeout):
                return await asyncio.shield(ready)
        except TimeoutError:
            self.down = self._unreachable(f"no answer within {self.server.timeout:g}s")
        except MCPServerError as exc:
            self.down = str(exc)
        except BaseException:
            await self.close()
            raise
        await self.close()
        raise MCPServerError(self.down)

    async def _hold(self, ready: asyncio.Future[list[Any]]) -> None:
        stderr_tail: Callable[[], str] = str
        try:
            async with contextlib.AsyncExitStack() as stack:
                client, stderr_tail = self.server._client(stack)
                await stack.enter_async_context(client)
                listed = await _list_all(client, self.server.name)
                self.client = client
                ready.set_result(listed)
                await self._stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
        except BaseException as exc:
            why = self._unreachable(_words(exc), stderr_tail())
            if not ready.done():
                ready.set_exception(MCPServerError(why))
            elif not self._stop.is_set():
                self.down = f"MCP server {self.server.name!r} lost its connection: {_words(exc)}"
        finally:
            self.client = None
            if self.down is None and ready.done() and not self._stop.is_set():
                self.down = f"MCP server {self.server.name!r} closed its connection"

    def _unreachable(self, why: str, stderr: str = "") -> str:
        where = self.server.where()
        text = f"MCP server {self.server.name!r} cannot be reached ({where}): {why}"
        if stderr:
            text += f"; its stderr ends: {stderr}"
        return self.secrets.mask(text)

    async def listing(self) -> list[Any]:
        if self.client is None:
            raise MCPServerError(self.down or f"MCP server {self.server.name!r} is not connected")
        return await _list_all(self.client, self.server.name)

    async def call(self, remote: str, args: dict[str, Any]) -> Any:
        """The server's `CallToolResult` for a call; `MCPServerError` when none can come."""
        client, holder = self.client, self._task
        if client is None or holder is None:
            raise MCPServerError(self.down or f"MCP server {self.server.name!r} is not connected")
        call = asyncio.ensure_future(client.call_tool(remote, args))
        try:
            await asyncio.wait({call, holder}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            call.cancel()
            raise
        if not call.done():  # the connection ended first: no answer will come
            call.cancel()
            raise MCPServerError(self.down or f"MCP server {self.server.name!r} went away")
        try:
            return call.result()
        except Exception as exc:
            raise MCPServerError(
                self.secrets.mask(f"MCP server {self.server.name!r}: {_words(exc)}")
            ) from None

    async def close(self) -> None:
        """End the connection (a stdio server's process with it); waits until it has."""
        self._stop.set()
        task = self._task
        if task is None or task.done():
            return
        if self.client is None:
            task.cancel()  # still connecting
        await asyncio.shield(task)  # it never raises: it keeps what went wrong in `down`
        ready = self._ready
        if ready is not None and ready.done() and not ready.cancelled():
            ready.exception()  # seen: no "exception never retrieved" when nobody awaited it


class MCPTool(Tool):
    """A tool an MCP server listed: called on the segment's connection to it."""

    def __init__(
        self,
        server: ToolServer,
        connection: Connection | None,
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


def tools_of(server: ToolServer, connection: Connection | None, listed: list[Any]) -> list[Tool]:
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


async def _list_all(client: Any, name: str) -> list[Any]:
    """Every tool the server lists, page after page (a cursor seen twice is an error)."""
    tools: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
        if cursor in seen:
            raise MCPServerError(f"MCP server {name!r} repeated a pagination cursor")
        seen.add(cursor)


def result_text(result: Any) -> str:
    """A `CallToolResult` as the text the model gets: text parts, the text of embedded
    resources, a line naming anything else (images, audio, blobs, links); the structured
    content as JSON when there are no parts."""
    parts: list[str] = []
    for item in getattr(result, "content", None) or []:
        kind = getattr(item, "type", None)
        if kind == "text":
            parts.append(item.text)
        elif kind == "resource":
            parts.append(_resource_text(item.resource))
        elif kind == "resource_link":
            parts.append(f"[resource {item.uri}{f' ({item.name})' if item.name else ''}]")
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {item.mime_type}, {len(item.data) * 3 // 4} bytes]")
        else:
            dump = item.model_dump(by_alias=True, exclude_none=True)
            parts.append(json.dumps(dump, ensure_ascii=False, default=str))
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        return json.dumps(structured, ensure_ascii=False, default=str)
    return "\n".join(parts)


def _resource_text(resource: Any) -> str:
    text = getattr(resource, "text", None)
    if text is not None:
        return text
    blob = getattr(resource, "blob", "") or ""
    mime = getattr(resource, "mime_type", None) or "binary"
    return f"[resource {resource.uri}: {mime}, {len(blob) * 3 // 4} bytes]"


def _words(exc: BaseException) -> str:
    """An exception as one line: the first leaf of an exception group, `Type: message`."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _masked_url(url: str) -> str:
    """The URL without its password and query values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASKED
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", f":{MASKED}@", 1)
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASKED) for k, _ in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _url_secrets(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = [v for _, v in parse_qsl(parts.query, keep_blank_values=True)]
    if parts.password:
        found.append(parts.password)
    return found


def _masked_args(args: Sequence[str], secrets: Secrets) -> list[str]:
    """A command's arguments with credentials masked: the value after a flag naming one
    (`--token X`, `--api-key=X`) and any environment value given to the server."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append(MASKED)
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        if arg.startswith("-") and _SECRET_FLAG.search(flag):
            if eq:
                out.append(f"{flag}={MASKED}")
            else:
                out.append(arg)
                hide_next = True
            continue
        out.append(secrets.mask(arg))
    return out
