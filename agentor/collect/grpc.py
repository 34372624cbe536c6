"""OTLP over gRPC: `TraceService/Export` and `LogsService/Export` (`agentor collect
--grpc-port`), in the `collect-grpc` extra (grpcio).

The same rules as over HTTP (agentor.collect.http): an export is answered only once what it
carried is stored; a request that does not decode is `INVALID_ARGUMENT` with a one-line reason
and writes nothing; without the token, when one is set, `UNAUTHENTICATED` (the `authorization`
metadata, `Bearer T`, compared in constant time); a store that cannot be written is
`UNAVAILABLE`, which exporters retry.
"""

from __future__ import annotations

import hmac
from concurrent import futures
from typing import Any

from agentor.collect import otlp_proto
from agentor.collect.receiver import Collector
from agentor.errors import SpanDecodeError

GRPC_HINT = "gRPC needs grpcio: pip install 'agentor-tui[collect-grpc]'"


class OtlpGrpcServer:
    """A gRPC server with the OTLP trace and logs services, on `host:port` (0: a free one)."""

    def __init__(
        self, host: str, port: int, collector: Collector, token: str | None = None
    ) -> None:
        try:
            import grpc
            from opentelemetry.proto.collector.logs.v1 import logs_service_pb2_grpc as logs_rpc
            from opentelemetry.proto.collector.trace.v1 import (
                trace_service_pb2_grpc as trace_rpc,
            )
        except ImportError as exc:
            raise ImportError(f"{GRPC_HINT} ({exc})") from None
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_rpc.add_TraceServiceServicer_to_server(_TraceService(collector, token), self._server)
        logs_rpc.add_LogsServiceServicer_to_server(_LogsService(collector, token), self._server)
        shown = f"[{host}]" if ":" in host else host
        self.port = self._server.add_insecure_port(f"{shown}:{port}")
        if self.port == 0:
            raise OSError(f"cannot listen on {host}:{port} for gRPC")
        self.endpoint = f"http://{shown}:{self.port}"

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop(grace=5).wait()


def _export(collector: Collector, token: str | None, context: Any, accept: Any) -> None:
    import grpc

    if token is not None:
        given = dict(context.invocation_metadata()).get("authorization", "")
        if not hmac.compare_digest(str(given).encode(), f"Bearer {token}".encode()):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "a valid token is required")
    try:
        accept()
    except SpanDecodeError as exc:
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
    except OSError:
        context.abort(grpc.StatusCode.UNAVAILABLE, "the store cannot be written now; retry")


class _TraceService:
    def __init__(self, collector: Collector, token: str | None) -> None:
        self.collector, self.token = collector, token

    def Export(self, request: Any, context: Any) -> Any:  # the name gRPC calls
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceResponse,
        )

        def accept() -> None:
            self.collector.accept(otlp_proto.spans_of(request), [])

        _export(self.collector, self.token, context, accept)
        return ExportTraceServiceResponse()


class _LogsService:
    def __init__(self, collector: Collector, token: str | None) -> None:
        self.collector, self.token = collector, token

    def Export(self, request: Any, context: Any) -> Any:  # the name gRPC calls
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceResponse,
        )

        def accept() -> None:
            self.collector.accept([], otlp_proto.records_of(request))

        _export(self.collector, self.token, context, accept)
        return ExportLogsServiceResponse()
