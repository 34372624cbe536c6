"""OTLP files as spans: what `agentor import` reads.

Three shapes are read, told apart by their first byte:
- JSON lines: one `ExportTraceServiceRequest` (or logs request) per line, as the OpenTelemetry
  Collector's file exporter writes;
- one JSON document: a request, or a list of requests;
- protobuf: one request, or requests each behind a 4-byte big-endian length (the Collector's
  file exporter with `format: proto`).
A file that is none of these is a `SpanDecodeError` naming the line or offset.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from agentor.collect import otlp_json, otlp_proto
from agentor.collect.spans import LogRecord, Span
from agentor.errors import SpanDecodeError

Progress = Callable[[int, int], None]


def read_otlp_file(
    path: Path, progress: Progress | None = None
) -> tuple[list[Span], list[LogRecord]]:
    data = path.read_bytes()
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        return _read_json(data, progress)
    if not data.strip():
        return [], []
    return _read_protobuf(data, progress)


def _read_json(data: bytes, progress: Progress | None) -> tuple[list[Span], list[LogRecord]]:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _read_json_lines(data, progress)
    spans: list[Span] = []
    logs: list[LogRecord] = []
    for request in doc if isinstance(doc, list) else [doc]:
        _take(request, spans, logs)
    if progress is not None:
        progress(len(data), len(data))
    return spans, logs


def _read_json_lines(data: bytes, progress: Progress | None) -> tuple[list[Span], list[LogRecord]]:
    spans: list[Span] = []
    logs: list[LogRecord] = []
    done = 0
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        done += len(line)
        if not line.strip():
            continue
        try:
            _take(otlp_json.load_document(line), spans, logs)
        except SpanDecodeError as exc:
            raise SpanDecodeError(f"line {number}: {exc}") from None
        if progress is not None and number % 256 == 0:
            progress(done, len(data))
    if progress is not None:
        progress(len(data), len(data))
    return spans, logs


def _take(request: Any, spans: list[Span], logs: list[LogRecord]) -> None:
    if not isinstance(request, dict):
        raise SpanDecodeError(f"an OTLP request must be an object, not {type(request).__name__}")
    if "resourceSpans" in request or "resource_spans" in request:
        spans.extend(otlp_json.decode_traces(request))
    elif "resourceLogs" in request or "resource_logs" in request:
        logs.extend(otlp_json.decode_logs(request))
    else:
        raise SpanDecodeError("not an OTLP request: no resourceSpans or resourceLogs")


def _read_protobuf(data: bytes, progress: Progress | None) -> tuple[list[Span], list[LogRecord]]:
    chunks = _length_prefixed(data)
    if chunks is None:
        chunks = [data]
    spans: list[Span] = []
    done = 0
    for chunk in chunks:
        spans.extend(otlp_proto.decode_traces(chunk))
        done += len(chunk) + 4
        if progress is not None:
            progress(min(done, len(data)), len(data))
    return spans, []


def _length_prefixed(data: bytes) -> list[bytes] | None:
    """The messages of a length-prefixed file, or None when the lengths do not tile it."""
    out = []
    at = 0
    while at < len(data):
        if at + 4 > len(data):
            return None
        size = int.from_bytes(data[at : at + 4], "big")
        at += 4
        if size == 0 or at + size > len(data):
            return None
        out.append(data[at : at + size])
        at += size
    return out or None
