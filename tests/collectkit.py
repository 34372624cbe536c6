"""What the collect tests share: real frameworks run as their users run them (in the venv
`make emitters` makes, .venv-emitters: they pin their own versions), a real `agentor collect`
process, a capture server that keeps what an exporter sent, and OTLP bodies posted by hand.

Without the venv the tests fail saying how to make it; they never skip.
"""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, log_lines, wait_for

AGENTOR = Path(sys.executable).parent / "agentor"
EMITTERS = ROOT / ".venv-emitters" / "bin" / "python"
EMITTER_DIR = ROOT / "tests" / "emitters"
MISSING = "the agent frameworks are not installed for the tests: run `make emitters` (once)"


@dataclass
class Emitted:
    output: str
    tool_calls: int


def run_emitter(script: str, model_url: str, endpoint: str, prompt: str) -> Emitted:
    """Run a framework's agent (tests/emitters/SCRIPT) to the end, exporting to `endpoint`."""
    assert EMITTERS.exists(), MISSING
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    env["PYTHONPATH"] = ""
    done = subprocess.run(
        [str(EMITTERS), str(EMITTER_DIR / script), model_url, prompt],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    calls = [line for line in done.stderr.splitlines() if line.startswith("tool calls: ")]
    return Emitted(done.stdout.strip(), int(calls[-1].split(": ")[1]))


class CaptureServer:
    """An OTLP/HTTP endpoint that only keeps each request's body and content type."""

    def __init__(self) -> None:
        self.bodies: list[tuple[str, str, bytes]] = []  # (path, content type, body)
        kept = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                kept.append((self.path, self.headers.get("Content-Type", ""), body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> CaptureServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def trace_bodies(self) -> list[bytes]:
        return [body for path, _, body in self.bodies if path == "/v1/traces"]


class CollectProcess:
    """`agentor collect STORE --port 0 ...` in its own process; `endpoint` from its start line."""

    def __init__(self, store: Path | str, *args: str, env: dict[str, str] | None = None) -> None:
        command = [str(AGENTOR), "collect", str(store), "--port", "0"]
        self.proc = subprocess.Popen(
            [*command, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            cwd=ROOT,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert "OTLP/HTTP on http://" in line, line + self.proc.stderr.read()  # type: ignore[union-attr]
        self.start_line = line
        self.endpoint = line.split(" on ", 1)[1].split(" ", 1)[0]

    def stop(self) -> tuple[int, str, str]:
        """SIGTERM; exit status, the rest of stdout, stderr."""
        self.proc.terminate()
        out, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, out, err

    def kill(self) -> None:
        self.proc.kill()
        self.proc.communicate(timeout=30)


@contextmanager
def collecting(store: Path | str, *args: str) -> Iterator[CollectProcess]:
    collector = CollectProcess(store, *args)
    try:
        yield collector
    finally:
        if collector.proc.poll() is None:
            collector.kill()


def collected_live(store: Path, script: str, model_url: str, prompt: str) -> tuple[Emitted, Path]:
    """A framework's run (tests/emitters/SCRIPT) exported live to a real `agentor collect`
    into `store`, until its one run ended; what the run did, and its log."""
    with collecting(store) as collector:
        emitted = run_emitter(script, model_url, collector.endpoint, prompt)
        (log,) = wait_for_runs(store, 1)
        wait_for(lambda: log_lines(log)[-1]["type"] == "run_end", 30, "the run's end")
        collector.stop()
    return emitted, log


def post(
    endpoint: str,
    body: bytes,
    content_type: str = "application/x-protobuf",
    path: str = "/v1/traces",
    zipped: bool = False,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    data = gzip.compress(body) if zipped else body
    request = urllib.request.Request(endpoint + path, data=data, method="POST")
    request.add_header("Content-Type", content_type)
    if zipped:
        request.add_header("Content-Encoding", "gzip")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def proto_to_json(body: bytes) -> bytes:
    """An OTLP protobuf trace request in the OTLP JSON mapping: ids as hex, not base64."""
    import json

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    doc = MessageToDict(request)
    for resource_spans in doc.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
                span["unknownFieldOfANewerSender"] = {"ignored": True}
    return json.dumps(doc).encode()


def split_request(body: bytes, keep: Any) -> tuple[bytes, bytes]:
    """The request's spans for which `keep(span)` holds, and the others, as two requests."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    first, second = ExportTraceServiceRequest(), ExportTraceServiceRequest()
    first.CopyFrom(request)
    second.CopyFrom(request)
    for part, wanted in ((first, True), (second, False)):
        for resource_spans in part.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                kept = [s for s in scope_spans.spans if bool(keep(s)) == wanted]
                del scope_spans.spans[:]
                scope_spans.spans.extend(kept)
    return first.SerializeToString(), second.SerializeToString()


def joined(bodies: list[bytes]) -> bytes:
    """Several trace requests as one."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    out = ExportTraceServiceRequest()
    for body in bodies:
        part = ExportTraceServiceRequest()
        part.ParseFromString(body)
        out.resource_spans.extend(part.resource_spans)
    return out.SerializeToString()


def run_logs(store: Path) -> list[Path]:
    return sorted(store.glob("*.jsonl"))


def wait_for_runs(store: Path, count: int, timeout: float = 30.0) -> list[Path]:
    return wait_for(lambda: len(run_logs(store)) >= count and run_logs(store), timeout, "runs")
