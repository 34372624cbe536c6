"""Runs as OpenTelemetry GenAI spans, made from recorded events (agentor.telemetry).

One path, three ways in: `agentor export RUN... --format otlp` (agentor.telemetry.export) for
runs already written, `agentor trace DIR|DSN` (agentor.telemetry.follow) beside whoever writes
them, and `Agentor(tracing=True)` (agentor.telemetry.inprocess) as a run records them. All three
make spans with `RunSpans` (agentor.telemetry.spans) from the log's events and times, with ids
derived from the run id and the line (agentor.telemetry.ids), so each gives the same spans for a
run; agentor.telemetry.attributes names them for the GenAI conventions, Phoenix and Langfuse;
agentor.telemetry.otel and agentor.telemetry.sending hand them to OpenTelemetry's SDK and OTLP
exporter (the optional extra `agentor-tui[otel]`). docs/tracing.md is the manual.
"""

from __future__ import annotations

from agentor.telemetry.ids import span_id_of, trace_id_of
from agentor.telemetry.spans import RunSpans, SpanRecord, spans_of

__all__ = ["RunSpans", "SpanRecord", "span_id_of", "spans_of", "trace_id_of"]
