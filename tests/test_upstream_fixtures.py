"""Logs written by upstream Agentor 0.1.1 load, summarise and resume correctly (on copies)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentor.engine import history
from agentor.engine.history import summarize
from agentor.engine.store.file import FileStore
from tests.conftest import (
    FIXTURES,
    FULL_RUN,
    WeatherAgents,
    log_lines,
    weather_text,
)
from tests.openai_server import FakeOpenAI

MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())
# The manifest speaks of what a viewer shows; the log itself can only say "incomplete" (nobody
# holds a copied fixture's lock, so the TUI shows it as interrupted).
EXPECTED_STATUS = {"interrupted": "incomplete"}


@pytest.fixture
def runs(tmp_path: Path) -> FileStore:
    for path in FIXTURES.glob("*.jsonl"):
        shutil.copy(path, tmp_path / path.name)
    return FileStore(tmp_path)


def run_id(scenario: str) -> str:
    return MANIFEST[scenario]["run_id"]


def test_the_manifest_covers_every_fixture_log() -> None:
    ids = {entry["run_id"] for entry in MANIFEST.values()}
    assert ids == {p.stem for p in FIXTURES.glob("*.jsonl")}
    assert len(ids) == 8


@pytest.mark.parametrize("scenario", sorted(MANIFEST))
def test_every_fixture_loads_whole_and_summarises_as_expected(
    scenario: str, runs: FileStore
) -> None:
    rid = run_id(scenario)
    events, bad = runs.load_with_errors(rid)
    assert bad == []
    raw = log_lines(runs.path(rid))
    # Nothing upstream wrote is lost or changed by reading it.
    assert [e.to_dict() for e in events] == raw
    expect = MANIFEST[scenario]["expect"]
    assert history.status(events) == EXPECTED_STATUS.get(expect, expect)
    summary = summarize(rid, events)
    assert summary.status == history.status(events)
    assert summary.agent == "Travel Agent" and summary.model == "gpt-4o-mini"
    assert summary.first_prompt == raw[0]["messages"][-1]["content"]
    assert summary.events == len(raw)
    # Each distinct call counts once: a rewound call asked again is the same call.
    calls = {(d["turn"], d["name"], json.dumps(d["args"])) for d in raw if d["type"] == "tool_call"}
    assert summary.tool_calls == len(calls)
    assert not runs.is_locked(rid)


def test_fixture_summaries_in_detail(runs: FileStore) -> None:
    def summary(scenario: str) -> history.RunSummary:
        return summarize(run_id(scenario), runs.load(run_id(scenario)))

    done = summary("completed")
    assert (done.turns, done.tool_calls, done.segments) == (2, 1, 1)
    assert done.final_output == "The weather in Lisbon is sunny and 22°C."
    assert done.usage.total_tokens == 45 + 113
    assert done.started_at == pytest.approx(1796037193.4405067)
    assert done.ended_at == pytest.approx(1796037193.525578)

    assert summary("parallel_calls").tool_calls == 2
    assert summary("resumed_two_segments").segments == 2
    failed = summary("failed")
    assert failed.error == "InternalServerError: Error code: 500 - scripted failure"
    assert summary("max_turns").error == "Reached max_turns (2) without a final answer."
    fork = runs.load(run_id("fork"))
    assert fork[-1].type == "fork" and fork[-1].forked_from == run_id("completed")


@pytest.mark.parametrize(
    "scenario", ["completed", "parallel_calls", "resumed_two_segments", "fork"]
)
def test_finished_fixtures_resume_without_a_model_call_or_a_write(
    scenario: str, runs: FileStore, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    path = runs.path(run_id(scenario))
    before = path.read_bytes()
    result = weather_agent(store=runs).resume(run_id(scenario))
    assert result.status == "completed"
    assert result.final_output == log_lines(path)[-1 if scenario != "fork" else -2]["text"]
    assert fake_openai.calls == 0 and weather_agent.executed == []
    assert path.read_bytes() == before


def test_half_finished_crash_rewinds(
    runs: FileStore, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    rid = run_id("half_finished_crash")
    original = runs.load(rid)
    asked = next(e for e in original if e.type == "generation").messages

    result = weather_agent(store=runs).resume(rid)

    assert result.status == "completed"
    assert result.final_output == weather_text("Prague")
    # Asked again with the very request that produced the unanswered call.
    assert fake_openai.requests[0]["messages"] == asked
    assert weather_agent.executed == ["Prague"]
    events = runs.load(rid)
    assert [e.to_dict() for e in events[: len(original)]] == [e.to_dict() for e in original]
    new = events[len(original) :]
    assert [e.type for e in new] == FULL_RUN
    # Our generations after upstream's full-form ones load back as the requests really sent.
    assert [e.messages for e in new if e.type == "generation"] == [
        r["messages"] for r in fake_openai.requests
    ]
    assert history.status(events) == "completed"


def test_crash_after_tool_result_does_not_run_the_tool_again(
    runs: FileStore, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    rid = run_id("crash_after_tool_result")
    raw = log_lines(runs.path(rid))

    result = weather_agent(store=runs).resume(rid)

    assert result.status == "completed"
    assert weather_agent.executed == []
    assert fake_openai.calls == 1
    sent = fake_openai.requests[0]["messages"]
    assert sent[:-2] == raw[1]["messages"]
    assert sent[-2] == {"role": "assistant", "content": None, "tool_calls": raw[1]["calls"]}
    assert sent[-1] == {
        "role": "tool",
        "tool_call_id": raw[3]["call_id"],
        "content": "The weather in Vienna is sunny and 22C.",
    }
    assert result.final_output == "The weather in Vienna is sunny and 22C."


def test_failed_and_max_turns_fixtures_are_continued(
    runs: FileStore, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    agent = weather_agent(store=runs)
    failed = agent.resume(run_id("failed"))
    assert (failed.status, failed.final_output) == ("completed", "Which city?")
    assert (
        fake_openai.requests[0]["messages"] == log_lines(runs.path(run_id("failed")))[0]["messages"]
    )

    looped = agent.resume(run_id("max_turns"))
    assert looped.status == "completed"
    assert weather_agent.executed == []  # both turns' results were on record
    gens = [e for e in runs.load(run_id("max_turns")) if e.type == "generation"]
    assert [g.turn for g in gens] == [1, 2, 3]
