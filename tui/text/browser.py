"""What `agentor-tui serve` says to a browser it refuses or lets in, and on its terminal.

Plain text and one small HTML page, textual-free. No sentence here ever holds the token: a
refusal says how to come in, never with what.
"""

from __future__ import annotations

import html

UNAUTHORIZED = (
    "401 Unauthorized: this agentor-tui needs its token. Open the address you were given, "
    "ending in ?token=..., or send the header Authorization: Bearer <token>.\n"
)
FOREIGN_HOST = (
    "403 Forbidden: this agentor-tui answers only to the names of this machine's loopback "
    "(localhost, 127.0.0.1, ::1); serve with --host and a --token to be reached by others.\n"
)
FOREIGN_ORIGIN = (
    "403 Forbidden: a page of another site may not open this agentor-tui (its Origin is not "
    "this server's).\n"
)
TITLE = "agentor-tui"


def signed_in_page(go_to: str) -> str:
    """The page that answers a good `?token=`: it has just set the cookie, and moves on to
    `go_to` (the same address without the token) from this site, so that a SameSite=Strict
    cookie goes with the next request even when the link was followed from another site."""
    target = html.escape(go_to, quote=True)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={target}">'
        f"<title>{TITLE}</title></head>"
        f'<body>Signed in. <a href="{target}">Open agentor-tui</a>.</body></html>\n'
    )


def serving(url: str, store: str, with_token: bool) -> str:
    """The line `serve` prints once it listens."""
    address = f"open {url}/?token=<your token>; " if with_token else ""
    return (
        f"agentor-tui: serving {store} at {url} "
        f"({address}each browser tab runs its own app; ctrl+c stops)"
    )
