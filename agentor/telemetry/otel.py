"""Span records (agentor.telemetry.spans) as OpenTelemetry SDK spans, with the ids the log
gives them (agentor.telemetry.ids) and the times it recorded.

The SDK makes spans as a program runs, with ids it draws and times it reads from the clock;
ours are made after the fact from a log, so they are built as the finished spans the SDK's
processors and exporters take (`ReadableSpan`), never started and ended. The OpenTelemetry
packages are an optional extra (`pip install 'agentor-tui[otel]'`): importing this module
without them raises `TelemetryUnavailableError`, which says so in one line.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentor.errors import TelemetryUnavailableError
from agentor.telemetry.ids import span_id_of, trace_id_of
from agentor.telemetry.spans import CHAT, SpanRecord

INSTALL = "OpenTelemetry is not installed: pip install 'agentor-tui[otel]'"


try:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace.status import Status, StatusCode
except ImportError as exc:  # the extra is not installed
    raise TelemetryUnavailableError(INSTALL) from exc

SCOPE = InstrumentationScope("agentor.telemetry")
SERVICE = "agentor"
_SAMPLED = trace.TraceFlags(trace.TraceFlags.SAMPLED)


def default_resource() -> Resource:
    """service.name "agentor", merged with OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES (so
    `OTEL_RESOURCE_ATTRIBUTES=openinference.project.name=NAME` picks a Phoenix project)."""
    return Resource.create({"service.name": SERVICE})


def readable_spans(
    records: Iterable[SpanRecord],
    resource: Resource | None = None,
    scope: InstrumentationScope = SCOPE,
) -> list[ReadableSpan]:
    resource = resource or default_resource()
    return [readable_span(r, resource, scope) for r in records]


def readable_span(
    record: SpanRecord, resource: Resource, scope: InstrumentationScope
) -> ReadableSpan:
    trace_id = trace_id_of(record.run_id)
    parent = None
    if record.parent_line is not None:
        parent = _context(trace_id, span_id_of(record.run_id, record.parent_line))
    links = [
        trace.Link(_context(trace_id_of(run_id), span_id_of(run_id, line)))
        for run_id, line in record.links
    ]
    status = Status(StatusCode.UNSET)
    attributes = dict(record.attributes)
    if record.error is not None:
        attributes["error.type"] = record.error
        status = Status(StatusCode.ERROR, record.message or record.error)
    return ReadableSpan(
        record.name,
        context=_context(trace_id, span_id_of(record.run_id, record.line)),
        parent=parent,
        resource=resource,
        attributes=attributes,
        links=links,
        kind=trace.SpanKind.CLIENT if record.operation == CHAT else trace.SpanKind.INTERNAL,
        status=status,
        start_time=_nanos(record.start),
        end_time=_nanos(max(record.end, record.start)),
        instrumentation_scope=scope,
    )


def _context(trace_id: int, span_id: int) -> trace.SpanContext:
    return trace.SpanContext(trace_id, span_id, is_remote=False, trace_flags=_SAMPLED)


def _nanos(seconds: float) -> int:
    return round(seconds * 1e9)
