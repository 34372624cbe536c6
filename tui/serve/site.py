"""The web server of `agentor-tui serve`: textual-serve's handlers in an aiohttp application of
ours, behind `tui.serve.guard`.

textual-serve's `Server` runs the app command once per websocket (each browser tab its own app
process, fed the tab's keys) and serves its page's scripts. Its own `serve()` builds the
aiohttp application inside a private method and logs every request line, query string
included, so we compose our own application from its public handlers instead of patching it:

- the guard's middleware comes first, so a refused request reaches no handler;
- the page is rendered here with textual-serve's template, its addresses taken from the
  address the browser asked for (or `public_url`), so a server listening on 0.0.0.0 works, and
  with a script of ours that gives the terminal the keyboard's focus once the page has loaded
  (textual-serve's page waits for a click: keys typed before it went nowhere);
- the access log has the client, method, path and status only: never a query string (where a
  token may be) nor a header;
- on shutdown each tab's app is told to quit, instead of aiohttp waiting for open websockets.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import Any

import aiohttp_jinja2
import jinja2
from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from textual_serve.server import Server

from tui.serve.guard import Guard, add_safety_headers
from tui.text import browser

_TABS = web.AppKey("tabs", set)

# After textual-serve's own `window.onload` (set in the page's head, so it runs first) has made
# the terminal: its input (xterm.js's hidden textarea, where keys are read) takes the focus.
FOCUS_TERMINAL = """<script>
window.addEventListener("load", function () {
  var input = document.querySelector("#terminal .xterm-helper-textarea");
  if (input) { input.focus({ preventScroll: true }); }
});
</script>
"""


class PathOnlyAccessLogger(AbstractAccessLogger):
    """One line a request: client, method, path (no query), status, size, seconds."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info(
            "%s %s %s %s %s %.3fs",
            request.remote,
            request.method,
            request.path,
            response.status,
            response.body_length,
            time,
        )


def build_site(command: str, guard: Guard, public_url: str | None = None) -> web.Application:
    """The aiohttp application serving `command` (a shell command that starts the app)."""
    server = Server(command, title=browser.TITLE, public_url=public_url)
    site = web.Application(middlewares=[guard.check])
    aiohttp_jinja2.setup(site, loader=jinja2.FileSystemLoader(server.templates_path))
    site[_TABS] = set()

    async def index(request: web.Request) -> web.Response:
        return _index(request, public_url)

    async def websocket(request: web.Request) -> web.StreamResponse:
        tab = asyncio.current_task()
        site[_TABS].add(tab)
        try:
            return await server.handle_websocket(request)
        finally:
            site[_TABS].discard(tab)

    site.add_routes(
        [
            web.get("/", index, name="index"),
            web.get("/ws", websocket, name="websocket"),
            web.get("/download/{key}", server.handle_download, name="download"),
            web.static("/static", server.statics_path, name="static"),
        ]
    )
    site.on_response_prepare.append(add_safety_headers)
    site.on_shutdown.append(_quit_tabs)
    return site


def _index(request: web.Request, public_url: str | None) -> web.Response:
    """textual-serve's page, pointed at this server as the browser named it."""
    base = (public_url or f"{request.scheme}://{request.host}").rstrip("/")
    router = request.app.router
    websocket = base + str(router["websocket"].url_for())
    scheme, _, rest = websocket.partition(":")
    context: dict[str, Any] = {
        "font_size": _int(request.query.get("fontsize"), 16),
        "app_websocket_url": ("wss:" if scheme == "https" else "ws:") + rest,
        "config": {"static": {"url": base + str(router["static"].url_for(filename="/"))}},
        "application": {"name": browser.TITLE},
    }
    page = aiohttp_jinja2.render_string("app_index.html", request, context)
    head, body_end, tail = page.rpartition("</body>")
    page = head + FOCUS_TERMINAL + body_end + tail if body_end else page + FOCUS_TERMINAL
    return web.Response(text=page, content_type="text/html")


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


async def _quit_tabs(site: web.Application) -> None:
    """Cancel each tab's websocket handler: textual-serve then closes the socket and tells the
    tab's app to quit, and waits for its process to end."""
    open_tabs = site[_TABS]
    tabs = list(open_tabs)
    for tab in tabs:
        tab.cancel()
    await asyncio.gather(*tabs, return_exceptions=True)


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port), listening; OSError when it cannot be (port taken, no
    such address). Bound before serving, so that port 0 gets a port the caller can print."""
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    return socket.create_server((host, port), family=family)


def run(site: web.Application, sock: socket.socket) -> None:
    """Serve until SIGINT or SIGTERM."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    web.run_app(
        site,
        sock=sock,
        access_log_class=PathOnlyAccessLogger,
        print=None,
        shutdown_timeout=5,
    )
