"""Prepare and run `agentor-tui serve`: the app command made, the socket bound, then the server
run until ctrl+c.

Each tab's app is `python -m tui` with the app's arguments exactly as they were written, in
this process's directory and environment (which no longer holds the token: `serve_token` took
it out), so an app process never has the token.
"""

from __future__ import annotations

import argparse
import shlex
import socket
import sys
from dataclasses import dataclass

from agentor.backends import shown
from tui.serve.guard import Guard, cookie_name
from tui.serve.site import build_site, listen, run
from tui.text import browser


@dataclass
class Serving:
    """The token (None: loopback, none asked), where to listen, the app command, the store as
    it may be shown (a database's password redacted) and, once bound, the socket."""

    token: str | None
    host: str
    port: int
    public_url: str | None
    command: str
    store: str
    sock: socket.socket | None = None

    @classmethod
    def from_arguments(
        cls, args: argparse.Namespace, token: str | None, app_argv: list[str]
    ) -> Serving:
        """What to serve: `args` checked by `tui.serve.options.serve_token`, which gave
        `token`; `app_argv`, the app's arguments as written."""
        command = shlex.join([sys.executable, "-m", "tui", *app_argv])
        store = shown(args.dir)
        return cls(token, args.host, args.port, args.public_url, command, store)

    def listen(self) -> None:
        """Bind the socket: ValueError when it cannot be (port taken, unknown address)."""
        try:
            self.sock = listen(self.host, self.port)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ValueError(f"cannot listen on {self.host} port {self.port}: {reason}") from None
        self.port = self.sock.getsockname()[1]

    @property
    def url(self) -> str:
        if self.public_url is not None:
            return self.public_url.rstrip("/")
        host = socket.gethostname() if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"

    def run(self) -> int:
        """Serve until SIGINT or SIGTERM; 0."""
        assert self.sock is not None, "listen() first"
        origins = () if self.public_url is None else (_origin(self.public_url),)
        guard = Guard(self.token, cookie_name(self.port), origins)
        print(browser.serving(self.url, self.store, self.token is not None), flush=True)
        run(build_site(self.command, guard, self.public_url), self.sock)
        return 0


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"
