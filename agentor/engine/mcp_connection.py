"""One run segment's connection to an MCP server, held by a task of its own.

The `mcp` client keeps task groups and cancel scopes for as long as it is open; held in the
run's own task, a transport failing mid-run would cancel the run. Held here, a failure ends
this task only: the calls under way and later ones fail with `MCPServerError`, a tool error in
the run. Connecting and listing are bounded by the server's `timeout`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from agentor.engine.mcp_text import Secrets
from agentor.errors import MCPServerError


class Server(Protocol):
    """What a connection needs of a server (agentor.engine.mcp's `ToolServer`)."""

    name: str
    timeout: float

    def secrets(self) -> Secrets: ...

    def where(self) -> str: ...

    def client_for(self, stack: contextlib.AsyncExitStack) -> tuple[Any, Callable[[], str]]: ...


ServerT = TypeVar("ServerT", bound=Server)


class Connection(Generic[ServerT]):
    """A server's connection for one segment (see the module); `down` says why calls fail.
    Generic in its server, so `connection.server` is the caller's own kind of server."""

    def __init__(self, server: ServerT) -> None:
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
                client, stderr_tail = self.server.client_for(stack)
                await stack.enter_async_context(client)
                listed = await list_all(client, self.server.name)
                self.client = client
                ready.set_result(listed)
                await self._stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
        except BaseException as exc:
            why = self._unreachable(words(exc), stderr_tail())
            if not ready.done():
                ready.set_exception(MCPServerError(why))
            elif not self._stop.is_set():
                self.down = f"MCP server {self.server.name!r} lost its connection: {words(exc)}"
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
        return await list_all(self.client, self.server.name)

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
                self.secrets.mask(f"MCP server {self.server.name!r}: {words(exc)}")
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


async def list_all(client: Any, name: str) -> list[Any]:
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


def words(exc: BaseException) -> str:
    """An exception as one line: the first leaf of an exception group, `Type: message`."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
