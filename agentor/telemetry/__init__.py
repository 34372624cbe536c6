"""Runs as OpenTelemetry GenAI spans, made from recorded events (agentor.telemetry).

One path, three ways in: `agentor export RUN... --format otlp` (export.py) for runs already
written, `agentor trace DIR|DSN` (follow.py) beside whoever writes them, and
`Agentor(tracing=True)` (inprocess.py) as a run records them. All three make spans with
`RunSpans` (spans.py) from the log's events and times, with ids derived from the run id and
the line (ids.py), so each gives the same spans for a run; attributes.py names them for the
GenAI conventions, Phoenix and Langfuse; otel.py and sending.py hand them to OpenTelemetry's
SDK and OTLP exporter (the optional extra `agentor-tui[otel]`). docs/tracing.md is the manual.
"""

from __future__ import annotations

from agentor.telemetry.ids import span_id_of, trace_id_of
from agentor.telemetry.spans import RunSpans, SpanRecord, spans_of

__all__ = ["RunSpans", "SpanRecord", "span_id_of", "spans_of", "trace_id_of"]
