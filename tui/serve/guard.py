"""Who may reach a served app: the token, the loopback rule, the Origin rule. One aiohttp
middleware, run before every handler, so a request it refuses starts nothing (no app process).

textual-serve has no authentication: whoever reaches its websocket gets an app process that
reads keys, so can approve gated tool calls and resume runs. So:

- Away from loopback a token is required (`tui.serve.options.token_problem`). A browser brings
  it once as `?token=...`; the answer sets it as an HttpOnly, SameSite=Strict cookie (named
  after the port: cookies do not tell ports apart) and moves on to the address without it, so
  it stays out of the address bar, the history and later Referer headers. Scripts may
  send `Authorization: Bearer <token>`. The token is compared in constant time, as digests of
  equal length, so neither its characters nor its length show in response times.
- Without a token (loopback only), the Host header must be a loopback name: a web page whose
  name was rebound to 127.0.0.1 (DNS rebinding) is refused.
- A request that carries an Origin header (a browser's websocket always does) must come from
  this server's own origin: another site's page cannot open the websocket of a tab's app
  (cross-site websocket hijacking), with or without a token.

The token is never logged and never put in a page (`tui.serve.site` logs paths only).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable

from aiohttp import web

from tui.serve.options import is_loopback
from tui.text import browser

TOKEN_PARAM = "token"
_BEARER = "bearer "

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def cookie_name(port: int) -> str:
    return f"agentor_tui_token_{port}"


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class Guard:
    """The middleware (`check`): a token (or None: loopback only), the cookie it is carried
    in, and the origins a browser may come from besides the Host it asked for (the public
    address, behind a proxy)."""

    def __init__(self, token: str | None, cookie: str, origins: tuple[str, ...] = ()) -> None:
        self._token = None if token is None else _digest(token)
        self.cookie = cookie
        self.origins = frozenset(o.lower().rstrip("/") for o in origins)
        self.secure_cookie = any(o.startswith("https://") for o in self.origins)

    @web.middleware
    async def check(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if self._token is None and not is_loopback(_host_name(request)):
            raise web.HTTPForbidden(text=browser.FOREIGN_HOST)
        if not self._same_origin(request):
            raise web.HTTPForbidden(text=browser.FOREIGN_ORIGIN)
        if self._token is None:
            return await handler(request)
        given, in_address = self._presented(request)
        if given is None or not hmac.compare_digest(_digest(given), self._token):
            raise web.HTTPUnauthorized(
                text=browser.UNAUTHORIZED, headers={"Cache-Control": "no-store"}
            )
        if in_address and not _is_websocket(request):
            return self._sign_in(request, given)
        return await handler(request)

    def _presented(self, request: web.Request) -> tuple[str | None, bool]:
        """The token the request brings, and whether it came in the address. The address
        decides over the header, the header over the cookie: a wrong one is never saved by a
        right one elsewhere."""
        if TOKEN_PARAM in request.query:
            return request.query[TOKEN_PARAM], True
        authorization = request.headers.get("Authorization", "")
        if authorization[: len(_BEARER)].lower() == _BEARER:
            return authorization[len(_BEARER) :].strip(), False
        return request.cookies.get(self.cookie), False

    def _sign_in(self, request: web.Request, token: str) -> web.Response:
        page = browser.signed_in_page(str(request.rel_url.without_query_params(TOKEN_PARAM)))
        response = web.Response(
            text=page, content_type="text/html", headers={"Cache-Control": "no-store"}
        )
        response.set_cookie(
            self.cookie,
            token,
            httponly=True,
            samesite="Strict",
            secure=self.secure_cookie or None,
            path="/",
        )
        return response

    def _same_origin(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:
            return True
        origin = origin.lower().rstrip("/")
        if origin in self.origins:
            return True
        scheme, sep, authority = origin.partition("://")
        return bool(sep) and scheme in ("http", "https") and authority == request.host.lower()


def _host_name(request: web.Request) -> str:
    """The name the request was sent to (its Host header without the port); "" when that
    header cannot be read."""
    try:
        return request.url.host or ""
    except ValueError:
        return ""


def _is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


async def add_safety_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer: no Referer leaves the page (its address never holds the token, but be
    sure), no other site may frame it (a framed page could be clicked into pressing keys), no
    type sniffing."""
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault("Content-Security-Policy", "frame-ancestors 'none'")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
