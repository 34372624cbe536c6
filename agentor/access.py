"""Who may reach a server this package starts (`agentor collect`, `agentor-tui serve`): the
loopback rule and what a token must be. One definition for both.

Away from loopback a token is required; a token goes in an address, a header and a cookie as
it is, so it is made of URL-safe characters, and long enough not to be guessed.
"""

from __future__ import annotations

import argparse
import ipaddress
import re

TOKEN_RULE = (
    "at least 16 characters, each a letter, a digit, '-', '_', '.' or '~' "
    "(make one with: python -c 'import secrets; print(secrets.token_urlsafe())')"
)
_TOKEN = re.compile(r"[A-Za-z0-9._~-]{16,}")


def token_problem(token: str) -> str | None:
    """Why `token` cannot be a token, or None."""
    if _TOKEN.fullmatch(token):
        return None
    return f"a token must be {TOKEN_RULE}"


def checked_token(
    token: str | None, named: str, host: str, env: str, *, why: str = "", verb: str = "listen"
) -> str | None:
    """`token` once checked (None: none given); ValueError saying in one line what is wrong,
    never with the token: a malformed token, or none for a `host` other machines reach.
    `named` says where the token came from; `env` is the variable that may give one; `why`
    adds to the refusal, `verb` says what the server does on loopback instead."""
    if token is not None and (problem := token_problem(token)) is not None:
        raise ValueError(f"{named}: {problem}")
    if token is None and not is_loopback(host):
        raise ValueError(
            f"--host {host} can be reached from other machines{why}: give a token (--token "
            f"or {env}), or {verb} on 127.0.0.1"
        )
    return token


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) is this machine's loopback only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def port(text: str) -> int:
    """A port number for a command line (0: any free one), as argparse's `type=`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {value}")
    return value
