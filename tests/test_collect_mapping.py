"""How spans map to runs, for shapes the frameworks under test do not send: sub-agents, spans
without content, content sent as span events or log records, failures, older GenAI names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentor.cli import main as agentor_main
from agentor.collect import otlp_json
from agentor.collect.mapping import runs_from_spans
from tests.collectkit import collecting, post, run_logs
from tests.conftest import log_lines

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
T0 = 1_700_000_000_000_000_000


def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, str):
        return {"stringValue": value}
    return {"stringValue": json.dumps(value)}


def span(
    span_id: str,
    name: str,
    parent: str | None = None,
    at: int = 0,
    took: int = 1,
    attrs: dict[str, Any] | None = None,
    events: list[dict[str, Any]] | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": TRACE,
        "spanId": span_id,
        "name": name,
        "startTimeUnixNano": str(T0 + at * 1_000_000),
        "endTimeUnixNano": str(T0 + (at + took) * 1_000_000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in (attrs or {}).items()],
    }
    if parent:
        out["parentSpanId"] = parent
    if events:
        out["events"] = events
    if error:
        out["status"] = {"code": 2, "message": error}
    return out


def request(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "tests"}, "spans": list(spans)}]}]}


def runs(*spans: dict[str, Any]) -> dict[str, Any]:
    found, _ = runs_from_spans(otlp_json.decode_traces(request(*spans)))
    return {r.run_id: r for r in found}


def agent(span_id: str, name: str, parent: str | None = None, **kw: Any) -> dict[str, Any]:
    attrs = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
    return span(span_id, f"invoke_agent {name}", parent, attrs=attrs, **kw)


def chat(span_id: str, parent: str, **attrs: Any) -> dict[str, Any]:
    at = attrs.pop("at", 1)
    return span(span_id, "chat m", parent, at=at, attrs={"gen_ai.operation.name": "chat", **attrs})


def tool(span_id: str, parent: str, name: str, **attrs: Any) -> dict[str, Any]:
    at = attrs.pop("at", 2)
    base = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    return span(span_id, f"execute_tool {name}", parent, at=at, attrs={**base, **attrs})


def test_an_agent_run_inside_another_is_its_own_run_linked_to_its_parent() -> None:
    found = runs(
        agent("a000000000000001", "planner", took=100),
        chat("c000000000000001", "a000000000000001", at=1),
        tool("d000000000000001", "a000000000000001", "ask_researcher", at=5, took=50),
        agent("a000000000000002", "researcher", "d000000000000001", at=6, took=40),
        chat("c000000000000002", "a000000000000002", at=7),
    )
    (planner,) = [r for r in found.values() if r.events[0].agent == "planner"]
    (researcher,) = [r for r in found.values() if r.events[0].agent == "researcher"]
    assert researcher.events[0].forked_from == planner.run_id
    assert planner.events[0].forked_from is None
    assert [e.type for e in planner.events] == [
        "run_start", "generation", "tool_call", "tool_result", "run_end",
    ]  # fmt: skip
    assert [e.type for e in researcher.events] == ["run_start", "generation", "run_end"]


def test_a_run_whose_spans_carry_no_content_says_how_to_turn_it_on_and_keeps_what_it_has() -> None:
    (run,) = runs(
        agent("a000000000000001", "quiet", took=10),
        chat("c000000000000001", "a000000000000001", **{
            "gen_ai.request.model": "gpt-4o-mini",
            "gen_ai.usage.prompt_tokens": 11,
            "gen_ai.usage.completion_tokens": 4,
        }),
    ).values()  # fmt: skip
    start, generation, end = run.events
    assert start.note is not None
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in start.note
    assert generation.messages is None and generation.model == "gpt-4o-mini"
    assert (generation.usage.input_tokens, generation.usage.output_tokens) == (11, 4)
    assert end.usage.total_tokens == 15 and end.status == "completed"


def test_content_in_a_span_event_is_read() -> None:
    details = {
        "name": "gen_ai.client.inference.operation.details",
        "timeUnixNano": str(T0),
        "attributes": [
            {"key": "gen_ai.input.messages", "value": _value(
                [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
            )},
            {"key": "gen_ai.output.messages", "value": _value(
                [{"role": "assistant", "parts": [{"type": "text", "content": "hello"}],
                  "finish_reason": "stop"}]
            )},
        ],
    }  # fmt: skip
    (run,) = runs(
        agent("a000000000000001", "evented", took=10),
        span(
            "c000000000000001",
            "chat m",
            "a000000000000001",
            at=1,
            attrs={"gen_ai.operation.name": "chat"},
            events=[details],
        ),
    ).values()
    start, generation, end = run.events
    assert start.messages == [{"role": "user", "content": "hi"}]
    assert generation.text == "hello" and generation.extra["finish_reasons"] == ["stop"]
    assert end.text == "hello"


def test_a_failed_agent_span_is_a_failed_run_with_its_error() -> None:
    exception = {
        "name": "exception",
        "timeUnixNano": str(T0),
        "attributes": [
            {"key": "exception.type", "value": _value("RateLimitError")},
            {"key": "exception.message", "value": _value("slow down")},
        ],
    }
    (run,) = runs(
        agent("a000000000000001", "unlucky", took=10, events=[exception], error="boom"),
        chat("c000000000000001", "a000000000000001"),
    ).values()
    end = run.events[-1]
    assert (end.status, end.error, end.text) == ("failed", "RateLimitError: slow down", None)


def test_content_sent_as_a_log_record_before_its_span_joins_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = {
        "resourceLogs": [
            {
                "scopeLogs": [
                    {
                        "logRecords": [
                            {
                                "traceId": TRACE,
                                "spanId": "c000000000000001",
                                "timeUnixNano": str(T0),
                                "eventName": "gen_ai.client.inference.operation.details",
                                "attributes": [
                                    {
                                        "key": "gen_ai.input.messages",
                                        "value": _value(
                                            [
                                                {
                                                    "role": "user",
                                                    "parts": [{"type": "text", "content": "hi"}],
                                                }
                                            ]
                                        ),
                                    }
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    traces = request(
        agent("a000000000000001", "logged", took=10),
        chat("c000000000000001", "a000000000000001"),
    )
    store = tmp_path / "runs"
    with collecting(store) as collector:
        assert (
            post(collector.endpoint, json.dumps(logs).encode(), "application/json", "/v1/logs")[0]
            == 200
        )
        assert post(collector.endpoint, json.dumps(traces).encode(), "application/json")[0] == 200
    (log,) = run_logs(store)
    start = log_lines(log)[0]
    assert start["messages"] == [{"role": "user", "content": "hi"}]
    assert "note" not in start
    capsys.readouterr()
    assert agentor_main(["ls", str(store), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["first_prompt"] == "hi"


def test_chat_spans_with_no_agent_span_are_one_run_of_their_trace() -> None:
    (run,) = runs(
        span("c000000000000001", "chat m", at=1, attrs={"gen_ai.operation.name": "chat"}),
        span("c000000000000002", "chat m", at=5, attrs={"gen_ai.operation.name": "chat"}),
    ).values()
    assert [e.type for e in run.events] == ["run_start", "generation", "generation", "run_end"]
    assert run.events[0].agent == "(no agent span)" and run.finished
