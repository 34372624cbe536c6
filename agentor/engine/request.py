"""What a generation asks the model with besides its messages: the tools offered and the
model's settings (temperature and the like).

They do not change within a segment, so the log keeps them once, on the segment's `run_start`
(`tools`, `settings`), with a short digest of the two (`config`) that each of the segment's
generations repeats: the log stays linear, and a reader finds a generation's full request by
matching its `config` to the run_start's. The digest is the first 16 hex digits of the SHA-256
of `{"settings": ..., "tools": ...}` as compact JSON with sorted keys; readers only compare it.

Settings are recorded as the model exposes them (`model.settings`, a mapping; a model without
one records none), made JSON-safe, with the values of HTTP headers (`extra_headers`) masked:
they are where credentials go.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MASKED = "***"
# Settings holding HTTP headers: their values are never written.
_HEADER_SETTINGS = frozenset({"extra_headers", "default_headers", "headers"})


@dataclass(frozen=True)
class RequestConfig:
    """The tools and settings of a segment's requests, and their digest."""

    tools: list[dict[str, Any]]
    settings: dict[str, Any] | None
    digest: str


def request_config(model: object, tools: Sequence[dict[str, Any]]) -> RequestConfig:
    """What `model` is asked with besides messages, when offered the tool schemas `tools`."""
    offered = _json_safe(list(tools))
    settings = recorded_settings(getattr(model, "settings", None))
    return RequestConfig(offered, settings, config_digest(offered, settings))


def recorded_settings(settings: object) -> dict[str, Any] | None:
    """A model's settings as the log keeps them (None when it exposes no mapping)."""
    if not isinstance(settings, Mapping):
        return None
    out: dict[str, Any] = {}
    for key, value in settings.items():
        name = str(key)
        if name in _HEADER_SETTINGS:
            # Header names say what was sent; their values may be credentials.
            names = value.keys() if isinstance(value, Mapping) else ()
            out[name] = {str(h): MASKED for h in names} or MASKED
        else:
            out[name] = _json_safe(value)
    return out


def config_digest(tools: object, settings: object) -> str:
    data = json.dumps(
        {"settings": settings, "tools": tools},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(data.encode("utf-8", "backslashreplace")).hexdigest()[:16]


def _json_safe(value: Any) -> Any:
    """`value` if it is JSON as it stands, else what `json` makes of it with `str` for the
    rest (a settings object of a custom model must not make every save of the run fail)."""
    try:
        json.dumps(value, allow_nan=True)
        return value
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError, RecursionError):
        return str(value)
