"""A small OTLP/HTTP collector for the telemetry tests: it runs on 127.0.0.1 at a free port,
takes `POST /v1/traces` as the OpenTelemetry SDK's exporter sends it (protobuf, gzipped or
not) and keeps every span it got, decoded. Lighter than Phoenix (tests/phoenix_support.py)
where what matters is what reached a collector, not how a backend shows it.
"""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str  # 32 hex digits
    span_id: str  # 16 hex digits
    parent_id: str | None
    attributes: dict[str, Any]
    status_message: str


class OTLPReceiver:
    """The collector (see the module): `url` is its base URL, `spans` what it got so far,
    `requests` how many sends it was asked to take. With `refusing` set it takes none: it
    answers 400, which the exporter does not try again."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.requests = 0
        self.refusing = False
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if not receiver._take(self.path, body):
                    self.send_error(400, "refused by the test")
                    return
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:  # no access log on the test's stderr
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def _take(self, path: str, body: bytes) -> bool:
        """Keep the spans of one request; False when refusing them."""
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        got = [
            ReceivedSpan(
                span.name,
                span.trace_id.hex(),
                span.span_id.hex(),
                span.parent_span_id.hex() or None,
                {kv.key: _value(kv.value) for kv in span.attributes},
                span.status.message,
            )
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]
        with self._changed:
            assert path == "/v1/traces", path
            self.requests += 1
            if not self.refusing:
                self.spans += got
            self._changed.notify_all()
        return not self.refusing

    def of_trace(self, trace_id: str) -> list[ReceivedSpan]:
        with self._changed:
            return [s for s in self.spans if s.trace_id == trace_id]

    def wait_spans(self, trace_id: str, count: int, timeout: float = 30) -> list[ReceivedSpan]:
        """The trace's spans once `count` of them came (AssertionError after `timeout` s)."""
        with self._changed:
            if not self._changed.wait_for(
                lambda: len([s for s in self.spans if s.trace_id == trace_id]) >= count, timeout
            ):
                got = [s.name for s in self.spans if s.trace_id == trace_id]
                raise AssertionError(f"{count} spans of trace {trace_id} expected, got {got}")
            return [s for s in self.spans if s.trace_id == trace_id]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


@pytest.fixture(name="otlp_receiver")
def otlp_receiver_fixture() -> Iterator[OTLPReceiver]:
    receiver = OTLPReceiver()
    yield receiver
    receiver.close()
