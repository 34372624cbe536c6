"""OTLP JSON bodies (`application/json`) as `Span`s and `LogRecord`s.

The OTLP JSON mapping: keys in lowerCamelCase (snake_case read too), trace and span ids as hex
(not base64), enums as integers, 64-bit integers as strings or numbers, unknown fields ignored.
A document that is not such a request is a `SpanDecodeError` saying where it went wrong.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import orjson

from agentor.collect.spans import LogRecord, Span, SpanEvent
from agentor.errors import SpanDecodeError

_MAX_DEPTH = 32


def load_document(body: bytes | str) -> Any:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise SpanDecodeError(f"not JSON: {exc}") from None


def decode_traces(doc: Any) -> list[Span]:
    """Every span of an `ExportTraceServiceRequest` in its JSON form."""
    out: list[Span] = []
    for resource_spans in _list(doc, "resourceSpans", "the request"):
        resource = _attributes(_obj(_get(resource_spans, "resource"), "resource"))
        for scope_spans in _list(resource_spans, "scopeSpans", "resourceSpans"):
            scope = _obj(_get(scope_spans, "scope"), "scope")
            name = _str(_get(scope, "name"), "scope name")
            version = _str(_get(scope, "version"), "scope version")
            for span in _list(scope_spans, "spans", "scopeSpans"):
                out.append(_span(_obj(span, "span"), resource, name, version))
    return out


def decode_logs(doc: Any) -> list[LogRecord]:
    """Every log record of an `ExportLogsServiceRequest` in its JSON form that names a span."""
    out: list[LogRecord] = []
    for resource_logs in _list(doc, "resourceLogs", "the request"):
        for scope_logs in _list(resource_logs, "scopeLogs", "resourceLogs"):
            for record in _list(scope_logs, "logRecords", "scopeLogs"):
                record = _obj(record, "log record")
                trace_id = _id(_get(record, "traceId"), 16, "trace id")
                span_id = _id(_get(record, "spanId"), 8, "span id")
                if trace_id is None or span_id is None:
                    continue
                attrs = _attributes(record)
                name = _str(_get(record, "eventName"), "event name") or str(
                    attrs.get("event.name", "")
                )
                time_ns = _int(_get(record, "timeUnixNano"), "time") or _int(
                    _get(record, "observedTimeUnixNano"), "time"
                )
                body = _get(record, "body")
                value = _any(body, 0) if isinstance(body, dict) else None
                out.append(LogRecord(trace_id, span_id, name, time_ns, attrs, value))
    return out


def _span(span: dict[str, Any], resource: dict[str, Any], scope: str, version: str) -> Span:
    name = _str(_get(span, "name"), "span name")
    trace_id = _id(_get(span, "traceId"), 16, "trace id")
    span_id = _id(_get(span, "spanId"), 8, "span id")
    if trace_id is None or span_id is None:
        raise SpanDecodeError(f"span {name!r} has no trace id or span id")
    status = _obj(_get(span, "status"), "status")
    events = tuple(
        SpanEvent(
            _str(_get(e, "name"), "event name"),
            _int(_get(e, "timeUnixNano"), "event time"),
            _attributes(e),
        )
        for e in (_obj(x, "event") for x in _list(span, "events", "span"))
    )
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=_id(_get(span, "parentSpanId"), 8, "parent span id"),
        name=name,
        start_ns=_int(_get(span, "startTimeUnixNano"), "start time"),
        end_ns=_int(_get(span, "endTimeUnixNano"), "end time"),
        attributes=_attributes(span),
        events=events,
        status_code=_status_code(_get(status, "code")),
        status_message=_str(_get(status, "message"), "status message"),
        resource=resource,
        scope=scope,
        scope_version=version,
    )


_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def _status_code(value: Any) -> int:
    """An integer, as the OTLP JSON mapping writes enums; the enum's name is read too (what
    protobuf's own JSON printer writes)."""
    if isinstance(value, str) and value in _STATUS_NAMES:
        return _STATUS_NAMES[value]
    return _int(value, "status code")


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def _get(obj: Any, key: str) -> Any:
    if not isinstance(obj, dict):
        raise SpanDecodeError(f"{key} is inside something that is not an object")
    value = obj.get(key)
    return obj.get(_snake(key)) if value is None else value


def _obj(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SpanDecodeError(f"{what} must be an object, not {type(value).__name__}")
    return value


def _list(obj: Any, key: str, where: str) -> list[Any]:
    if not isinstance(obj, dict):
        raise SpanDecodeError(f"{where} must be an object, not {type(obj).__name__}")
    value = _get(obj, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SpanDecodeError(f"{key} in {where} must be a list, not {type(value).__name__}")
    return value


def _str(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SpanDecodeError(f"{what} must be a string, not {type(value).__name__}")
    return value


def _int(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        raise SpanDecodeError(f"{what} must be an integer, not a boolean")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise SpanDecodeError(f"{what} must be an integer, not {value!r:.40}")


def _id(value: Any, size: int, what: str) -> str | None:
    """A hex id (the OTLP JSON mapping); base64, which protobuf's own JSON printer writes,
    is read too when the text is not hex of the right length."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise SpanDecodeError(f"a {what} must be a string, not {type(value).__name__}")
    text = value.lower()
    if len(text) == size * 2 and all(c in "0123456789abcdef" for c in text):
        raw = bytes.fromhex(text)
    else:
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != size:
            raise SpanDecodeError(f"a {what} must be {size * 2} hex digits, not {value!r:.40}")
    return raw.hex() if any(raw) else None


def _attributes(obj: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in _list(obj, "attributes", "attributes"):
        pair = _obj(pair, "attribute")
        key = _str(_get(pair, "key"), "attribute key")
        value = _get(pair, "value")
        out[key] = _any(value, 0) if isinstance(value, dict) else None
    return out


def _any(value: dict[str, Any], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise SpanDecodeError("an attribute value is nested too deeply")
    for key, raw in value.items():
        kind = key if "_" in key else _snake(key)
        if kind == "string_value":
            return _str(raw, "a string value")
        if kind == "bool_value":
            if not isinstance(raw, bool):
                raise SpanDecodeError(f"a bool value must be true or false, not {raw!r:.40}")
            return raw
        if kind == "int_value":
            return _int(raw, "an int value")
        if kind == "double_value":
            return _double(raw)
        if kind == "bytes_value":
            return _bytes(raw)
        if kind == "array_value":
            items = _list(raw, "values", "an array value")
            return [_any(_obj(v, "a value"), depth + 1) for v in items]
        if kind == "kvlist_value":
            pairs = _list(raw, "values", "a kvlist value")
            return {
                _str(_get(p, "key"), "a key"): _any(_obj(_get(p, "value"), "a value"), depth + 1)
                for p in (_obj(x, "a pair") for x in pairs)
            }
    return None


def _double(raw: Any) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise SpanDecodeError(f"a double value must be a number, not {raw!r:.40}")
    try:
        return float(raw)
    except ValueError:
        raise SpanDecodeError(f"a double value must be a number, not {raw!r:.40}") from None


def _bytes(raw: Any) -> bytes:
    try:
        return base64.b64decode(_str(raw, "a bytes value"), validate=True)
    except (binascii.Error, ValueError):
        raise SpanDecodeError("a bytes value must be base64") from None
