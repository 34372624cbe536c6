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


# libpq's connection keywords (its documentation's "Parameter Key Words"): a `--store` value
# made only of `key=value` pairs, one of them among these, is a DSN and not a directory name.
# fmt: off
LIBPQ_KEYWORDS = frozenset((
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth",
    "channel_binding", "connect_timeout", "client_encoding", "options", "application_name",
    "fallback_application_name", "keepalives", "keepalives_idle", "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "replication", "gssencmode", "sslmode",
    "requiressl", "sslnegotiation", "sslcompression", "sslcert", "sslkey", "sslkeylogfile",
    "sslpassword", "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer",
    "ssl_min_protocol_version", "ssl_max_protocol_version", "min_protocol_version",
    "max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service",
    "target_session_attrs", "load_balance_hosts", "oauth_issuer", "oauth_client_id",
    "oauth_client_secret", "oauth_scope",
))
# fmt: on
# One `key = value` pair as libpq reads them: a value in single quotes (backslash escapes), or
# up to the next blank; blanks around "=" allowed.
_KV_PAIR = re.compile(r"\s*(?P<key>[A-Za-z_]+)\s*=\s*(?:'(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)*)")


def is_dsn(spec: str) -> bool:
    """Whether a `--store` value names a PostgreSQL database rather than a directory: a URL
    (`postgresql://...`), or libpq's `key=value` pairs and nothing else, one key a libpq
    keyword (`host=db port=5432 dbname=agents`). A directory named like that is written as a
    path: `./host=db`."""
    return _is_url(spec) or _kv_keys(spec) & LIBPQ_KEYWORDS != set()


def _is_url(dsn: str) -> bool:
    return dsn.startswith(URL_PREFIXES)


def _kv_keys(spec: str) -> set[str]:
    """The keys of `spec` if it is only `key=value` pairs, else none."""
    keys: set[str] = set()
    at = 0
    while at < len(spec):
        pair = _KV_PAIR.match(spec, at)
        if pair is None or pair.end() == at:
            return set() if spec[at:].strip() else keys
        keys.add(pair["key"].lower())
        at = pair.end()
        if at < len(spec) and not spec[at].isspace():
            return set()  # a value ends at a blank: `host=h'x` is no pair
    return keys


# Options libpq reads as whole numbers, and refuses only when it connects; a port may be a list
# (one per host, comma-separated). Checked when the DSN is parsed: a usage error, not a server's.
_WHOLE_NUMBER_OPTIONS = (
    "port",
    "connect_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
)
_WHOLE_NUMBER = re.compile(r"\s*[+-]?\d+\s*")


def bad_option(params: dict[str, Any]) -> str | None:
    """Why libpq would refuse these parsed parameters when connecting (a port that is no
    number, 1 to 65535), or None; never quotes a password."""
    for key in _WHOLE_NUMBER_OPTIONS:
        value = params.get(key)
        if value is None:
            continue
        for part in str(value).split(",") if key == "port" else [str(value)]:
            if key == "port" and part.strip() == "":
                continue  # the default port for that host
            if not _WHOLE_NUMBER.fullmatch(part):
                return f"invalid integer value {part!r} for connection option {key!r}"
            if key == "port" and not 1 <= int(part) <= 65535:
                return f"invalid port number {part.strip()!r}"
    return None


def validate_schema(schema: object) -> str:
    if not isinstance(schema, str) or not SCHEMA_RE.fullmatch(schema):
        raise ValueError(f"invalid schema name {schema!r}: use {SCHEMA_RULE}")
    return schema


def redact(dsn: str) -> str:
    """The DSN as it may be shown: the password, wherever it was written, becomes `***`."""
    out = _URL_PASSWORD.sub(lambda m: m["head"] + ":***@", dsn) if _is_url(dsn) else dsn
    out = _QUERY_PASSWORD.sub(lambda m: m["head"] + "***", out)
    if not _is_url(dsn):
        out = _KV_PASSWORD.sub(lambda m: m["head"] + "***", out)
    return out


def _secrets(dsn: str) -> list[str]:
    """Every string in `dsn` that may be a password, longest first, as written and decoded."""
    found: set[str] = set()
    patterns = (_URL_PASSWORD, _QUERY_PASSWORD) if _is_url(dsn) else (_KV_PASSWORD,)
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
