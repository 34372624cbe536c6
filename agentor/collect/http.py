"""OTLP over HTTP: `POST /v1/traces` and `POST /v1/logs`, protobuf or JSON, gzip or not.

Answers as the OTLP/HTTP specification asks, in the request's own encoding: 200 with an empty
export response once what the request carried is stored (agentor.collect.receiver); 400 with a
one-line reason for a body that does not decode (nothing of it is written); 413 for a body over
the limit (before it is read whole); 415 for another content type; 401 without the token when
one is set; 503 when the store cannot be written (the sender retries).

The token (`Authorization: Bearer ...`) is compared in constant time and never printed or
logged; a request line is never logged either (the server is quiet).
"""

from __future__ import annotations

import hmac
import logging
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

from agentor.collect import otlp_json, otlp_proto
from agentor.collect.receiver import Collector
from agentor.errors import SpanDecodeError

log = logging.getLogger("agentor.collect")

DEFAULT_MAX_BODY = 16 << 20
_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_PATHS = ("/v1/traces", "/v1/logs")
# A body over the limit but under this is read away before the 413 (see `_discard`).
_DISCARD_AT_MOST = 256 << 20


class _Refused(Exception):
    """Control flow inside the handler: answered with `status`, never raised out."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class OtlpHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        collector: Collector,
        token: str | None = None,
        max_body: int = DEFAULT_MAX_BODY,
    ) -> None:
        self.collector = collector
        self.token = token
        self.max_body = max_body
        super().__init__(address, _OtlpHandler)

    @property
    def endpoint(self) -> str:
        address, port = self.server_address[:2]
        host = str(address)  # a str for an IP socket (and the f-string below is str() anyway)
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}"

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        return thread


class _OtlpHandler(BaseHTTPRequestHandler):
    """One request: checked, read, decoded, stored, answered (see the module)."""

    server: OtlpHttpServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # never a request line (a token could be in it)

    def do_POST(self) -> None:
        kind = _PROTOBUF
        try:
            kind = _content_type(self.headers.get("Content-Type", ""))
            path = self.path.split("?", 1)[0]
            if path not in _PATHS:
                raise _Refused(404, f"no such endpoint: {path[:80]} (use /v1/traces)")
            self._check_token()
            body = self._body()
            _handle(self.server.collector, path, kind, body)
        except _Refused as exc:
            self._answer(exc.status, kind, exc.message)
            return
        except SpanDecodeError as exc:
            self._answer(400, kind, str(exc))
            return
        except OSError as exc:
            log.warning("agentor collect: the store refused a write: %s", exc)
            self._answer(503, kind, "the store cannot be written now; retry")
            return
        self._answer(200, kind, None)

    def do_GET(self) -> None:
        self._answer(405, _JSON, "use POST")

    def _check_token(self) -> None:
        token = self.server.token
        if token is None:
            return
        given = self.headers.get("Authorization", "")
        expected = f"Bearer {token}"
        if not hmac.compare_digest(given.encode(), expected.encode()):
            raise _Refused(401, "a valid token is required (Authorization: Bearer ...)")

    def _body(self) -> bytes:
        length_text = self.headers.get("Content-Length")
        if length_text is None or not length_text.isdigit():
            raise _Refused(411, "a Content-Length is required")
        length = int(length_text)
        if length > self.server.max_body:
            self._discard(length)
            raise _Refused(413, f"the body is over {self.server.max_body} bytes")
        body = self.rfile.read(length)
        encoding = self.headers.get("Content-Encoding", "").strip().lower()
        if encoding in ("", "identity"):
            return body
        if encoding != "gzip":
            raise _Refused(415, f"unsupported Content-Encoding: {encoding[:40]}")
        return _gunzip(body, self.server.max_body)

    def _discard(self, length: int) -> None:
        """Read a refused body away, so its sender, still sending, reads the answer
        rather than a reset connection; one far over the limit is cut off instead."""
        self.close_connection = True
        if length > _DISCARD_AT_MOST:
            return
        while length > 0:
            chunk = self.rfile.read(min(length, 1 << 16))
            if not chunk:
                return
            length -= len(chunk)

    def _answer(self, status: int, kind: str, message: str | None) -> None:
        payload = _response(kind, status, message)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _content_type(header: str) -> str:
    kind = header.split(";", 1)[0].strip().lower()
    if kind in (_PROTOBUF, _JSON):
        return kind
    raise _Refused(415, f"unsupported Content-Type {kind[:60]!r}: send {_PROTOBUF} or {_JSON}")


def _gunzip(body: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise SpanDecodeError(f"not gzip: {exc}") from None
    if len(out) > limit:
        raise _Refused(413, f"the body is over {limit} bytes once unzipped")
    if not inflater.eof:
        raise SpanDecodeError("a gzip body cut short")
    return out


def _handle(collector: Collector, path: str, kind: str, body: bytes) -> None:
    if kind == _PROTOBUF:
        if path == "/v1/traces":
            collector.accept(otlp_proto.decode_traces(body), [])
        else:
            collector.accept([], otlp_proto.decode_logs(body))
        return
    doc = otlp_json.load_document(body)
    if path == "/v1/traces":
        collector.accept(otlp_json.decode_traces(doc), [])
    else:
        collector.accept([], otlp_json.decode_logs(doc))


def _response(kind: str, status: int, message: str | None) -> bytes:
    """An empty export response, or a `google.rpc.Status` saying why not."""
    if message is None:
        return b"{}" if kind == _JSON else b""
    code = {400: 3, 401: 16, 404: 5, 411: 3, 413: 8, 415: 3, 405: 12}.get(status, 14)
    if kind == _JSON:
        return orjson.dumps({"code": code, "message": message})
    from google.rpc.status_pb2 import Status

    encoded: bytes = Status(code=code, message=message).SerializeToString()
    return encoded
