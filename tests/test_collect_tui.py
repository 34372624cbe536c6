"""`agentor-tui STORE --collect PORT` in a real terminal (tmux): a framework's run appears as
its spans arrive, its timeline grows, and it turns completed when its agent span comes."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.collectkit import CaptureServer, joined, post, run_emitter, split_request
from tests.openai_server import FakeOpenAI
from tests.test_tui_process import SCRIPT, Terminal, terminal, wait

__all__ = ["terminal"]


@pytest.fixture(scope="module")
def pydantic_ai_run() -> bytes:
    with FakeOpenAI() as model, CaptureServer() as capture:
        run_emitter("pydantic_ai_agent.py", model.url, capture.endpoint, "Weather in Oslo?")
    return joined(capture.trace_bodies())


def _attribute(span: Any, key: str) -> str:
    return next((kv.value.string_value for kv in span.attributes if kv.key == key), "")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_collected_run_appears_grows_and_completes_on_screen(
    tmp_path: Path, terminal: Terminal, pydantic_ai_run: bytes
) -> None:
    agent, steps = split_request(
        pydantic_ai_run, lambda s: _attribute(s, "gen_ai.operation.name") == "invoke_agent"
    )
    chats = sorted(
        (s.start_time_unix_nano for s in _spans(steps) if s.name.startswith("chat")),
    )
    first_turn, last_chat = split_request(steps, lambda s: s.start_time_unix_nano < chats[-1])
    store = tmp_path / "runs"
    store.mkdir()
    port = _free_port()
    terminal.start(f"{SCRIPT} {store} --collect {port}", {})
    endpoint = f"http://127.0.0.1:{port}"
    wait(lambda: f"OTLP {endpoint}" in terminal.screen(), 30, "the receiver's address")

    assert post(endpoint, first_turn)[0] == 200
    wait(lambda: re.search(r"running\s+\w{8}\s+weather", terminal.screen()), 30, "a running row")
    terminal.keys("Enter")
    before = wait(lambda: _timeline_count(terminal.screen()), 30, "the timeline")
    assert post(endpoint, last_chat)[0] == 200
    wait(lambda: (_timeline_count(terminal.screen()) or 0) > before, 30, "the timeline to grow")
    assert post(endpoint, agent)[0] == 200
    wait(lambda: "completed" in terminal.screen(), 30, "the run completed")
    screen = terminal.screen()
    assert "run_end" in screen and "Weather in Oslo?" in screen
    terminal.keys("Home")  # the run_start's detail says where the run came from
    wait(lambda: re.search(r"from\s+pydantic-ai \S+ over OTLP", terminal.screen()), 30, "from")


def _timeline_count(screen: str) -> int | None:
    found = re.search(r"Timeline · \w{8} · (\d+) lines", screen)
    return int(found.group(1)) if found else None


def _spans(body: bytes) -> list[Any]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
