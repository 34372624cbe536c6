"""`agentor collect [STORE] [--host H] [--port P] [--token T]`: an OTLP receiver that writes
each agent run it receives into STORE as an ordinary run log (docs/collect.md).

The start line on stdout names the endpoint (never the token); it runs until SIGTERM or
SIGINT, then lets go of the runs it holds and exits 0. Away from loopback a token is required
(`--token` or AGENTOR_COLLECT_TOKEN), as `agentor-tui serve` requires one.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from argparse import Namespace
from types import FrameType
from typing import TYPE_CHECKING

from agentor.access import checked_token
from agentor.cli.lines import Refusal, UsageError
from agentor.cli.stores import open_named, store_spec, where
from agentor.collect.receiver import Collector
from agentor.collect.spool import spool_for
from agentor.literal import literal_line

if TYPE_CHECKING:
    from agentor.collect.grpc import OtlpGrpcServer

TOKEN_ENV = "AGENTOR_COLLECT_TOKEN"


def collect(args: Namespace) -> int:
    token = _token(args)
    store = open_named(store_spec(args), args.schema, create=True)
    from agentor.collect.http import OtlpHttpServer

    collector = Collector(store, spool_for(store), idle=float(args.idle))
    try:
        server = OtlpHttpServer(
            (args.host, args.port), collector, token=token, max_body=args.max_body << 20
        )
    except OSError as exc:
        raise Refusal(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    grpc_server = _grpc(args, collector, token)
    stop = threading.Event()
    _on_signals(stop)
    server.serve_in_thread()
    also = f", OTLP/gRPC on {grpc_server.endpoint}" if grpc_server is not None else ""
    print(
        literal_line(
            f"agentor collect: OTLP/HTTP on {server.endpoint} (POST /v1/traces, /v1/logs)"
            f"{also} into {where(store)}",
            600,
        ),
        flush=True,
    )
    try:
        while not stop.wait(min(collector.idle / 4, 30.0)):
            collector.let_go_idle()
    finally:
        if grpc_server is not None:
            grpc_server.stop()
        server.shutdown()
        server.server_close()
        collector.close()
    stats = collector.stats
    print(
        f"agentor collect: {stats.spans} spans in {stats.requests} requests, "
        f"{len(stats.runs)} runs, {stats.dropped} spans no agent's step",
        flush=True,
    )
    return 0


def _grpc(args: Namespace, collector: Collector, token: str | None) -> OtlpGrpcServer | None:
    if args.grpc_port is None:
        return None
    from agentor.collect.grpc import OtlpGrpcServer

    try:
        grpc_server = OtlpGrpcServer(args.host, args.grpc_port, collector, token)
    except ImportError as exc:
        raise Refusal(str(exc)) from None
    except (OSError, RuntimeError) as exc:
        raise Refusal(f"cannot listen on {args.host}:{args.grpc_port} for gRPC: {exc}") from None
    grpc_server.start()
    return grpc_server


def _token(args: Namespace) -> str | None:
    from_env = os.environ.get(TOKEN_ENV)
    token, named = (args.token, "--token") if args.token is not None else (from_env, TOKEN_ENV)
    try:
        return checked_token(token, named, literal_line(args.host, 80), TOKEN_ENV)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _on_signals(stop: threading.Event) -> None:
    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handle)
    signal.signal(signal.SIGINT, handle)
    if hasattr(signal, "SIGHUP") and sys.stdin is not None and not sys.stdin.isatty():
        signal.signal(signal.SIGHUP, handle)
