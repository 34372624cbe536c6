"""`agentor collect`: a real framework's spans, exported by the real OTLP exporter to a real
receiver process, become ordinary runs of the store (docs/collect.md).

pydantic-ai runs as its users run it (`agent.instrument = True`, the GenAI conventions, content
in attributes) against the tests' OpenAI-compatible server, in its own venv (`make emitters`).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from agentor.cli import main as agentor_main
from agentor.engine.store.file import FileStore
from tests.collectkit import (
    CaptureServer,
    collected_live,
    collecting,
    joined,
    post,
    proto_to_json,
    run_emitter,
    run_logs,
    split_request,
    wait_for_runs,
)
from tests.conftest import log_lines, wait_for
from tests.openai_server import FakeOpenAI

PROMPT = "Weather in Oslo and Paris?"


@pytest.fixture(scope="module")
def model() -> Any:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture(scope="module")
def captured(model: FakeOpenAI) -> dict[str, Any]:
    """One pydantic-ai run's spans as its exporter sent them, and what the run did."""
    with CaptureServer() as capture:
        emitted = run_emitter("pydantic_ai_agent.py", model.url, capture.endpoint, PROMPT)
    bodies = capture.trace_bodies()
    assert bodies, "the exporter sent nothing"
    return {"emitted": emitted, "body": joined(bodies)}


def ls_json(store: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert agentor_main(["ls", str(store), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def show_json(store: Path, run_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert agentor_main(["show", run_id, "--store", str(store), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_pydantic_ai_run_exported_live_is_a_completed_run_of_the_store(
    tmp_path: Path, model: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs"
    with collecting(store) as collector:
        emitted = run_emitter("pydantic_ai_agent.py", model.url, collector.endpoint, PROMPT)
        (log,) = wait_for_runs(store, 1)
        wait_for(lambda: log_lines(log) and log_lines(log)[-1]["type"] == "run_end", 30, "end")
        status, out, err = collector.stop()
    assert status == 0, err
    assert "spans in" in out
    lines = log_lines(log)
    start, end = lines[0], lines[-1]
    assert start["type"] == "run_start" and start["agent"] == "weather"
    assert start["model"] == "gpt-4o-mini"
    assert start["source"]["kind"] == "otlp" and start["source"]["framework"] == "pydantic-ai"
    assert start["source"]["service"] == "weather-service"
    assert start["messages"] == [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": PROMPT},
    ]
    assert [t["function"]["name"] for t in start["tools"]] == ["get_weather"]
    results = [e for e in lines if e["type"] == "tool_result"]
    assert len(results) == emitted.tool_calls == 3
    assert sorted(r["result"] for r in results) == sorted(
        f"Sunny in {c}" for c in ("Weather", "Oslo", "Paris")
    )
    generations = [e for e in lines if e["type"] == "generation"]
    assert end["status"] == "completed" and end["text"] == emitted.output
    # The run's tokens are the sum of its chat spans' (the server's usage, as reported).
    total = sum(g["usage"]["total_tokens"] for g in generations)
    assert end["usage"]["total_tokens"] == total > 0
    (row,) = ls_json(store, capsys)
    assert row["status"] == "completed" and row["agent"] == "weather"
    assert row["total_tokens"] == total and row["tool_calls"] == 3
    assert row["first_prompt"] == PROMPT
    shown = show_json(store, row["run_id"], capsys)
    assert shown["final_output"] == emitted.output


def test_the_same_spans_sent_twice_are_one_run_with_the_same_events(
    tmp_path: Path, captured: dict[str, Any]
) -> None:
    store = tmp_path / "runs"
    with collecting(store) as collector:
        assert post(collector.endpoint, captured["body"])[0] == 200
        (log,) = run_logs(store)
        first = log.read_bytes()
        assert post(collector.endpoint, captured["body"])[0] == 200
        assert post(collector.endpoint, captured["body"], zipped=True)[0] == 200
    assert run_logs(store) == [log]
    assert log.read_bytes() == first


def test_otlp_json_with_hex_ids_gives_the_run_protobuf_gives(
    tmp_path: Path, captured: dict[str, Any]
) -> None:
    by_proto, by_json = tmp_path / "proto", tmp_path / "json"
    with collecting(by_proto) as collector:
        assert post(collector.endpoint, captured["body"]) == (200, b"")
    with collecting(by_json) as collector:
        status, answer = post(
            collector.endpoint, proto_to_json(captured["body"]), "application/json"
        )
        assert (status, answer) == (200, b"{}")
    (proto_log,) = run_logs(by_proto)
    (json_log,) = run_logs(by_json)
    assert proto_log.name == json_log.name
    assert log_lines(proto_log) == log_lines(json_log)


def _is_agent_span(span: Any) -> bool:
    return any(
        kv.key == "gen_ai.operation.name" and kv.value.string_value == "invoke_agent"
        for kv in span.attributes
    )


def test_a_run_whose_agent_span_has_not_come_is_running_then_completed(
    tmp_path: Path, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    agent_part, steps = split_request(captured["body"], _is_agent_span)
    store = tmp_path / "runs"
    with collecting(store) as collector:
        assert post(collector.endpoint, steps)[0] == 200
        (row,) = ls_json(store, capsys)
        assert row["status"] == "running"
        assert post(collector.endpoint, agent_part)[0] == 200
        (row,) = ls_json(store, capsys)
        assert row["status"] == "completed" and row["agent"] == "weather"
        collector.stop()
    # The run is the one a single request makes.
    whole = tmp_path / "whole"
    with collecting(whole) as collector:
        post(collector.endpoint, captured["body"])
    assert log_lines(run_logs(store)[0]) == log_lines(run_logs(whole)[0])


def test_a_run_left_unfinished_by_a_receiver_that_stops_is_interrupted(
    tmp_path: Path, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _, steps = split_request(captured["body"], _is_agent_span)
    store = tmp_path / "runs"
    with collecting(store) as collector:
        post(collector.endpoint, steps)
        assert collector.stop()[0] == 0
    (row,) = ls_json(store, capsys)
    assert row["status"] == "interrupted"


def test_a_receiver_killed_between_requests_loses_nothing_it_acknowledged_and_adds_nothing_twice(
    tmp_path: Path, captured: dict[str, Any]
) -> None:
    agent_part, steps = split_request(captured["body"], _is_agent_span)
    store = tmp_path / "runs"
    with collecting(store) as collector:
        assert post(collector.endpoint, steps)[0] == 200
        os.kill(collector.proc.pid, signal.SIGKILL)
        collector.proc.wait(30)
    (log,) = run_logs(store)
    acknowledged = log_lines(log)
    assert [e["type"] for e in acknowledged].count("tool_result") == 3
    with collecting(store) as collector:  # the exporter's retry, then the rest
        assert post(collector.endpoint, steps)[0] == 200
        assert post(collector.endpoint, agent_part)[0] == 200
    lines = log_lines(log)
    assert [e["type"] for e in lines].count("tool_result") == 3
    assert lines[-1]["status"] == "completed"
    assert lines == [*acknowledged, lines[-1]]


@pytest.mark.parametrize(
    ("body", "content_type", "status", "says"),
    [
        (b"\xff\xff\xff not protobuf", "application/x-protobuf", 400, b""),
        (b"{not json", "application/json", 400, b"not JSON"),
        (b'{"resourceSpans": {"x": 1}}', "application/json", 400, b"must be a list"),
        (b"<xml/>", "text/xml", 415, b"unsupported Content-Type"),
    ],
)
def test_a_body_the_receiver_cannot_take_is_refused_and_writes_nothing(
    tmp_path: Path, body: bytes, content_type: str, status: int, says: bytes
) -> None:
    store = tmp_path / "runs"
    with collecting(store) as collector:
        got, answer = post(collector.endpoint, body, content_type)
    assert got == status
    assert says in answer
    assert run_logs(store) == []
    assert list((store / ".collect").iterdir()) == []


def test_a_body_over_the_limit_is_413_before_it_is_read(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    with collecting(store, "--max-body", "1") as collector:
        got, answer = post(collector.endpoint, b"{" + b" " * (2 << 20) + b"}", "application/json")
        zipped, _ = post(
            collector.endpoint, b"{" + b" " * (3 << 20) + b"}", "application/json", zipped=True
        )
    assert got == 413 and b"over" in answer
    assert zipped == 413
    assert run_logs(store) == []


def test_away_from_loopback_a_token_is_required_and_checked(
    tmp_path: Path, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert agentor_main(["collect", str(tmp_path / "r"), "--host", "0.0.0.0"]) == 2
    assert "give a token" in capsys.readouterr().err
    assert agentor_main(["collect", str(tmp_path / "r"), "--token", "short"]) == 2
    assert "at least 16 characters" in capsys.readouterr().err
    token = "t0ken-of-the-tests-0123456789"
    store = tmp_path / "runs"
    with collecting(store, "--token", token) as collector:
        assert token not in collector.start_line
        assert post(collector.endpoint, captured["body"])[0] == 401
        bad = {"Authorization": "Bearer " + token[:-1] + "x"}
        assert post(collector.endpoint, captured["body"], headers=bad)[0] == 401
        assert run_logs(store) == []
        good = {"Authorization": f"Bearer {token}"}
        assert post(collector.endpoint, captured["body"], headers=good)[0] == 200
        _, out, err = collector.stop()
    assert token not in out + err
    assert len(run_logs(store)) == 1


def test_spans_that_are_no_agents_steps_are_counted_and_dropped(tmp_path: Path) -> None:
    doc = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "name": "GET /health",
                                "startTimeUnixNano": "1700000000000000000",
                                "endTimeUnixNano": "1700000000100000000",
                            }
                        ]
                    }
                ]
            }
        ]
    }
    store = tmp_path / "runs"
    with collecting(store) as collector:
        assert post(collector.endpoint, json.dumps(doc).encode(), "application/json")[0] == 200
        _, out, _ = collector.stop()
    assert run_logs(store) == []
    assert "1 spans in 1 requests, 0 runs, 1 spans no agent's step" in out


def test_a_collected_run_is_read_by_the_stores_own_reader(
    tmp_path: Path, captured: dict[str, Any]
) -> None:
    store = tmp_path / "runs"
    with collecting(store) as collector:
        post(collector.endpoint, captured["body"])
    (log,) = run_logs(store)
    events = FileStore(store).load(log.stem)
    assert [e.type for e in events][:2] == ["run_start", "generation"]
    assert events[1].messages and events[1].messages[-1]["content"] == PROMPT


def test_an_openai_agents_sdk_run_with_openinference_is_one_run_without_its_workflow_wrapper(
    tmp_path: Path, model: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs"
    emitted, log = collected_live(store, "openai_agents_agent.py", model.url, PROMPT)
    assert run_logs(store) == [log]  # the "Agent workflow" around the agent is not a run
    lines = log_lines(log)
    start, end = lines[0], lines[-1]
    assert start["agent"] == "Weather agent" and start["model"] == "gpt-4o-mini"
    assert start["source"]["framework"] == "openinference.instrumentation.openai_agents"
    assert start["messages"] == [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": PROMPT},
    ]
    # The tools are rebuilt from the tool spans: a replay offers the model the same tool.
    (tool,) = start["tools"]
    assert tool["function"]["name"] == "get_weather"
    assert tool["function"]["parameters"]["required"] == ["city"]
    generations = [e for e in lines if e["type"] == "generation"]
    calls = [c["id"] for g in generations for c in g.get("calls") or []]
    results = [e for e in lines if e["type"] == "tool_result"]
    assert len(results) == emitted.tool_calls == 3
    # OpenInference's tool spans name no call: each answers the call it ran for.
    assert sorted(r["call_id"] for r in results) == sorted(calls)
    assert end["status"] == "completed" and end["text"] == emitted.output
    assert end["usage"]["total_tokens"] == sum(g["usage"]["total_tokens"] for g in generations)
    (row,) = ls_json(store, capsys)
    assert (row["status"], row["agent"], row["tool_calls"]) == ("completed", "Weather agent", 3)


def test_a_collected_run_replayed_with_another_model_runs_no_tool_and_sends_the_recorded_results(
    tmp_path: Path,
    captured: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = tmp_path / "runs"
    path = tmp_path / "spans.binpb"
    path.write_bytes(captured["body"])
    assert agentor_main(["import", str(path), "--store", str(store)]) == 0
    (log,) = run_logs(store)
    recorded = {e["call_id"]: e["result"] for e in log_lines(log) if e["type"] == "tool_result"}
    with FakeOpenAI() as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        capsys.readouterr()
        status = agentor_main(
            ["replay", log.stem, "--model", "gpt-4.1-mini", "--store", str(store)]
        )
        out = capsys.readouterr().out
        assert status == 0, out
        first, second = other.requests
    assert first["model"] == "gpt-4.1-mini"
    assert first["messages"] == [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": PROMPT},
    ]
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    sent = {m["tool_call_id"]: m["content"] for m in second["messages"] if m["role"] == "tool"}
    # Each call the new model made was one the run made: answered with the recorded result.
    assert sorted(sent.values()) == sorted(recorded.values())
    replay_id = out.split()[1]
    replayed = log_lines(store / f"{replay_id}.jsonl")
    results = [e for e in replayed if e["type"] == "tool_result" and "replayed_from" in e]
    assert len(results) == 3 and all("error" not in e for e in results)
    assert replayed[-1]["status"] == "completed"


def test_resume_and_fork_with_an_agent_are_refused_for_a_collected_run(
    tmp_path: Path, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs"
    path = tmp_path / "spans.binpb"
    path.write_bytes(captured["body"])
    assert agentor_main(["import", str(path), "--store", str(store)]) == 0
    (log,) = run_logs(store)
    before = log.read_bytes()
    agent = "examples/weather.py:agent"
    for argv in (
        ["resume", log.stem, "--store", str(store), "--agent", agent],
        ["fork", log.stem, "--store", str(store), "--agent", agent, "--any-agent"],
    ):
        capsys.readouterr()
        assert agentor_main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "collected (pydantic-ai over OTLP)" in err
    capsys.readouterr()
    assert (
        agentor_main(["replay", log.stem, "--model", "m", "--store", str(store), "--novel", "run"])
        == 2
    )
    assert "--novel run needs --agent" in capsys.readouterr().err
    assert run_logs(store) == [log] and log.read_bytes() == before


def test_spans_collected_into_postgresql_are_a_run_its_readers_list(
    tmp_path: Path,
    captured: dict[str, Any],
    pg_stores: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    agent_part, steps = split_request(captured["body"], _is_agent_span)
    dsn, schema = pg_stores.dsn, pg_stores.schema
    with collecting(dsn, "--schema", schema) as collector:
        assert post(collector.endpoint, steps)[0] == 200
        assert post(collector.endpoint, steps)[0] == 200  # a retry
        capsys.readouterr()
        assert agentor_main(["ls", dsn, "--schema", schema, "--json"]) == 0
        (row,) = json.loads(capsys.readouterr().out)
        assert row["status"] == "running"
        assert post(collector.endpoint, agent_part)[0] == 200
    capsys.readouterr()
    assert agentor_main(["ls", dsn, "--schema", schema, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["status"], row["agent"], row["tool_calls"]) == ("completed", "weather", 3)
    events = pg_stores().load(row["run_id"])
    whole = tmp_path / "whole"
    with collecting(whole) as collector:
        post(collector.endpoint, captured["body"])
    expected = FileStore(whole).load(run_logs(whole)[0].stem)
    assert [e.to_dict() for e in events] == [e.to_dict() for e in expected]


def test_a_receiver_killed_mid_request_acknowledged_nothing_and_the_retry_makes_one_run(
    tmp_path: Path, captured: dict[str, Any]
) -> None:
    import socket

    store = tmp_path / "runs"
    body = captured["body"]
    with collecting(store) as collector:
        host, port = collector.endpoint.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=30) as conn:
            head = (
                f"POST /v1/traces HTTP/1.1\r\nHost: {host}\r\n"
                f"Content-Type: application/x-protobuf\r\nContent-Length: {len(body)}\r\n\r\n"
            )
            conn.sendall(head.encode() + body[: len(body) // 2])
            os.kill(collector.proc.pid, signal.SIGKILL)
            collector.proc.wait(30)
            try:  # no answer: the exporter will retry
                assert conn.recv(100) == b""
            except ConnectionResetError:
                pass
    assert run_logs(store) == []
    with collecting(store) as collector:
        assert post(collector.endpoint, body)[0] == 200
        assert post(collector.endpoint, body)[0] == 200
    (log,) = run_logs(store)
    lines = log_lines(log)
    assert [e["type"] for e in lines].count("tool_result") == 3
    assert lines[-1]["status"] == "completed"


def test_otlp_over_grpc_gives_the_run_http_gives_and_checks_the_token(
    tmp_path: Path, captured: dict[str, Any]
) -> None:
    import grpc
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

    request = trace_service_pb2.ExportTraceServiceRequest()
    request.ParseFromString(captured["body"])
    token = "t0ken-of-the-tests-0123456789"
    store = tmp_path / "grpc"
    with collecting(store, "--grpc-port", "0", "--token", token) as collector:
        address = collector.start_line.split("OTLP/gRPC on http://", 1)[1].split(" ", 1)[0]
        with grpc.insecure_channel(address) as channel:
            export = trace_service_pb2_grpc.TraceServiceStub(channel).Export
            with pytest.raises(grpc.RpcError) as refused:
                export(request, timeout=30)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert run_logs(store) == []
            export(request, timeout=30, metadata=[("authorization", f"Bearer {token}")])
            export(request, timeout=30, metadata=[("authorization", f"Bearer {token}")])
    whole = tmp_path / "http"
    with collecting(whole) as collector:
        post(collector.endpoint, captured["body"])
    (by_grpc,) = run_logs(store)
    (by_http,) = run_logs(whole)
    assert by_grpc.name == by_http.name and log_lines(by_grpc) == log_lines(by_http)


def test_a_langgraph_agent_with_openinference_is_one_run_not_one_per_graph_node(
    tmp_path: Path, model: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs"
    emitted, log = collected_live(store, "langgraph_agent.py", model.url, PROMPT)
    assert run_logs(store) == [log]  # each node of the graph is marked AGENT: no run of its own
    lines = log_lines(log)
    start, end = lines[0], lines[-1]
    assert (start["agent"], start["model"]) == ("weather", "gpt-4o-mini")
    assert start["messages"][-1] == {"role": "user", "content": PROMPT}
    calls = {c["id"]: c for g in lines if g["type"] == "generation" for c in g.get("calls") or []}
    results = [e for e in lines if e["type"] == "tool_result"]
    assert len(results) == emitted.tool_calls == 3
    for result in results:  # LangChain records a tool's input as text: the asked arguments
        asked = calls[result["call_id"]]["function"]["arguments"]
        assert result["args"] == json.loads(asked)
        assert result["result"] == f"Sunny in {result['args']['city']}"
    assert end["status"] == "completed" and end["text"] == emitted.output
    (row,) = ls_json(store, capsys)
    assert (row["status"], row["agent"], row["tool_calls"]) == ("completed", "weather", 3)


def test_a_run_no_span_came_for_longer_than_idle_is_interrupted_while_the_receiver_runs(
    tmp_path: Path, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    agent_part, steps = split_request(captured["body"], _is_agent_span)
    store = tmp_path / "runs"
    with collecting(store, "--idle", "3") as collector:
        assert post(collector.endpoint, steps)[0] == 200
        assert ls_json(store, capsys)[0]["status"] == "running"
        wait_for(lambda: ls_json(store, capsys)[0]["status"] == "interrupted", 30, "let go")
        assert collector.proc.poll() is None  # still receiving
        assert post(collector.endpoint, agent_part)[0] == 200  # a late agent span still lands
        assert ls_json(store, capsys)[0]["status"] == "completed"
