"""Who may reach a server this package starts (`agentor collect`, `agentor-tui serve`): the
loopback rule and what a token must be. One definition for both.

Away from loopback a token is required; a token goes in an address, a header and a cookie as
it is, so it is made of URL-safe characters, and long enough not to be guessed.
"""

from __future__ import annotations

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


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) is this machine's loopback only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
