"""Runs as OpenTelemetry spans, read back from a real Arize Phoenix (tests/phoenix_support.py):
an export after the fact, a follower (`agentor trace`) beside a writer that is SIGKILLed and a
resume in a new process, the follower itself killed and restarted meanwhile, a fork's link to
its parent, and tracing in process, to Phoenix and to a collector that is down.

Phoenix keeps no span links (its OTLP decoder reads none): the fork's link is checked on the
spans the OpenTelemetry SDK's own pipeline receives in process, and in Phoenix through the
attributes naming the parent's span.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentor.engine.events import Event
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.ops.pricing import cost_of
from agentor.telemetry import inprocess
from agentor.telemetry.ids import span_id_of, trace_id_of
from tests.conftest import ROOT, Children, WeatherAgents, counted, log_types, only_run, wait_for
from tests.phoenix_support import Phoenix, free_port, phoenix_server  # noqa: F401 (fixture)
from tests.test_crash_resume import RESUME, run_code

CLI = "from agentor.cli import main; raise SystemExit(main())"


def agentor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def when(iso: str) -> float:
    return datetime.fromisoformat(iso).timestamp()


def hex_id(run_id: str, line: int) -> str:
    return format(span_id_of(run_id, line), "016x")


def events_of(store: FileStore, run_id: str) -> list[Event]:
    return [x for x in load_lines(store, run_id) if isinstance(x, Event)]


def test_an_exported_run_shows_in_phoenix_as_one_trace_with_its_times_and_attributes(
    phoenix: Phoenix, weather_agent: WeatherAgents, tmp_path: Path
) -> None:
    store = FileStore(tmp_path / "runs")
    run = weather_agent(store=store).run("What is the weather in Oslo and Rome?")
    events = events_of(store, run.run_id)

    done = agentor(
        "export",
        run.run_id,
        "--dir",
        str(store.directory),
        "--format",
        "otlp",
        "--endpoint",
        phoenix.url,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"sent 5 spans of run {run.run_id} (completed, 1 segment)")
    spans = {s["context"]["span_id"]: s for s in phoenix.wait_spans(run.run_id, 5)}

    # One trace (its id is the run id), one root: the segment; each step under it.
    root = spans[hex_id(run.run_id, 1)]
    assert root["name"] == "invoke_agent Weather Agent" and root["parent_id"] is None
    assert {s["parent_id"] for s in spans.values() if s is not root} == {root["context"]["span_id"]}
    assert sorted(s["name"] for s in spans.values()) == [
        "chat gpt-4o-mini",
        "chat gpt-4o-mini",
        "execute_tool get_weather",
        "execute_tool get_weather",
        "invoke_agent Weather Agent",
    ]
    # Times are the log's, to the microsecond.
    assert when(root["start_time"]) == pytest.approx(events[0].started_at, abs=1e-6)
    assert when(root["end_time"]) == pytest.approx(events[-1].ended_at, abs=1e-6)
    for line, e in enumerate(events, 1):
        if e.type == "generation":
            chat = spans[hex_id(run.run_id, line)]
            assert when(chat["start_time"]) == pytest.approx(e.started_at, abs=1e-6)
            assert when(chat["end_time"]) == pytest.approx(e.ended_at, abs=1e-6)
            a = chat["attributes"]
            assert chat["span_kind"] == "LLM"
            assert a["gen_ai.operation.name"] == "chat"
            assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == "gpt-4o-mini"
            assert a["gen_ai.provider.name"] == "openai"
            assert a["gen_ai.conversation.id"] == a["session.id"] == run.run_id
            assert a["gen_ai.usage.input_tokens"] == e.usage.input_tokens
            assert a["gen_ai.usage.output_tokens"] == e.usage.output_tokens
            assert a["langfuse.observation.type"] == "generation"
            cost = float(cost_of(e.usage, "gpt-4o-mini", at=e.started_at))
            assert a["gen_ai.usage.cost"] == pytest.approx(cost)
            assert "input.value" not in a and "gen_ai.input.messages" not in a  # no --content
        if e.type == "tool_result":
            call_line = next(
                i
                for i, c in enumerate(events, 1)
                if c.type == "tool_call" and c.call_id == e.call_id
            )
            tool = spans[hex_id(run.run_id, call_line)]
            assert when(tool["start_time"]) == pytest.approx(e.started_at, abs=1e-6)
            assert when(tool["end_time"]) == pytest.approx(e.ended_at, abs=1e-6)
            assert tool["span_kind"] == "TOOL"
            assert tool["attributes"]["gen_ai.tool.name"] == "get_weather"
            assert tool["attributes"]["gen_ai.tool.call.id"] == e.call_id
            assert "gen_ai.tool.call.arguments" not in tool["attributes"]

    # Sent again, the same spans (same ids): Phoenix keeps one of each. With --content, a run's
    # spans carry what was said.
    again = agentor(
        "export",
        run.run_id,
        "--dir",
        str(store.directory),
        "--format",
        "otlp",
        "--endpoint",
        phoenix.url,
    )
    assert again.returncode == 0, again.stderr
    other = weather_agent(store=store).run("What is the weather in Bern?")
    done = agentor(
        "export",
        other.run_id,
        "--dir",
        str(store.directory),
        "--format",
        "otlp",
        "--endpoint",
        phoenix.url,
        "--content",
    )
    assert done.returncode == 0, done.stderr
    tool = next(s for s in phoenix.wait_spans(other.run_id, 4) if s["span_kind"] == "TOOL")
    assert tool["attributes"]["gen_ai.tool.call.result"] == "The weather in Bern is sunny and 22C."
    assert tool["attributes"]["gen_ai.tool.call.arguments"] == '{"city": "Bern"}'
    assert len(phoenix.spans(run.run_id)) == 5


class Lines:
    """A child's stdout, read line by line in a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def sent(self, run_id: str) -> int:
        pattern = re.compile(rf"sent (\d+) spans? of run {run_id}$")
        return sum(int(m.group(1)) for line in self.lines if (m := pattern.match(line)))


def follower(children: Children, phoenix: Phoenix) -> tuple[subprocess.Popen[str], Lines]:
    """`agentor trace` on the children's runs directory, sending to Phoenix."""
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "trace", str(children.runs_dir), "--endpoint", phoenix.url],
        cwd=ROOT,
        env=children.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    children.started.append(proc)
    lines = Lines(proc)
    wait_for(lambda: any(x.startswith("following ") for x in lines.lines), what="the follower")
    return proc, lines


def test_a_follower_sends_each_span_once_across_a_crash_a_resume_and_its_own_restart(
    phoenix: Phoenix, children: Children
) -> None:
    children.runs_dir.mkdir()
    first, said = follower(children, phoenix)
    writer = children.spawn(run_code("What is the weather in Oslo and Rome?"), BLOCK_CITY="Rome")
    run_id = only_run(children.runs_dir)
    trace = format(trace_id_of(run_id), "032x")
    # While the writer runs: the generation and Oslo's call are sent as they are saved.
    wait_for(lambda: said.sent(run_id) == 2, what="the first two spans")
    assert {s["name"] for s in phoenix.wait_spans(trace, 2)} == {
        "chat gpt-4o-mini",
        "execute_tool get_weather",
    }
    assert "Rome" in counted(children.count_file)

    children.kill(writer)  # SIGKILL inside Rome's call: the segment and the call were left open
    wait_for(lambda: said.sent(run_id) == 4, what="the interrupted segment")
    crashed = {s["context"]["span_id"]: s for s in phoenix.wait_spans(trace, 4)}
    segment = crashed[hex_id(run_id, 1)]
    assert segment["status_code"] == "ERROR"
    assert segment["attributes"]["error.type"] == "interrupted"
    rome = crashed[hex_id(run_id, 4)]
    assert rome["name"] == "execute_tool get_weather" and rome["status_code"] == "ERROR"

    # The follower dies too; the run is resumed in a new process while nobody follows it.
    os.kill(first.pid, 9)
    first.wait(timeout=10)
    children.run(RESUME, RUN_ID=run_id)
    assert log_types(children.runs_dir / f"{run_id}.jsonl")[5] == "run_start"

    second, said_again = follower(children, phoenix)
    wait_for(lambda: said_again.sent(run_id) == 5, what="the resumed segment")
    spans = phoenix.wait_spans(trace, 9)
    # Each span was sent once, by one of the two followers, and none was lost.
    assert said.sent(run_id) + said_again.sent(run_id) == len(spans) == 9
    roots = [s for s in spans if s["parent_id"] is None]
    assert sorted(s["context"]["span_id"] for s in roots) == sorted(
        [hex_id(run_id, 1), hex_id(run_id, 6)]
    )
    resumed = next(s for s in roots if s["context"]["span_id"] == hex_id(run_id, 6))
    assert resumed["attributes"]["agentor.status"] == "completed"
    assert resumed["attributes"]["agentor.segment"] == 2
    assert Counter(s["parent_id"] for s in spans)[hex_id(run_id, 6)] == 4
    second.terminate()
    assert second.wait(timeout=30) == 0


def test_a_fork_links_to_its_parents_span_at_the_fork_point(
    phoenix: Phoenix, weather_agent: WeatherAgents, tmp_path: Path
) -> None:
    store = FileStore(tmp_path / "runs")
    parent = weather_agent(store=store).run("What is the weather in Oslo and Rome?")
    events = events_of(store, parent.run_id)
    at = next(i for i, e in enumerate(events, 1) if e.type == "tool_result" and "Rome" in e.result)
    rome_call = next(
        i for i, e in enumerate(events, 1) if e.type == "tool_call" and e.args == {"city": "Rome"}
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    fork = weather_agent(store=store, tracing=tracer).fork(parent.run_id, at=at, result="snow")
    assert fork.status == "completed"
    inprocess.flush(30)

    # The SDK's own pipeline got the fork's spans, the first segment linked to Rome's call.
    got = {s.context.span_id: s for s in exporter.get_finished_spans()}
    first = next(s for s in got.values() if s.name.startswith("invoke_agent"))
    assert first.context.trace_id == trace_id_of(fork.run_id)
    [link] = first.links
    assert link.context.trace_id == trace_id_of(parent.run_id)
    assert link.context.span_id == span_id_of(parent.run_id, rome_call)
    assert {s.attributes["session.id"] for s in got.values()} == {parent.run_id}

    # Exported after the fact, the same spans (the same ids) reach Phoenix.
    for run_id in (parent.run_id, fork.run_id):
        done = agentor(
            "export",
            run_id,
            "--dir",
            str(store.directory),
            "--format",
            "otlp",
            "--endpoint",
            phoenix.url,
        )
        assert done.returncode == 0, done.stderr
    in_phoenix = phoenix.wait_spans(fork.run_id, len(got))
    assert {int(s["context"]["span_id"], 16) for s in in_phoenix} == set(got)
    parents = {s["context"]["span_id"]: s for s in phoenix.wait_spans(parent.run_id, 5)}
    root = next(s for s in in_phoenix if s["parent_id"] is None)
    pointed = parents[root["attributes"]["agentor.forked_from_span"]]
    assert pointed["name"] == "execute_tool get_weather"
    assert pointed["attributes"]["gen_ai.tool.call.id"] == events[rome_call - 1].call_id
    assert root["attributes"]["agentor.forked_from"] == parent.run_id


def test_tracing_in_process_reaches_phoenix(
    phoenix: Phoenix, weather_agent: WeatherAgents, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.url)
    agent = weather_agent(store=FileStore(tmp_path / "runs"), tracing=True, capture_content=True)
    run = agent.run("What is the weather in Lisbon?")
    assert inprocess.flush(30)
    spans = phoenix.wait_spans(run.run_id, 4)
    chat = next(
        s
        for s in spans
        if s["name"] == "chat gpt-4o-mini" and s["attributes"].get("gen_ai.input.messages")
    )
    assert "Lisbon" in chat["attributes"]["gen_ai.input.messages"]
    assert not inprocess.shared_queue().dropped


@pytest.fixture
def silent_collector() -> Iterator[dict[str, Any]]:
    """A collector that takes connections and never answers until the test is done."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    got = threading.Event()

    def accept() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            got.set()

    threading.Thread(target=accept, daemon=True).start()
    yield {"url": f"http://127.0.0.1:{server.getsockname()[1]}", "got": got, "held": held}
    server.close()
    for conn in held:
        conn.close()


def test_a_collector_that_is_down_or_silent_never_fails_or_holds_up_a_run(
    weather_agent: WeatherAgents,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    silent_collector: dict[str, Any],
) -> None:
    # Down (nothing listens): every run completes; its spans are dropped, counted, said once.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    agent = weather_agent(store=FileStore(tmp_path / "runs"), tracing=True)
    caplog.set_level(logging.WARNING, logger="agentor")
    runs = [agent.run(f"What is the weather in {city}?") for city in ("Oslo", "Rome", "Bern")]
    assert [r.status for r in runs] == ["completed"] * 3
    assert inprocess.flush(30)
    assert inprocess.shared_queue().dropped == 3 * 4
    said = [r for r in caplog.records if "spans are dropped" in r.getMessage()]
    assert len(said) == 1 and "Connection refused" in said[0].getMessage()

    # Silent (it takes the request and never answers): a run completes while it waits.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", silent_collector["url"])
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "600")
    silent = weather_agent(store=FileStore(tmp_path / "runs"), tracing=True)
    assert silent.run("What is the weather in Oslo?").status == "completed"
    assert silent_collector["got"].wait(60)  # the first spans are on their way, unanswered
    queue = inprocess.shared_queue()
    later = silent.run("What is the weather in Rome?")
    assert later.status == "completed"
    assert queue.sent == 0 and silent_collector["held"]  # still waiting for an answer


def test_a_follower_of_a_postgresql_store_sends_runs_as_they_are_written(
    phoenix: Phoenix, weather_agent: WeatherAgents, pg_stores: Any, tmp_path: Path
) -> None:
    store = pg_stores()
    before = weather_agent(store=store).run("What is the weather in Oslo?")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CLI,
            "trace",
            pg_stores.dsn,
            "--schema",
            pg_stores.schema,
            "--endpoint",
            phoenix.url,
            "--state",
            str(tmp_path / "sent.json"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    said = Lines(proc)
    try:
        wait_for(lambda: said.sent(before.run_id) == 4, what="the run written before")
        during = weather_agent(store=store).run("What is the weather in Rome and Bern?")
        wait_for(lambda: said.sent(during.run_id) == 5, what="the run written while following")
        spans = phoenix.wait_spans(during.run_id, 5)
        assert sorted(s["name"] for s in spans if s["parent_id"] is None) == [
            "invoke_agent Weather Agent"
        ]
        assert len(phoenix.wait_spans(before.run_id, 4)) == 4
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0, said.lines
