"""Code written for upstream Agentor 0.1.1 runs here unchanged: each behaviour checked against
what upstream itself sent and returned on the same fake server
(tests/fixtures/upstream-agentor-0.1.1-requests/observed.json), with the real openai client over
real HTTP."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentor import Agentor, ModelSettings, RunFailedError, function_tool
from agentor.engine.events import RUN_START, TOOL_DISABLED
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from agentor.tracing_setting import call_tracing
from tests import crashkit, structuredkit
from tests.openai_server import FakeOpenAI
from tests.structuredkit import Answer

OBSERVED = json.loads(
    (
        Path(__file__).parent / "fixtures" / "upstream-agentor-0.1.1-requests" / "observed.json"
    ).read_text()
)


def agent_on(srv: FakeOpenAI, **options: Any) -> Agentor:
    options.setdefault("api_key", "sk")
    return Agentor(name="s", model="gpt-4o-mini", base_url=srv.url, max_retries=0, **options)


# -- structured output -----------------------------------------------------------------------


def test_a_structured_run_sends_upstreams_response_format_and_returns_the_parsed_model() -> None:
    with FakeOpenAI([{"text": '{"answer": 42, "note": null}'}]) as srv:
        result = agent_on(srv, output_type=Answer).run("What is six times seven?")
        sent = srv.requests[0]
    upstream = copy.deepcopy(OBSERVED["structured_request"])
    # Upstream's, but for its `"default": null`, which the openai SDK's own strict schema
    # drops and so does this project (tests/test_structured_schema.py).
    upstream_note = upstream["response_format"]["json_schema"]["schema"]["properties"]["note"]
    assert upstream_note.pop("default") is None
    assert sent["response_format"] == upstream["response_format"]
    assert sent["messages"] == upstream["messages"]
    assert repr(result.final_output) == OBSERVED["structured_final"]


def test_a_dict_field_is_refused_when_the_agent_is_made_with_upstreams_error() -> None:
    class Mapped(BaseModel):
        d: dict[str, int]

    with pytest.raises(TypeError) as refused:
        Agentor(name="s", output_type=Mapped, api_key="sk")
    assert f"TypeError: {refused.value}" == OBSERVED["dict_field"]
    with pytest.raises(TypeError, match="must be a pydantic BaseModel"):
        Agentor(name="s", output_type=dict, api_key="sk")


def test_an_invalid_answer_with_no_retry_left_raises_value_error_as_upstream() -> None:
    with FakeOpenAI([{"text": '{"answer": "not-an-int"}'}]) as srv:
        agent = agent_on(srv, output_type=Answer, output_retries=0)
        with pytest.raises(ValueError) as raised:
            agent.run("What is six times seven?")
    assert OBSERVED["invalid_raises"].startswith("ValueError: Model output did not match Answer")
    assert str(raised.value).startswith("Model output did not match Answer")
    assert str(raised.value).endswith('Raw output: {"answer": "not-an-int"}')


def test_a_crashed_structured_run_resumed_in_another_process_gives_the_parsed_model(
    tmp_path: Path,
) -> None:
    zygote = crashkit.Zygote("tests.structuredkit")
    try:
        with FakeOpenAI(structuredkit.script) as srv:
            cfg = {"dir": str(tmp_path), "url": srv.url, "scenario": "structured"}
            assert zygote.run({**cfg, "kill_after": 8}) == 9  # SIGKILL before its run_end
            run_id = crashkit.only_run(tmp_path)
            asked = srv.calls
            # In this process, which never ran it: no model call, the parsed model back.
            agent = structuredkit.make_agent("structured", FileStore(tmp_path), srv.url)
            result = agent.resume(run_id)
            assert srv.calls == asked
    finally:
        zygote.close()
    assert result.status == "completed" and result.final_output == Answer(answer=42)
    assert agent.resume(run_id).final_output == Answer(answer=42)  # and once finished


# -- model settings --------------------------------------------------------------------------


def test_model_settings_are_sent_in_every_request_and_recorded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    upstream = OBSERVED["settings_request"]
    with caplog.at_level(logging.WARNING, logger="agentor"):
        settings = ModelSettings(
            temperature=0.3,
            top_p=0.9,
            max_tokens=50,
            seed=7,
            stop=["x"],
            metadata={"k": "v"},
            truncation="auto",
            logit_bias={"50256": -100},
            extra={"user": "u1"},
        )
    assert "ModelSettings.truncation has no chat-completions equivalent" in caplog.text
    script = [{"calls": [["get_time", {}]]}, {"text": "ok"}]

    @function_tool
    def get_time() -> str:
        """The time."""
        return "noon"

    with FakeOpenAI(script) as srv:
        agent = agent_on(srv, model_settings=settings, tools=[get_time], store=FileStore(tmp_path))
        result = agent.run("hi")
    sent = {k: v for k, v in upstream.items() if k not in ("model", "messages")}
    for request in srv.requests:  # every request, the tool turn's too
        assert {k: request.get(k) for k in sent} == sent
    start = FileStore(tmp_path).load(result.run_id)[0]
    assert start.type == RUN_START and start.settings == sent


def test_settings_beyond_the_client_are_sent_and_a_setting_given_twice_is_refused() -> None:
    with FakeOpenAI([{"text": "ok"}]) as srv:
        agent_on(srv, model_settings=ModelSettings(top_k=5, store=False)).run("hi")
        assert srv.requests[0]["top_k"] == 5 and srv.requests[0]["store"] is False
    with pytest.raises(ValueError, match="temperature given both"):
        Agentor(name="s", api_key="sk", model_settings=ModelSettings(temperature=1), temperature=0)


# -- tool failures ---------------------------------------------------------------------------


def normalized(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What upstream and we must agree on: the messages, and the tools offered by name."""
    return [
        {
            "messages": r["messages"],
            "tools": [t["function"]["name"] for t in r.get("tools") or []],
        }
        for r in requests
    ]


def test_a_failing_tool_is_withdrawn_as_upstream_withdraws_it(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    script = [{"calls": [["flaky", {"city": c}]]} for c in "ABC"] + [{"text": "done"}]
    with FakeOpenAI(script) as srv:
        agent = structuredkit.make_agent("flaky", FileStore(tmp_path / "runs"), srv.url, str(log))
        result = agent.run("go")
    assert result.final_output == OBSERVED["flaky_final"]
    assert normalized(srv.requests) == normalized(OBSERVED["flaky_requests"])
    assert crashkit.tool_runs(log) == {"flaky A": 1, "flaky B": 1}


FLAKY_KS = [7, 8, 9]  # after the second failure, after the notice, after the next generation


@pytest.mark.parametrize("k", FLAKY_KS, ids=[f"k{k}" for k in FLAKY_KS])
def test_the_withdrawal_survives_a_crash_and_a_resume_in_another_process(
    tmp_path: Path, k: int
) -> None:
    log = tmp_path / "tools.log"
    zygote = crashkit.Zygote("tests.structuredkit")
    try:
        with FakeOpenAI(structuredkit.script) as srv:
            cfg = {"dir": str(tmp_path), "url": srv.url, "scenario": "flaky", "tool_log": str(log)}
            assert zygote.run({**cfg, "kill_after": k}) == 9
            run_id = crashkit.only_run(tmp_path)
            out = tmp_path / "out.json"
            assert zygote.run({**cfg, "run_id": run_id, "out": str(out)}) is None
            assert json.loads(out.read_text())["final_output"] == "done"
            requests = srv.requests
    finally:
        zygote.close()
    assert crashkit.tool_runs(log) == {"flaky A": 1, "flaky B": 1}
    after = [r for r in requests if len([m for m in r["messages"] if m["role"] == "tool"]) >= 2]
    assert after and all("tools" not in r for r in after)
    notice = OBSERVED["flaky_requests"][2]["messages"][-1]
    assert all(notice in r["messages"] for r in after)
    events = FileStore(tmp_path).load(run_id)
    assert [e.name for e in events if e.type == TOOL_DISABLED] == ["flaky"]
    refused = [e for e in events if e.type == "tool_result" and e.args == {"city": "C"}]
    assert [e.error for e in refused] == ["tool 'flaky' is disabled after repeated failures."]


# -- batches and fallbacks -------------------------------------------------------------------


def test_a_batch_of_three_with_one_failing_prompt_keeps_the_order(tmp_path: Path) -> None:
    def echo(request: dict[str, Any]) -> dict[str, Any]:
        prompt = request["messages"][-1]["content"]
        if prompt == "bad":
            return {"status": 500, "message": "boom"}
        return {"text": "echo " + prompt}

    with FakeOpenAI(echo) as srv:
        agent = agent_on(srv, store=FileStore(tmp_path))
        results = asyncio.run(agent.arun(["one", "bad", "three"], limit_concurrency=2))
    upstream = OBSERVED["batch"]
    assert [r.final_output for r in (results[0], results[2])] == [upstream[0], upstream[2]]
    assert upstream[1].startswith("InternalServerError") and isinstance(results[1], RunFailedError)
    failed = results[1].result
    assert failed.status == "failed" and "500" in failed.error
    assert len({r.run_id for r in (results[0], failed, results[2])}) == 3  # each its own run


class Crowd:
    """A model whose answers wait until `limit` requests are in flight together (so the batch
    ran that many at once), counting the most ever in flight."""

    name = "crowd"

    def __init__(self, limit: int) -> None:
        self.limit, self.in_flight, self.most = limit, 0, 0
        self.full = asyncio.Event()

    async def generate(self, messages: Any, tools: Any, on_text: Any = None) -> Any:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        if self.in_flight == self.limit:
            self.full.set()
        await asyncio.wait_for(self.full.wait(), timeout=30)
        self.in_flight -= 1
        return ScriptedModel.text("echo " + messages[-1]["content"])


async def test_a_batch_runs_at_most_limit_concurrency_at_once() -> None:
    crowd = Crowd(limit=3)
    results = await Agentor(name="b", model=crowd).arun([f"p{i}" for i in range(7)], 3)
    assert crowd.most == 3
    assert [r.final_output for r in results] == [f"echo p{i}" for i in range(7)]


def test_a_fallback_model_answers_after_a_429_and_the_generation_says_so(tmp_path: Path) -> None:
    script = [{"status": 429, "message": "slow down"}, {"text": "from fallback"}]
    with FakeOpenAI(script) as srv:
        agent = agent_on(srv, store=FileStore(tmp_path))
        result = asyncio.run(agent.arun("hi", fallback_models=["gpt-4o"]))
        models = [r["model"] for r in srv.requests]
    assert [result.final_output, models] == OBSERVED["fallback"]
    gen = next(e for e in result.events if e.type == "generation")
    assert gen.model == "gpt-4o"
    assert gen.note.startswith("fallback: gpt-4o-mini: RateLimitError")
    assert len(FileStore(tmp_path).list_runs()) == 1  # one run, not one per model


# -- tracing, from_md, chat, and what is not offered -----------------------------------------


def test_tracing_is_accepted_on_the_agent_and_on_each_call(tmp_path: Path) -> None:
    """Upstream's `tracer=` and `tracing=`: here a tracer is an OpenTelemetry SDK tracer, and a
    call's `tracing` decides for that call: False none, True or None the agent's."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentor.telemetry import inprocess

    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    tracer = provider.get_tracer("test")
    replies = [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]
    with FakeOpenAI(replies) as srv:
        agent = agent_on(srv, store=FileStore(tmp_path), tracer=tracer)
        assert agent.tracing is tracer
        first = agent.run("hi", tracing=False)
        second = asyncio.run(agent.arun("hi", tracing=True))
        assert agent.resume(first.run_id, tracing=True).final_output == "a"  # settled: no call
        third = asyncio.run(agent.chat("hi"))
        fourth = agent.run("hi", tracing=False)
    assert (second.final_output, third.final_output, fourth.final_output) == ("b", "c", "d")
    assert inprocess.flush()
    traced = {s.attributes.get("gen_ai.conversation.id") for s in spans.get_finished_spans()}
    assert traced == {second.run_id, third.run_id}
    # Upstream's rule for a call: None keeps the agent's, False none, True the agent's tracer.
    assert call_tracing(tracer, None) is tracer
    assert call_tracing(tracer, False) is False
    assert call_tracing(tracer, True) is tracer
    assert call_tracing(None, True) is True
    other = object()
    assert call_tracing(tracer, other) is other


SAMPLE_MD = """---
name: Weather Agent
tools: ["get_weather", "gmail"]
model: gpt-4o
temperature: 0.3
---
You answer questions about the weather.
"""


def test_from_md_reads_the_name_model_temperature_and_instructions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "agent.md"
    path.write_text(SAMPLE_MD)
    with FakeOpenAI([{"text": "sunny"}]) as srv:
        with caplog.at_level(logging.WARNING, logger="agentor"):
            agent = Agentor.from_md(path, base_url=srv.url, api_key="sk", max_retries=0)
        assert "Ignoring unknown tools" in caplog.text and "get_weather, gmail" in caplog.text
        assert agent.name == "Weather Agent" and agent.model.name == "gpt-4o"
        agent.run("Weather in Oslo?")
        sent = srv.requests[0]
    assert sent["model"] == "gpt-4o" and sent["temperature"] == 0.3
    assert sent["messages"][0] == {
        "role": "system",
        "content": "You answer questions about the weather.",
    }
    with pytest.raises(FileNotFoundError):
        Agentor.from_md(tmp_path / "missing.md")
    (tmp_path / "nameless.md").write_text("---\nmodel: gpt-4o\n---\nHi\n")
    with pytest.raises(ValueError, match="Agent name is required"):
        Agentor.from_md(tmp_path / "nameless.md")


def test_what_is_not_offered_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    refusals = {
        "litellm": lambda: Agentor(name="a", model="anthropic/claude-4", api_key="sk"),
        "skills": lambda: Agentor(name="a", skills=["skills/x"], api_key="sk"),
        "celesto": lambda: Agentor(name="a", enable_tracing=True, api_key="sk"),
        "engine": lambda: Agentor(name="a", engine="openai-agents", api_key="sk"),
        "serve": lambda: Agentor(name="a", api_key="sk").serve(port=8000),
    }
    for what, make in refusals.items():
        with pytest.raises((ValueError, NotImplementedError)) as refused:
            make()
        message = str(refused.value)
        assert "\n" not in message, what
        assert "not offer" in message or "Unknown engine" in message, what
    # With an endpoint, a name with a slash is a model name there (vLLM, OpenRouter).
    assert Agentor(name="a", model="meta/llama", base_url="http://x/v1").model.name == "meta/llama"
