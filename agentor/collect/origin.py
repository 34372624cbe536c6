"""Where a collected run came from, as its `run_start` records it (`source`), in words: what
the TUI's detail, `agentor show` and the refusals of resume and fork say."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentor.engine.events import RUN_START, Event
from agentor.literal import literal_line

OTLP = "otlp"


def collected_source(start: Event | None) -> dict[str, Any] | None:
    """A `run_start`'s `source` when the run was collected from spans, else None."""
    source = start.extra.get("source") if start is not None else None
    if isinstance(source, dict) and source.get("kind") == OTLP:
        return source
    return None


def collected_from(events: Sequence[Event]) -> str | None:
    """What made a run collected from OpenTelemetry spans ("pydantic-ai over OTLP"), or None
    for a run an agent of this engine wrote."""
    source = collected_source(next((e for e in events if e.type == RUN_START), None))
    if source is None:
        return None
    framework = source.get("framework")
    return f"{framework} over OTLP" if isinstance(framework, str) and framework else "OTLP"


def origin_words(source: dict[str, Any]) -> str:
    """The line a collected run's `run_start` detail shows: framework, version, service,
    trace (literal: span attributes are untrusted)."""
    framework = source.get("framework") or "a framework"
    version = source.get("framework_version")
    words = f"{framework} {version}" if version else str(framework)
    words += " over OTLP"
    service = source.get("service")
    if service:
        words += f" · service {service}"
    trace = source.get("trace_id")
    if trace:
        words += f" · trace {trace}"
    return literal_line(words, 200)
