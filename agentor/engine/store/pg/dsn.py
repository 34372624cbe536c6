"""DSNs: telling one from a directory, showing one without its password, connection settings.

No psycopg here: this is what a command line and an error message need, and it must work on a
DSN that libpq refuses (whose error message may quote the password back).
"""

from __future__ import annotations

import os
import re
from typing import Any

URL_PREFIXES = ("postgresql://", "postgres://")
SCHEMA_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,47}")
SCHEMA_RULE = "a letter or '_', then up to 47 letters, digits or '_'"
CONNECT_TIMEOUT = 5  # seconds, unless the DSN says otherwise: an unreachable host fails fast
# A holder whose host vanishes (no FIN, no RST) is noticed by the server after
# idle + interval * count seconds, and its runs are free then.
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 5, 2, 3

# Up to the last "@" before the path: a password holding an unescaped "@" is hidden whole
# (libpq itself would cut it at the first one and take the rest for the host).
_URL_PASSWORD = re.compile(r"(?P<head>://[^:/@?#]*):(?P<secret>[^/?#]*)@")
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&]password=)(?P<secret>[^&#]*)", re.IGNORECASE)
_KV_PASSWORD = re.compile(
    r"(?P<head>\bpassword\s*=?\s*)(?P<secret>'(?:[^'\\]|\\.)*'?|[^\s'][^\s]*)", re.IGNORECASE
)


def is_dsn(spec: str) -> bool:
    """Whether a `--store` value names a PostgreSQL database (a URL) rather than a directory."""
    return spec.startswith(URL_PREFIXES)


def validate_schema(schema: object) -> str:
    if not isinstance(schema, str) or not SCHEMA_RE.fullmatch(schema):
        raise ValueError(f"invalid schema name {schema!r}: use {SCHEMA_RULE}")
    return schema


def redact(dsn: str) -> str:
    """The DSN as it may be shown: the password, wherever it was written, becomes `***`."""
    out = _URL_PASSWORD.sub(lambda m: m["head"] + ":***@", dsn) if is_dsn(dsn) else dsn
    out = _QUERY_PASSWORD.sub(lambda m: m["head"] + "***", out)
    if not is_dsn(dsn):
        out = _KV_PASSWORD.sub(lambda m: m["head"] + "***", out)
    return out


def _secrets(dsn: str) -> list[str]:
    """Every string in `dsn` that may be a password, longest first, as written and decoded."""
    found: set[str] = set()
    patterns = (_URL_PASSWORD, _QUERY_PASSWORD) if is_dsn(dsn) else (_KV_PASSWORD,)
    for pattern in patterns:
        for m in pattern.finditer(dsn):
            secret = m["secret"].strip("'")
            found |= {secret, _percent_decoded(secret), *secret.split("@")}
    return sorted((s for s in found if s), key=len, reverse=True)


def _percent_decoded(text: str) -> str:
    from urllib.parse import unquote

    return unquote(text)


def one_line(text: str) -> str:
    """A server's or libpq's message on one line (they come with tabs, hints and newlines)."""
    return " ".join(str(text).split())


def scrub(message: object, dsn: str) -> str:
    """`message` on one line with every password of `dsn` in it masked."""
    text = one_line(str(message))
    for secret in _secrets(dsn):
        text = text.replace(secret, "***")
    return text


def connect_options(dsn_params: dict[str, Any], role: str) -> dict[str, Any]:
    """What every connection of a store adds to its DSN, unless the DSN sets it itself: a
    connect timeout, TCP keepalives (a lost holder's connection is noticed on the client too),
    and an application_name saying who this is (`pg_stat_activity`: role and pid)."""
    wanted: dict[str, Any] = {
        "connect_timeout": CONNECT_TIMEOUT,
        "application_name": f"agentor pid={os.getpid()} {role}",
        "keepalives": 1,
        "keepalives_idle": KEEPALIVE_IDLE,
        "keepalives_interval": KEEPALIVE_INTERVAL,
        "keepalives_count": KEEPALIVE_COUNT,
    }
    return {k: v for k, v in wanted.items() if k not in dsn_params}
