"""How the app looks: SVG snapshots at a fixed size, with a fixed clock and no watchers.

Regenerate after a deliberate change with `pytest tests/test_snapshots.py --snapshot-update`,
and look at the SVGs before committing them.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

import agentor.engine.loop
import agentor.session.run
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.app_support import (
    IDS,
    NOW,
    SIZE,
    GatedModel,
    OneAgent,
    app_for,
    copy_fixtures,
    priced,
    wait_until,
    weather_agent,
    write_log,
)


class SteppingClock:
    """Stands in for the engine's `time` module: each reading is a little later, and the same
    in every test run."""

    def __init__(self, start: float) -> None:
        self._ticks = itertools.count()
        self.start = start

    def time(self) -> float:
        return self.start + next(self._ticks) * 0.25


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))  # the list's title says "~/runs"
    runs = copy_fixtures(tmp_path / "runs")
    (runs / "0000cafe-unreadable.jsonl").mkdir()  # an unreadable row, for its colour
    return runs


def test_main_screen(snap_compare, runs: Path) -> None:
    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=priced)


def test_timeline_with_detail(snap_compare, runs: Path) -> None:
    async def open_request(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select(IDS["parallel_calls"])
        await pilot.pause()

    # Into the timeline, up to the second generation: its request as a conversation.
    assert snap_compare(
        app_for(runs), terminal_size=SIZE, run_before=open_request, press=["enter", "up", "up"]
    )


def test_help_screen(snap_compare, runs: Path) -> None:
    assert snap_compare(
        app_for(runs), terminal_size=SIZE, run_before=priced, press=["question_mark"]
    )


def test_resume_in_progress(snap_compare, runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = SteppingClock(1796039940.0)
    monkeypatch.setattr(agentor.engine.loop, "time", clock)
    monkeypatch.setattr(agentor.session.run, "time", clock)
    # The half-finished run is rewound: the model asks for the tool again, then streams its
    # answer, and is caught in the middle of it.
    model = GatedModel([], partial="The weather in Prague is sunny, with").hold(1)
    model.replies = [
        ScriptedModel.calls(model, ("get_weather", {"city": "Prague"})),
        ScriptedModel.text("The weather in Prague is sunny, with a light breeze."),
    ]
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))

    async def resume(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select(IDS["half_finished_crash"])
        await pilot.pause()
        await pilot.press("r")
        stream = pilot.app.runs_screen.stream_line
        await wait_until(pilot, lambda: model.waiting.is_set() and "sunny, with" in stream.streamed)
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=resume)


def test_small_screen_80x24(snap_compare, runs: Path) -> None:
    async def open_run(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select(IDS["crash_after_tool_result"])
        await pilot.pause()

    # The timeline focused: the footer keeps help, quit and the palette.
    assert snap_compare(app_for(runs), terminal_size=(80, 24), run_before=open_run, press=["enter"])


def test_detail_at_100x30(snap_compare, runs: Path) -> None:
    async def open_run(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select(IDS["parallel_calls"])
        await pilot.pause()

    assert snap_compare(
        app_for(runs), terminal_size=(100, 30), run_before=open_run, press=["enter", "up", "tab"]
    )


def test_maximized_detail_at_80x24(snap_compare, runs: Path) -> None:
    async def open_run(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select(IDS["parallel_calls"])
        await pilot.pause()

    assert snap_compare(
        app_for(runs), terminal_size=(80, 24), run_before=open_run, press=["enter", "tab", "m"]
    )


def test_timeline_search(snap_compare, runs: Path) -> None:
    async def open_run(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select(IDS["parallel_calls"])
        await pilot.pause()

    # Typing in the search bar: the matches marked and highlighted, their count in the title.
    assert snap_compare(
        app_for(runs),
        terminal_size=SIZE,
        run_before=open_run,
        press=["enter", "home", "n", "slash", "p", "o", "r", "t", "o"],
    )


def gated_run(runs: Path) -> str:
    """A run paused at two gated calls, one decided (its arguments edited), with fixed times."""
    t0 = NOW - 300
    params = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
        "required": ["city", "nights"],
    }
    email = {
        "type": "object",
        "properties": {"to": {"type": "string"}, "subject": {"type": "string"}},
        "required": ["to", "subject"],
    }
    tools = [
        {"type": "function", "function": {"name": "book_hotel", "parameters": params}},
        {"type": "function", "function": {"name": "send_email", "parameters": email}},
    ]
    hotel = {"city": "Rome", "nights": 2}
    mail = {"to": "ana@example.com", "subject": "Rome"}
    calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(a)}}
        for cid, name, a in (("call_1", "book_hotel", hotel), ("call_2", "send_email", mail))
    ]
    prompt = "Book a hotel in Rome for two nights and mail the plan to ana@example.com."
    user = [{"role": "user", "content": prompt}]
    run_id = "9dce9d32dbf04c5da96a08ce6cfb528b"
    write_log(
        runs,
        run_id,
        [
            {
                "type": "run_start",
                "run_id": run_id,
                "agent": "Travel Agent",
                "model": "gpt-4o-mini",
                "started_at": t0,
                "ts": t0,
                "messages": user,
                "tools": tools,
                "config": "c0ffee",
            },
            {
                "type": "generation",
                "turn": 1,
                "calls": calls,
                "messages": user,
                "config": "c0ffee",
                "ts": t0 + 1,
                "usage": {"input_tokens": 80, "output_tokens": 30, "total_tokens": 110},
            },
            {
                "type": "tool_call",
                "turn": 1,
                "name": "book_hotel",
                "call_id": "call_1",
                "args": hotel,
                "ts": t0 + 1,
            },
            {
                "type": "tool_call",
                "turn": 1,
                "name": "send_email",
                "call_id": "call_2",
                "args": mail,
                "ts": t0 + 1,
            },
            {
                "type": "approval_request",
                "turn": 1,
                "name": "book_hotel",
                "call_id": "call_1",
                "args": hotel,
                "deadline": t0 + 3600,
                "ts": t0 + 1,
            },
            {
                "type": "approval_request",
                "turn": 1,
                "name": "send_email",
                "call_id": "call_2",
                "args": mail,
                "ts": t0 + 1,
            },
            {"type": "run_end", "status": "awaiting_approval", "ts": t0 + 1},
            {
                "type": "approval",
                "turn": 1,
                "name": "send_email",
                "call_id": "call_2",
                "decision": "approved",
                "by": "alice",
                "note": "a clearer subject",
                "args": {**mail, "subject": "Your trip to Rome"},
                "ts": t0 + 120,
            },
        ],
    )
    return run_id


def test_approval_pane(snap_compare, runs: Path) -> None:
    run_id = gated_run(runs)

    async def open_run(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select(run_id)
        await pilot.pause()

    # Into the approvals pane: the waiting call highlighted, its arguments beside it; the
    # decided call says who approved it; the timeline's rows for the request and decision.
    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=open_run, press=["enter"])


def test_argument_editor_with_a_bad_edit(snap_compare, runs: Path) -> None:
    run_id = gated_run(runs)

    async def open_run(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select(run_id)
        await pilot.pause()

    # `e`, then a stray character: what is wrong is shown under the editor.
    assert snap_compare(
        app_for(runs), terminal_size=SIZE, run_before=open_run, press=["enter", "e", "x"]
    )


def test_run_list_with_costs_and_a_pinned_run(snap_compare, runs: Path) -> None:
    # Upstream's runs on gpt-4o-mini, priced; one pinned (`p`), marked * in the first column;
    # the title sums the cost of the runs shown.
    FileStore(runs).pin(IDS["half_finished_crash"])

    async def open_run(pilot) -> None:
        await priced(pilot)
        pinned = IDS["half_finished_crash"]
        await wait_until(
            pilot, lambda: pinned in pilot.app.runs_screen.run_list.pinned, what="the mark"
        )
        pilot.app.runs_screen.run_list.select(IDS["half_finished_crash"])
        await pilot.pause()

    # The run's start in the detail: the run's cost, priced generations, pinned.
    assert snap_compare(
        app_for(runs), terminal_size=SIZE, run_before=open_run, press=["enter", "home"]
    )


def test_stats_view(snap_compare, runs: Path) -> None:
    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=priced, press=["S"])
