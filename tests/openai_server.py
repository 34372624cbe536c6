"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benches.

Replies are scripted: a list of reply dicts consumed in order, or a function of the request.
A reply is one of

    {"text": "..."}                                  a final answer
    {"calls": [["get_weather", {"city": "Oslo"}]]}   tool calls (ids are generated)
    {"status": 500, "message": "..."}                an HTTP error
    {"status": 429, "retry_after_ms": 5}             one that asks the client to retry soon
    {"hang": True}                                   never answer (until the server stops)
    {"delay": 0.5, ...}                              wait before answering
    {"wait": threading.Event(), ...}                 answer once the event is set (60 s at most)
    {"calls": [...], "omit_index": True}             streamed tool-call deltas without `index`

Streaming requests (`"stream": true`) are answered with SSE chunks, usage last when asked for.
Every request body is kept in `server.requests`, its headers in `server.headers`. A GET (the
models list a model's check asks for) is answered 404, its path kept in `server.gets`.

Run standalone: `python tests/openai_server.py` serves the weather script and prints its URL.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = dict[str, Any]
Script = list[Reply] | Callable[[dict[str, Any]], Reply]


def weather_script(request: dict[str, Any]) -> Reply:
    """Call get_weather for each capitalised city in the prompt, then summarise the results."""
    messages = request.get("messages", [])
    if messages and messages[-1].get("role") == "tool":
        results = [m["content"] for m in messages if m.get("role") == "tool"]
        return {"text": " ".join(results)}
    prompt = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), "")
    cities = re.findall(r"\b(?!What\b|The\b|And\b)[A-Z][a-z]+", prompt or "")
    if not cities:
        return {"text": "Which city?"}
    return {"calls": [["get_weather", {"city": c}] for c in cities]}


class FakeOpenAI:
    def __init__(self, script: Script | None = None) -> None:
        self.script: Script = script if script is not None else weather_script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each request's, names in lower case
        self.gets: list[str] = []  # the path of each GET
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        # A short poll interval: `stop()` waits for it, once per test that starts a server.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def calls(self) -> int:
        """How many chat-completions requests arrived."""
        return len(self.requests)

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_reply(self, request: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers or {})
            if callable(self.script):
                return self.script(request)
            if not self.script:
                return {"status": 500, "message": "script exhausted"}
            return self.script.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: without TCP_NODELAY every reply on a
            # kept-alive connection waits ~40 ms for a delayed ACK (Nagle).
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                with server._lock:
                    server.gets.append(self.path)
                self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.split("?", 1)[0].endswith("/chat/completions"):
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                headers[":path"] = self.path
                reply = server.next_reply(body, headers)
                if reply.get("delay"):
                    time.sleep(reply["delay"])
                if reply.get("wait") is not None:
                    reply["wait"].wait(60)
                if reply.get("hang"):
                    server._stop.wait()
                    return
                if "status" in reply:
                    msg = reply.get("message", "scripted failure")
                    extra = {}
                    if "retry_after_ms" in reply:
                        extra["retry-after-ms"] = str(reply["retry_after_ms"])
                    error = {"error": {"message": msg, "type": "server"}}
                    self._json(reply["status"], error, extra)
                    return
                if body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._json(200, server._completion(body, reply))

            def _json(self, code: int, data: Any, headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(data).encode()
                self.send_response(code)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                full = server._completion(body, reply)
                for chunk in server._chunks(full, body, reply.get("omit_index", False)):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
        if "calls" in reply:
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for i, (name, args) in enumerate(reply["calls"])
            ]
        prompt = sum(len(json.dumps(m)) for m in body.get("messages", [])) // 4
        completion = 12
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if "calls" in reply else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _chunks(
        self, full: dict[str, Any], body: dict[str, Any], omit_index: bool = False
    ) -> list[dict[str, Any]]:
        base = {k: full[k] for k in ("id", "created", "model")}
        base["object"] = "chat.completion.chunk"
        msg = full["choices"][0]["message"]
        chunks = []

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        chunks.append(chunk({"role": "assistant", "content": ""}))
        text = msg.get("content") or ""
        for word in re.findall(r"\S+\s*", text):
            chunks.append(chunk({"content": word}))
        for i, call in enumerate(msg.get("tool_calls") or []):
            fn = call["function"]
            chunks.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": i,
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": fn["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            args = fn["arguments"]
            for part in (args[: len(args) // 2], args[len(args) // 2 :]):
                chunks.append(
                    chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]})
                )
        if omit_index:  # as some servers do: a new id starts the next call
            for c in chunks:
                for call in c["choices"][0]["delta"].get("tool_calls", []):
                    del call["index"]
        chunks.append(chunk({}, full["choices"][0]["finish_reason"]))
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": full["usage"]})
        return chunks


if __name__ == "__main__":
    with FakeOpenAI() as srv:
        print(srv.url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
