"""collect: spans a second received and stored by `agentor collect`, against Arize Phoenix's own
OTLP endpoint receiving the same spans in the same run; and how soon a live span is on screen.

The spans are GenAI spans as pydantic-ai sends them (an `invoke_agent` span, its chat spans
with their messages in attributes, its tool spans), `--runs` runs of `--turns` turns, sent as
OTLP/HTTP protobuf requests of 512 spans (what the SDK's batch processor sends), one request at
a time, as an exporter does. Each receiver is timed from the first request until it holds
every span: ours when the last request is answered (a request is answered once it is stored);
Phoenix's, which ingests in the background, when its GraphQL API counts every span. Both run
as processes of their own, a fresh store each repetition, repetitions interleaved.

Then the latency of a live span: `agentor-tui DIR --collect PORT`'s app and receiver (the
same code, `RunsApp` under `run_test` with a receiver in the process) with a run open; a chat
span of that run is posted at random gaps; from the post until the timeline draws its row.

Goals: throughput ours / Phoenix >= 5; live span p50 <= 100 ms, p99 <= 300 ms. The ratio
printed is the worst of: 5 / (ours / Phoenix), p50 / 100 ms, p99 / 300 ms (<= 1 meets all).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import harness

NAME = "collect"
GOAL_RATIO = 5.0
GOAL_P50 = 0.100
GOAL_P99 = 0.300
BATCH = 512
PHOENIX = harness.ROOT / ".venv-phoenix" / "bin" / "phoenix"
AGENTOR = Path(sys.executable).parent / "agentor"


def _attr(key: str, value: Any) -> Any:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

    if isinstance(value, int):
        return KeyValue(key=key, value=AnyValue(int_value=value))
    return KeyValue(key=key, value=AnyValue(string_value=value))


def make_spans(runs: int, turns: int, seed: int = 7) -> list[Any]:
    """The spans of `runs` pydantic-ai-like runs, in the order their ends would send them."""
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    rng = random.Random(seed)
    out = []
    t0 = time.time_ns() - 3600 * 10**9
    for r in range(runs):
        trace = rng.randbytes(16)
        agent_id = rng.randbytes(8)
        start = t0 + r * 10**9
        conversation = [{"role": "user", "parts": [{"type": "text", "content": f"Weather {r}?"}]}]
        at = start
        for t in range(turns):
            chat = Span(trace_id=trace, span_id=rng.randbytes(8), parent_span_id=agent_id)
            chat.name, chat.start_time_unix_nano = "chat gpt-4o-mini", at
            chat.end_time_unix_nano = at + 200_000_000
            call_id = f"call_{r}_{t}"
            asked = {"type": "tool_call", "id": call_id, "name": "get_weather"}
            asked["arguments"] = json.dumps({"city": f"City{t}"})
            answer = [{"role": "assistant", "parts": [asked], "finish_reason": "tool_call"}]
            chat.attributes.extend([
                _attr("gen_ai.operation.name", "chat"),
                _attr("gen_ai.agent.name", "weather"),
                _attr("gen_ai.request.model", "gpt-4o-mini"),
                _attr("gen_ai.usage.input_tokens", 200 + 40 * t),
                _attr("gen_ai.usage.output_tokens", 20),
                _attr("gen_ai.input.messages", json.dumps(conversation)),
                _attr("gen_ai.output.messages", json.dumps(answer)),
            ])  # fmt: skip
            tool = Span(trace_id=trace, span_id=rng.randbytes(8), parent_span_id=agent_id)
            tool.name = "execute_tool get_weather"
            tool.start_time_unix_nano = at + 200_000_000
            tool.end_time_unix_nano = at + 210_000_000
            tool.attributes.extend([
                _attr("gen_ai.operation.name", "execute_tool"),
                _attr("gen_ai.tool.name", "get_weather"),
                _attr("gen_ai.tool.call.id", call_id),
                _attr("gen_ai.tool.call.arguments", json.dumps({"city": f"City{t}"})),
                _attr("gen_ai.tool.call.result", f"Sunny in City{t}, 22C." * 4),
            ])  # fmt: skip
            response = {"type": "tool_call_response", "id": call_id, "result": "Sunny"}
            conversation += [*answer, {"role": "user", "parts": [response]}]
            out += [chat, tool]
            at += 210_000_000
        agent = Span(trace_id=trace, span_id=agent_id, name="invoke_agent weather")
        agent.start_time_unix_nano, agent.end_time_unix_nano = start, at
        agent.attributes.extend([
            _attr("gen_ai.operation.name", "invoke_agent"),
            _attr("gen_ai.agent.name", "weather"),
            _attr("final_result", "Sunny everywhere."),
        ])  # fmt: skip
        out.append(agent)
    return out


def batches(spans: list[Any]) -> list[bytes]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    bodies = []
    for i in range(0, len(spans), BATCH):
        request = ExportTraceServiceRequest()
        resource = request.resource_spans.add()
        resource.resource.attributes.append(_attr("service.name", "bench"))
        scope = resource.scope_spans.add()
        scope.scope.name = "pydantic-ai"
        scope.spans.extend(spans[i : i + BATCH])
        bodies.append(request.SerializeToString())
    return bodies


def send(url: str, body: bytes) -> None:
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/x-protobuf")
    with urllib.request.urlopen(request, timeout=120) as answer:
        assert answer.status == 200, answer.status


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"{NAME}: timed out waiting for {what}")
        time.sleep(0.02)


def ours(bodies: list[bytes], work: Path) -> float:
    store = work / f"ours-{time.monotonic_ns()}"
    proc = subprocess.Popen(
        [str(AGENTOR), "collect", str(store), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        endpoint = proc.stdout.readline().split(" on ", 1)[1].split(" ", 1)[0]
        began = time.perf_counter()
        for body in bodies:
            send(endpoint + "/v1/traces", body)
        return time.perf_counter() - began
    finally:
        proc.terminate()
        proc.wait(60)
        shutil.rmtree(store, ignore_errors=True)


class Phoenix:
    def __init__(self, work: Path) -> None:
        if not PHOENIX.exists():
            raise SystemExit(f"{NAME}: Phoenix is not installed: run `make phoenix` (once)")
        self.work = work / f"phoenix-{time.monotonic_ns()}"
        self.work.mkdir()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(self.work),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ENABLE_MCP_SERVER": "false",
        }
        log = (self.work / "phoenix.log").open("wb")
        self.proc = subprocess.Popen(
            [str(PHOENIX), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        wait_for(self._ready, 240, "Phoenix to answer")

    def _ready(self) -> bool:
        if self.proc.poll() is not None:
            raise SystemExit(f"{NAME}: Phoenix exited; its log: {self.work / 'phoenix.log'}")
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def span_count(self) -> int:
        query = json.dumps({"query": "{ projects { edges { node { name recordCount } } } }"})
        request = urllib.request.Request(f"{self.url}/graphql", data=query.encode(), method="POST")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as answer:
            data = json.loads(answer.read())
        edges = data["data"]["projects"]["edges"]
        return sum(e["node"]["recordCount"] for e in edges)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.work, ignore_errors=True)


def phoenix(bodies: list[bytes], spans: int, work: Path) -> float:
    server = Phoenix(work)
    try:
        began = time.perf_counter()
        for body in bodies:
            send(server.url + "/v1/traces", body)
        wait_for(lambda: server.span_count() >= spans, 600, f"Phoenix to store {spans} spans")
        return time.perf_counter() - began
    finally:
        server.stop()


async def live_latencies(work: Path, count: int) -> list[float]:
    """Post a chat span of an open run at random gaps; the time until its row is drawn."""
    from agentor.collect.http import OtlpHttpServer
    from agentor.collect.receiver import Collector
    from agentor.collect.spool import spool_for
    from agentor.engine.store.file import FileStore
    from tui.app import RunsApp
    from tui.widgets.timeline import Timeline

    store_dir = work / "live"
    store = FileStore(store_dir)
    collector = Collector(store, spool_for(store))
    server = OtlpHttpServer(("127.0.0.1", 0), collector)
    server.serve_in_thread()
    spans = make_spans(1, count + 1, seed=11)
    steps = [s for s in spans if not s.name.startswith("invoke_agent")]
    chats = [s for s in steps if s.name.startswith("chat")]
    url = server.endpoint + "/v1/traces"
    send(url, batches(steps[:2])[0])  # the run exists, running, before the app starts
    rng = random.Random(3)
    out = []
    drawn: dict[int, float] = {}
    original = Timeline.render_row

    def render_row(self: Timeline, index: int, width: int):  # type: ignore[no-untyped-def]
        drawn.setdefault(index, time.monotonic())
        return original(self, index, width)

    Timeline.render_row = render_row  # type: ignore[method-assign]
    app = RunsApp(store_dir, watch=True)
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            timeline = app.runs_screen.timeline

            def opened() -> bool:
                return timeline.run_log is not None and len(timeline.run_log) >= 4

            await _until(pilot, lambda: opened() and app.watcher.armed, 30)
            for k, chat in enumerate(chats[1 : count + 1]):
                await asyncio.sleep(rng.uniform(0.05, 0.15))
                index = 4 + k  # the run's first chat and tool made 4 lines
                body = batches([chat])[0]
                sent = time.monotonic()
                await asyncio.to_thread(send, url, body)
                await _until(pilot, lambda index=index: index in drawn, 30)
                out.append(drawn[index] - sent)
    finally:
        Timeline.render_row = original  # type: ignore[method-assign]
        server.shutdown()
        server.server_close()
        collector.close()
    return out


async def _until(pilot: Any, check: Any, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"{NAME}: timed out waiting for the app")
        await asyncio.sleep(0.002)


def main() -> None:
    args = harness.parse_args(
        __doc__,
        runs=(int, 400, "runs to send"),
        turns=(int, 5, "turns a run"),
        reps=(int, 3, "repetitions of each side"),
        live=(int, 60, "live spans to time"),
    )
    if args.quick:
        args.runs, args.turns, args.reps, args.live = 20, 2, 1, 5
    spans = make_spans(args.runs, args.turns)
    bodies = batches(spans)
    with tempfile.TemporaryDirectory(prefix="agentor-bench-collect-") as tmp:
        work = Path(tmp)
        cases = [("ours", lambda: ours(bodies, work))]
        if not args.quick:
            cases.append(("phoenix", lambda: phoenix(bodies, len(spans), work)))
        times = harness.interleaved(cases, reps=args.reps, warmup=0 if args.quick else 1)
        latencies = asyncio.run(live_latencies(work, args.live))
    rate = {name: len(spans) / harness.median(values) for name, values in times.items()}
    p50, p99 = harness.median(latencies), harness.percentile(latencies, 99)
    print(f"{len(spans)} spans in {len(bodies)} requests of {BATCH}, {args.reps} repetitions")
    for name, value in rate.items():
        print(f"  {name:8} {value:10.0f} spans/s")
    print(f"  live span on screen: p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
    versus = rate["ours"] / rate["phoenix"] if "phoenix" in rate else float("nan")
    worst = max(GOAL_RATIO / versus if versus == versus else 0.0, p50 / GOAL_P50, p99 / GOAL_P99)
    print(f"  ours / Phoenix {versus:.2f}; live p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")
    print(
        f"{NAME} ratio={worst:.3f} goal=1 ours={rate['ours']:.0f}spans/s "
        f"baseline={rate.get('phoenix', float('nan')):.0f}spans/s"
    )


if __name__ == "__main__":
    main()
