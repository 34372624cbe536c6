"""How replays look: a replay's timeline marking each tool result served (and served to other
arguments, fifo), executed or refused, the detail of a drifted result, a replay that diverged
in the run list, and the compare view of a replay beside its parent. Pilot checks of the text,
and SVG snapshots at 160x45 of runs made by the real engine on a clock that steps the same in
every test run.

Regenerate after a deliberate change with `--snapshot-update`, and look at the SVGs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agentor.engine.loop
import agentor.forking
import agentor.session.run
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.app_support import SIZE, app_for, priced, screen_text
from tests.forkkit import Weather
from tests.playkit import press
from tests.test_snapshots import SteppingClock

PROMPT = "What is the weather in Oslo and Rome?"


def candidate(*turns: tuple[str, ...], name: str = "candidate-model") -> ScriptedModel:
    """Asks get_weather for the cities of `turns[k]` at its turn k, then answers with what it
    was told."""
    model = ScriptedModel([], name=name)

    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        k = sum(1 for m in messages if m["role"] == "assistant")
        if k < len(turns):
            return model.calls(*(("get_weather", {"city": c}) for c in turns[k]))
        told = [str(m["content"]) for m in messages if m["role"] == "tool"]
        return ScriptedModel.text("told: " + " | ".join(told))

    model.replies = reply
    return model


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """parent-run; fifo-replay (an experiment's candidate: Rome and Oslo asked the other way
    round, served with drift; Paris run); refused-replay (Oslo served, Lima refused); stopped
    (diverged at Paris)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    clock = SteppingClock(1796039000.0)
    for module in (agentor.engine.loop, agentor.session.run, agentor.forking):
        monkeypatch.setattr(module, "time", clock)
    directory = tmp_path / "runs"
    w = Weather(FileStore(directory))
    parent = w.agent.run(PROMPT, run_id="parent-run").run_id
    w.agent.replay(
        parent,
        model=candidate(("Rome", "Oslo"), ("Paris",)),
        match="fifo",
        novel="run",
        experiment="exp-1",
        fork_id="fifo-replay",
    )
    w.agent.replay(parent, model=candidate(("Oslo", "Lima")), fork_id="refused-replay")
    w.agent.replay(parent, model=candidate(("Rome", "Paris")), novel="stop", fork_id="stopped")
    assert w.ran == ["Oslo", "Rome", "Paris"]
    return directory


async def _timeline(pilot: Any, run_id: str, up: int) -> None:
    await priced(pilot)
    pilot.app.runs_screen.run_list.select(run_id)
    await pilot.pause()
    await press(pilot, "enter")
    for _ in range(up):
        await pilot.press("up")
    await pilot.pause()


async def test_a_replays_steps_say_how_they_were_answered(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await _timeline(pilot, "fifo-replay", 6)
        text = screen_text(app)
        assert text.count("get_weather · served, other arguments → Sunny in ") == 2
        assert "get_weather · executed → Sunny in Paris." in text
        assert "answered      served from the record: nothing ran" in text
        assert "Recorded arguments (the call whose result was served)" in text
        assert "at line 1: replay with" in text and "candidate-model · experiment exp-1" in text
        assert "│    diverged     stopped " in text
        await press(pilot, "escape")
        await _timeline(pilot, "refused-replay", 0)
        assert "get_weather · served → Sunny in Oslo." in screen_text(app)
        refused = "get_weather · refused ✗ not in the recording: run parent-run made"
        assert refused in screen_text(app)


def test_a_replays_timeline_with_a_drifted_result(snap_compare, runs: Path) -> None:
    async def run_before(pilot) -> None:
        await _timeline(pilot, "fifo-replay", 6)

    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=run_before)


def test_compare_a_replay_with_its_parent(snap_compare, runs: Path) -> None:
    async def run_before(pilot) -> None:
        await priced(pilot)
        for run_id in ("parent-run", "fifo-replay"):
            pilot.app.runs_screen.run_list.select(run_id)
            await press(pilot, "M")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=run_before)
