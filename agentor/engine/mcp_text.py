"""What an MCP server's words become here: a tool result as the text the model gets, and
secrets masked wherever they would be written or shown (a server's record, its errors, its
results, its stderr). agentor.engine.mcp says which values are secrets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASKED = "***"
# Command-line flags whose value is a credential (`--token X`, `--api-key=X`).
_SECRET_FLAG = re.compile(r"token|key|secret|passw|auth|credential|bearer", re.IGNORECASE)
# Values shorter than this are not masked inside other text: "1" or "on" would mangle it.
_MIN_SECRET = 6


class Secrets:
    """Values never to be written or shown, masked wherever they appear in a text."""

    def __init__(self, values: Iterable[str]) -> None:
        self.values = sorted({v for v in values if len(v) >= _MIN_SECRET}, key=len, reverse=True)

    def mask(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, MASKED)
        return text


def result_text(result: Any) -> str:
    """A `CallToolResult` as the text the model gets: text parts, the text of embedded
    resources, a line naming anything else (images, audio, blobs, links); the structured
    content as JSON when there are no parts."""
    parts: list[str] = []
    for item in getattr(result, "content", None) or []:
        kind = getattr(item, "type", None)
        if kind == "text":
            parts.append(item.text)
        elif kind == "resource":
            parts.append(_resource_text(item.resource))
        elif kind == "resource_link":
            parts.append(f"[resource {item.uri}{f' ({item.name})' if item.name else ''}]")
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} {item.mime_type}, {len(item.data) * 3 // 4} bytes]")
        else:
            dump = item.model_dump(by_alias=True, exclude_none=True)
            parts.append(json.dumps(dump, ensure_ascii=False, default=str))
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        return json.dumps(structured, ensure_ascii=False, default=str)
    return "\n".join(parts)


def _resource_text(resource: Any) -> str:
    text: str | None = getattr(resource, "text", None)
    if text is not None:
        return text
    blob = getattr(resource, "blob", "") or ""
    mime = getattr(resource, "mime_type", None) or "binary"
    return f"[resource {resource.uri}: {mime}, {len(blob) * 3 // 4} bytes]"


def masked_url(url: str) -> str:
    """The URL without its password and query values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASKED
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", f":{MASKED}@", 1)
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASKED) for k, _ in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def url_secrets(url: str) -> list[str]:
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found = [v for _, v in parse_qsl(parts.query, keep_blank_values=True)]
    if parts.password:
        found.append(parts.password)
    return found


def masked_args(args: Sequence[str], secrets: Secrets) -> list[str]:
    """A command's arguments with credentials masked: the value after a flag naming one
    (`--token X`, `--api-key=X`) and any environment value given to the server."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append(MASKED)
            hide_next = False
            continue
        flag, eq, _ = arg.partition("=")
        if arg.startswith("-") and _SECRET_FLAG.search(flag):
            if eq:
                out.append(f"{flag}={MASKED}")
            else:
                out.append(arg)
                hide_next = True
            continue
        out.append(secrets.mask(arg))
    return out
