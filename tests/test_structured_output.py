"""Structured output beyond upstream: an invalid answer is recorded and asked again with what was
wrong, in a crash too; retries used up fail the run (and `run` raises ValueError, as upstream);
a resume gives more tries; a fork changes the prompt. Real openai client over HTTP against the
fake server; crashes are SIGKILLs of real processes (tests/structuredkit.py)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, OutputValidationError
from agentor.engine.events import INVALID_OUTPUT, RUN_END, RUN_START
from agentor.engine.store.file import FileStore
from agentor.engine.structured import response_format
from agentor.testing import ScriptedModel
from tests import crashkit, structuredkit
from tests.openai_server import FakeOpenAI
from tests.structuredkit import CORRECTION_START, INVALID, VALID, Answer, make_agent

PROMPT = structuredkit.PROMPTS["structured"]


@pytest.fixture
def srv():
    with FakeOpenAI(structuredkit.script) as server:
        yield server


def corrections(srv: FakeOpenAI) -> list[dict[str, Any]]:
    """The requests that asked the model again after an invalid answer."""
    return [
        r
        for r in srv.requests
        if str(r["messages"][-1].get("content", "")).startswith(CORRECTION_START)
    ]


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def test_an_invalid_answer_is_recorded_and_the_model_is_asked_again_with_what_was_wrong(
    tmp_path: Path, srv: FakeOpenAI
) -> None:
    agent = make_agent("structured", FileStore(tmp_path), srv.url)
    result = agent.run(PROMPT)
    assert result.status == "completed"
    assert result.final_output == Answer(answer=42, note=None)
    events = FileStore(tmp_path).load(result.run_id)
    assert types(events) == [
        "run_start",
        "generation",
        "tool_call",
        "tool_result",
        "generation",
        "invalid_output",
        "generation",
        "message",
        "run_end",
    ]
    invalid = events[5]
    assert invalid.text == INVALID
    assert invalid.error.startswith("the answer does not match Answer: answer: Input should be")
    # The retry holds the bad answer, then the correction naming the field and the problem.
    retry = srv.requests[-1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": INVALID}
    assert retry[-1] == invalid.messages[0]
    assert "- answer: Input should be a valid integer" in retry[-1]["content"]
    assert "(got 'not-an-int')" in retry[-1]["content"]
    # The log keeps the raw text; the run_start records the output type and its retries.
    assert events[-1].text == VALID and events[-2].text == VALID
    assert events[0].output == {"type": "Answer", "retries": 1}
    assert events[0].settings["response_format"] == response_format(Answer)
    assert srv.requests[0]["response_format"] == response_format(Answer)


def always_invalid(request: dict[str, Any]) -> dict[str, Any]:
    return {"text": INVALID}


def test_retries_used_up_fail_the_run_with_the_error_and_run_raises_value_error(
    tmp_path: Path, srv: FakeOpenAI
) -> None:
    srv.script = always_invalid
    agent = make_agent("structured", FileStore(tmp_path), srv.url, output_retries=2)
    with pytest.raises(ValueError) as raised:
        agent.run(PROMPT)
    assert isinstance(raised.value, OutputValidationError)
    assert raised.value.raw == INVALID
    assert str(raised.value).startswith("Model output did not match Answer (run ")
    events = FileStore(tmp_path).load(raised.value.run_id)
    assert srv.calls == 3  # the answer and two retries
    assert types(events).count(INVALID_OUTPUT) == 3
    end = events[-1]
    assert end.type == RUN_END and end.status == "failed"
    assert end.error == events[-2].error and "answer: Input should be" in end.error


def test_a_resume_of_a_failed_structured_run_gives_it_output_retries_more_tries(
    tmp_path: Path, srv: FakeOpenAI
) -> None:
    srv.script = always_invalid
    agent = make_agent("structured", FileStore(tmp_path), srv.url)
    with pytest.raises(OutputValidationError) as raised:
        agent.run(PROMPT)
    run_id = raised.value.run_id
    assert srv.calls == 2
    # Still invalid: one more try (output_retries=1), sent the error, then failed again.
    with pytest.raises(OutputValidationError):
        agent.resume(run_id)
    assert srv.calls == 3 and len(corrections(srv)) == 2
    # Now the model gets it right: the resume asks again with the error and completes.
    srv.script = structuredkit.script
    result = agent.resume(run_id)
    assert result.final_output == Answer(answer=42)
    assert srv.calls == 4 and len(corrections(srv)) == 3
    events = FileStore(tmp_path).load(run_id)
    assert [e.status for e in events if e.type == RUN_END] == ["failed", "failed", "completed"]
    # A finished structured run comes back parsed, without a model call.
    again = make_agent("structured", FileStore(tmp_path), srv.url).resume(run_id)
    assert again.final_output == Answer(answer=42) and srv.calls == 4


def test_a_fork_of_a_failed_structured_run_can_change_the_prompt(
    tmp_path: Path, srv: FakeOpenAI
) -> None:
    def by_prompt(request: dict[str, Any]) -> dict[str, Any]:
        prompt = request["messages"][0]["content"]
        return {"text": VALID if "JSON" in prompt else INVALID}

    srv.script = by_prompt
    agent = make_agent("structured", FileStore(tmp_path), srv.url, tools=[])
    with pytest.raises(OutputValidationError) as raised:
        agent.run(PROMPT)
    fork = agent.fork(raised.value.run_id, "Answer as JSON: six times seven?", at=1)
    assert fork.status == "completed" and fork.final_output == Answer(answer=42)


def test_output_retries_zero_fails_at_the_first_invalid_answer() -> None:
    model = ScriptedModel([ScriptedModel.text(INVALID)])
    agent = Agentor("A", model=model, output_type=Answer, output_retries=0)
    with pytest.raises(OutputValidationError):
        agent.run("Six times seven?")
    assert len(model.requests) == 1


# -- crashes ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zygote():
    z = crashkit.Zygote("tests.structuredkit")
    yield z
    z.close()


class Case:
    def __init__(self, tmp_path: Path, srv: FakeOpenAI, zygote: crashkit.Zygote) -> None:
        self.runs = tmp_path / "runs"
        self.tool_log = tmp_path / "tools.log"
        self.out = tmp_path / "out.json"
        self.srv, self.zygote = srv, zygote

    def child(self, scenario: str, **cfg: Any) -> dict[str, Any]:
        self.out.unlink(missing_ok=True)
        base = {"dir": str(self.runs), "url": self.srv.url, "scenario": scenario}
        sig = self.zygote.run({**base, "tool_log": str(self.tool_log), "out": str(self.out), **cfg})
        if sig == signal.SIGKILL:
            return {"killed": True}
        assert sig is None, f"the child died of signal {sig}"
        return json.loads(self.out.read_text())


KS = list(range(1, structuredkit.EVENTS["structured"]))


@pytest.mark.parametrize("k", KS, ids=[f"k{k}" for k in KS])
def test_killed_at_any_event_the_retry_is_asked_once_and_no_tool_runs_twice(
    tmp_path: Path, srv: FakeOpenAI, zygote: crashkit.Zygote, k: int
) -> None:
    case = Case(tmp_path, srv, zygote)
    assert case.child("structured", kill_after=k) == {"killed": True}
    run_id = crashkit.only_run(case.runs)
    resumed = case.child("structured", run_id=run_id)  # another process
    assert resumed["status"] == "completed"
    assert resumed["final_output"] == {"answer": 42, "note": None}
    assert crashkit.tool_runs(case.tool_log) == {"lookup 1": 1}
    # The retry is asked once, whichever side of the crash the invalid answer was recorded on.
    assert len(corrections(srv)) == 1
    events = FileStore(case.runs).load(run_id)
    assert types(events).count(INVALID_OUTPUT) == 1
    assert types(events).count(RUN_START) == 2 and events[-1].status == "completed"


def test_killed_between_the_invalid_answer_and_the_retry_the_resume_sends_the_correction(
    tmp_path: Path, srv: FakeOpenAI, zygote: crashkit.Zygote
) -> None:
    case = Case(tmp_path, srv, zygote)
    case.child("structured", kill_after=6)  # ... generation (invalid), invalid_output
    run_id = crashkit.only_run(case.runs)
    before = FileStore(case.runs).load(run_id)
    assert types(before)[-2:] == ["generation", "invalid_output"]
    asked = srv.calls
    assert case.child("structured", run_id=run_id)["status"] == "completed"
    assert srv.calls == asked + 1  # the retry alone
    assert srv.requests[-1]["messages"][-1] == before[-1].messages[0]


def test_killed_after_the_valid_retry_was_recorded_the_resume_asks_nothing(
    tmp_path: Path, srv: FakeOpenAI, zygote: crashkit.Zygote
) -> None:
    case = Case(tmp_path, srv, zygote)
    case.child("structured", kill_after=7)  # ... invalid_output, generation (valid)
    run_id = crashkit.only_run(case.runs)
    asked = srv.calls
    resumed = case.child("structured", run_id=run_id)
    assert resumed["final_output"] == {"answer": 42, "note": None}
    assert srv.calls == asked
