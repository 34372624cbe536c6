"""Where spans go: an OTLP/HTTP collector (Phoenix, Langfuse, Jaeger, an OpenTelemetry
collector), through the SDK's exporter (`OTLPSpanExporter`: protobuf over HTTP, which Langfuse
requires), and how.

- `Collector.send` sends a batch and returns once the collector took it, or raises `_SendError`
  saying why in one line, after the exporter's own retries of transient errors (within
  `OTEL_EXPORTER_OTLP_TIMEOUT` seconds, default 10). The
  exporter logs every failure itself; those records are kept from the log while we send and
  become our one line. Header values (credentials) are never printed.
- `SpanQueue` sends from a thread of its own, for runs traced in process: `put` never blocks,
  and a collector that is down or slow never slows a run. The queue is bounded; spans that do
  not fit, that the collector refused, or that arrive while it is down (for `PAUSE_S` after a
  failure, without trying) are dropped and counted (`dropped`), and said once, on the
  `agentor` logger. `flush` waits for what is queued, and not at all while the collector is
  down; at exit, agentor.telemetry.inprocess waits so (a bounded time) for the spans still to
  be made too.

The endpoint is a base URL (`http://127.0.0.1:6006`, `https://cloud.langfuse.com/api/public/otel`)
or the traces URL itself; without one, the standard variables decide
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_ENDPOINT`, else localhost:4318), and
`OTEL_EXPORTER_OTLP_HEADERS` adds headers, as for any OpenTelemetry program.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from urllib.parse import urlsplit

from agentor.telemetry.otel import default_resource, readable_spans
from agentor.telemetry.spans import SpanRecord

log = logging.getLogger("agentor")

TRACES_PATH = "/v1/traces"
DEFAULT_COLLECTOR = "http://localhost:4318"  # the specification's, when no variable names one
QUEUE_SPANS = 4096  # spans a SpanQueue holds at most
BATCH_SPANS = 256
PAUSE_S = 30.0  # after a failure, spans are dropped without trying for this long
# The loggers the exporter reports its failures on.
_EXPORTER_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.exporter.otlp.proto.http",
)


class _SendError(Exception):
    """A collector did not take a batch; the message says why in one line."""


def traces_url(endpoint: str) -> str:
    """`endpoint` as the URL spans are posted to: a base URL gets /v1/traces. ValueError for
    what is not an http(s) URL."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) URL: {endpoint!r}")
    if parts.path.rstrip("/").endswith(TRACES_PATH):
        return endpoint
    return endpoint.rstrip("/") + TRACES_PATH


def url_from_environment() -> str:
    """The traces URL the OpenTelemetry variables name, as the OTLP exporter specification
    says: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT`
    with /v1/traces, else the default collector (http://localhost:4318/v1/traces)."""
    from opentelemetry.sdk.environment_variables import (
        OTEL_EXPORTER_OTLP_ENDPOINT,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    )

    if url := os.environ.get(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT):
        return url
    base = os.environ.get(OTEL_EXPORTER_OTLP_ENDPOINT) or DEFAULT_COLLECTOR
    return base.removesuffix("/") + TRACES_PATH


def parse_header(text: str) -> tuple[str, str]:
    """`K=V` as a header; ValueError otherwise."""
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise ValueError(f"not a header K=V: {text!r}")
    return name.strip(), value.strip()


class _Captured(logging.Filter):
    """Keeps the exporter's records from the log while this thread sends; keeps the last
    failure's text to say it in our own words."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(self.local, "sending", False):
            return True
        if not getattr(self.local, "reason", None):  # the first says the cause; later, retries
            self.local.reason = _cause(record.getMessage())
        return False


_captured = _Captured()
for _name in _EXPORTER_LOGGERS:
    logging.getLogger(_name).addFilter(_captured)


@contextlib.contextmanager
def _quiet() -> Iterator[threading.local]:
    local = _captured.local
    local.sending, local.reason = True, None
    try:
        yield local
    finally:
        local.sending = False


class Collector:
    """One OTLP/HTTP endpoint (see the module)."""

    def __init__(
        self,
        endpoint: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.url = traces_url(endpoint) if endpoint else url_from_environment()
        self._exporter = OTLPSpanExporter(
            endpoint=self.url, headers=dict(headers or {}), timeout=timeout
        )
        # Made once, here: the SDK detects a resource in a thread pool, which refuses work once
        # the interpreter is exiting, when the last spans of a script are sent.
        self._resource = default_resource()

    def send(self, records: Sequence[SpanRecord]) -> None:
        """Send `records` (in batches of BATCH_SPANS); _SendError when a batch is not taken."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        spans = readable_spans(records, self._resource)
        for i in range(0, len(spans), BATCH_SPANS):
            with _quiet() as local:
                result = self._exporter.export(spans[i : i + BATCH_SPANS])
                reason = local.reason
            if result is not SpanExportResult.SUCCESS:
                why = _one_line(reason or "no answer")
                raise _SendError(f"the collector at {self.url} did not take the spans: {why}")

    def close(self) -> None:
        with _quiet():
            self._exporter.shutdown()


class SpanQueue:
    """Spans sent to a collector from a thread of their own (see the module)."""

    def __init__(self, collector: Collector, max_spans: int = QUEUE_SPANS) -> None:
        self.collector = collector
        self.max_spans = max_spans
        self.dropped = 0
        self.sent = 0
        self._queue: collections.deque[SpanRecord] = collections.deque()
        self._cond = threading.Condition()
        self._busy = False
        self._down_until = 0.0
        self._said = False
        self._thread = threading.Thread(target=self._run, name="agentor-spans", daemon=True)
        self._thread.start()

    def put(self, records: Sequence[SpanRecord]) -> None:
        """Queue `records`; never blocks. What does not fit is dropped and counted."""
        if not records:
            return
        with self._cond:
            room = self.max_spans - len(self._queue)
            self._queue.extend(records[: max(room, 0)])
            over = len(records) - max(room, 0)
            self._cond.notify()
        if over > 0:
            self._drop(over, f"{self.max_spans} spans were waiting for it already")

    def flush(self, timeout: float) -> bool:
        """Wait until what is queued was sent or dropped, at most `timeout` seconds (not at
        all while the collector is down); True when nothing is left."""
        deadline = time.monotonic() + timeout
        with self._cond:
            if time.monotonic() < self._down_until:
                self._drop_queued()  # down: dropped now, not waited for
                return not self._busy
            while self._queue or self._busy:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    break
                self._cond.wait(left)
            return not (self._queue or self._busy)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                batch = [self._queue.popleft() for _ in range(min(BATCH_SPANS, len(self._queue)))]
                self._busy = True
            try:
                self._send(batch)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _send(self, batch: list[SpanRecord]) -> None:
        if time.monotonic() < self._down_until:
            self._drop(len(batch), "it was down a moment ago")
            return
        try:
            self.collector.send(batch)
        except Exception as exc:  # whatever the collector or the exporter did: the run goes on
            self._down_until = time.monotonic() + PAUSE_S
            self._drop(len(batch), str(exc))
        else:
            self.sent += len(batch)

    def _drop_queued(self) -> None:
        n = len(self._queue)
        self._queue.clear()
        if n:
            self._drop(n, "it is down")

    def _drop(self, n: int, why: str) -> None:
        with self._cond:
            self.dropped += n
            said, self._said = self._said, True
        if not said:
            log.warning(
                "tracing: spans are dropped (and counted) while the collector at %s does not "
                "take them: %s",
                self.collector.url,
                _one_line(why),
            )


def _cause(message: str) -> str:
    """What went wrong, out of the exporter's words: the OS's reason for a connection that
    failed ("[Errno 111] Connection refused"), the error of a transient failure, or all."""
    errno = re.search(r"\[Errno -?\d+\] [^'\")\]]+", message)
    if errno:
        return errno.group(0).strip()
    transient = re.match(r"Transient error (.*) encountered while exporting", message)
    return transient.group(1) if transient else message


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:300]
