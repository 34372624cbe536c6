"""The one shape a received span takes here, whatever carried it (OTLP protobuf, OTLP JSON).

The decoders (`otlp_proto`, `otlp_json`) turn a request into `Span`s; the mapping
(`agentor.collect.mapping`) reads only these. Attribute values are plain Python values: str,
bool, int, float, bytes, lists and dicts of them (an OTLP `kvlist` is a dict).

Every decoder refuses what it cannot read with `SpanDecodeError` (one line: what and where),
before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentor.errors import SpanDecodeError

STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2


@dataclass(frozen=True)
class SpanEvent:
    """An event recorded on a span (an exception, a GenAI content event)."""

    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True)
class Span:
    """One finished span, with the resource and scope it was sent under."""

    trace_id: str  # 32 lower-case hex digits
    span_id: str  # 16 lower-case hex digits
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: tuple[SpanEvent, ...] = ()
    status_code: int = STATUS_UNSET
    status_message: str = ""
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""
    scope_version: str = ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.trace_id, self.span_id)

    @property
    def start(self) -> float:
        """Start time, seconds since the epoch (as a run log writes times)."""
        return self.start_ns / 1e9

    @property
    def end(self) -> float:
        return self.end_ns / 1e9


@dataclass(frozen=True)
class LogRecord:
    """A log record that carries a span's content (`gen_ai.client.inference.operation.details`
    and the older per-message events sent as logs): joined to its span by ids."""

    trace_id: str
    span_id: str
    name: str
    time_ns: int
    attributes: dict[str, Any]
    body: Any


def hex_id(raw: bytes, size: int, what: str) -> str | None:
    """A protobuf id as hex; None for an empty (absent) id; refused when the size is wrong."""
    if not raw:
        return None
    if len(raw) != size:
        raise SpanDecodeError(f"a {what} must be {size} bytes, not {len(raw)}")
    if not any(raw):
        return None
    return raw.hex()
