"""OTLP protobuf bodies (`application/x-protobuf`) as `Span`s and `LogRecord`s.

Decoded with the OpenTelemetry project's own messages (`opentelemetry-proto`, in the `otel`
extra). A body that does not parse, or holds an id of the wrong size, is a `SpanDecodeError`.
"""

from __future__ import annotations

from typing import Any

from agentor.collect.spans import LogRecord, Span, SpanEvent, hex_id
from agentor.errors import SpanDecodeError

# Deeper nesting than this in one attribute value is refused: a hostile body must not take the
# decoder's stack.
_MAX_DEPTH = 32


def decode_traces(body: bytes) -> list[Span]:
    """Every span of an `ExportTraceServiceRequest`."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    return spans_of(_parsed(ExportTraceServiceRequest(), body, "trace"))


def _parsed(request: Any, body: bytes, what: str) -> Any:
    from google.protobuf.message import DecodeError

    try:
        request.ParseFromString(body)
    except (DecodeError, RecursionError, ValueError) as exc:
        raise SpanDecodeError(f"not an OTLP protobuf {what} request: {exc}") from None
    return request


def spans_of(request: Any) -> list[Span]:
    """Every span of a parsed `ExportTraceServiceRequest` (as gRPC hands it over)."""
    out: list[Span] = []
    for resource_spans in request.resource_spans:
        resource = attributes_of(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            scope = scope_spans.scope
            for span in scope_spans.spans:
                out.append(_span(span, resource, scope.name, scope.version))
    return out


def decode_logs(body: bytes) -> list[LogRecord]:
    """Every log record of an `ExportLogsServiceRequest` that names a span."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    return records_of(_parsed(ExportLogsServiceRequest(), body, "logs"))


def records_of(request: Any) -> list[LogRecord]:
    """Every log record of a parsed `ExportLogsServiceRequest` that names a span."""
    out: list[LogRecord] = []
    for resource_logs in request.resource_logs:
        for scope_logs in resource_logs.scope_logs:
            for record in scope_logs.log_records:
                trace_id = hex_id(record.trace_id, 16, "trace id")
                span_id = hex_id(record.span_id, 8, "span id")
                if trace_id is None or span_id is None:
                    continue
                attrs = attributes_of(record.attributes)
                name = record.event_name or str(attrs.get("event.name", ""))
                time_ns = record.time_unix_nano or record.observed_time_unix_nano
                body_value = any_value(record.body) if record.HasField("body") else None
                out.append(LogRecord(trace_id, span_id, name, time_ns, attrs, body_value))
    return out


def _span(span: Any, resource: dict[str, Any], scope: str, version: str) -> Span:
    trace_id = hex_id(span.trace_id, 16, "trace id")
    span_id = hex_id(span.span_id, 8, "span id")
    if trace_id is None or span_id is None:
        raise SpanDecodeError(f"span {span.name!r} has no trace id or span id")
    events = tuple(
        SpanEvent(e.name, e.time_unix_nano, attributes_of(e.attributes)) for e in span.events
    )
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=hex_id(span.parent_span_id, 8, "parent span id"),
        name=span.name,
        start_ns=span.start_time_unix_nano,
        end_ns=span.end_time_unix_nano,
        attributes=attributes_of(span.attributes),
        events=events,
        status_code=span.status.code,
        status_message=span.status.message,
        resource=resource,
        scope=scope,
        scope_version=version,
    )


def attributes_of(pairs: Any) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in pairs}


def any_value(value: Any, depth: int = 0) -> Any:
    """An OTLP `AnyValue` as a plain value (None when it holds nothing)."""
    if depth > _MAX_DEPTH:
        raise SpanDecodeError("an attribute value is nested too deeply")
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v, depth + 1) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    return getattr(value, kind)
