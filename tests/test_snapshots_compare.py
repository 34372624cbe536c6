"""How the compare view and the playback look: SVG snapshots at 160x45 and 100x30, of forks
made by the real engine on a clock that steps the same in every test run.

Regenerate after a deliberate change with `--snapshot-update`, and look at the SVGs."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentor.engine.loop
import agentor.forking
import agentor.session.run
from agentor.engine.store.file import FileStore
from tests.app_support import SIZE, app_for, priced, write_log
from tests.forkkit import Weather, result_line, weather_model
from tests.playkit import EVENTS, ManualClock, press
from tests.test_snapshots import SteppingClock

PROMPT = "What is the weather in Oslo and Rome?"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """parent-run; result-fork (Rome's result edited, with markup and an escape); model-fork
    (its first generation asked again of another model, with a message added)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    clock = SteppingClock(1796039000.0)
    for module in (agentor.engine.loop, agentor.session.run, agentor.forking):
        monkeypatch.setattr(module, "time", clock)
    directory = tmp_path / "runs"
    store = FileStore(directory)
    w = Weather(store)
    parent = w.agent.run(PROMPT, run_id="parent-run").run_id
    edited = "Hail in Rome. [bold red]loud[/] \x1b[31m"
    w.agent.fork(
        parent, at=result_line(store, parent, "Rome"), result=edited, fork_id="result-fork"
    )
    other = weather_model("other-model", "p")
    w.agent.fork(parent, at=2, input="Also Paris, please.", model=other, fork_id="model-fork")
    write_log(directory, "paced", EVENTS)
    return directory


async def _compare(pilot, first: str, second: str | None = None) -> None:
    app = pilot.app
    app.runs_screen.run_list.select(first)
    await press(pilot, "M")
    if second is not None:
        app.runs_screen.run_list.select(second)
        await press(pilot, "M")
    await pilot.pause()


def test_compare_a_result_fork_with_its_parent(snap_compare, runs: Path) -> None:
    async def run_before(pilot) -> None:
        await _compare(pilot, "result-fork")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=run_before)


def test_compare_a_model_fork_at_100x30(snap_compare, runs: Path) -> None:
    async def run_before(pilot) -> None:
        await _compare(pilot, "parent-run", "model-fork")
        await pilot.press("n", "n")  # to the third difference: its detail below
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app_for(runs), terminal_size=(100, 30), run_before=run_before)


def test_a_marked_run_in_the_list(snap_compare, runs: Path) -> None:
    async def run_before(pilot) -> None:
        await priced(pilot)  # the cost column filled in, as it is a moment after start
        pilot.app.runs_screen.run_list.select("parent-run")
        await press(pilot, "M")
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(app_for(runs), terminal_size=(100, 30), run_before=run_before)


def test_playback_waiting_through_a_long_idle_gap(snap_compare, runs: Path) -> None:
    clock = ManualClock()
    app = app_for(runs)

    async def run_before(pilot) -> None:
        pilot.app.runs_screen.playback_clock = clock
        pilot.app.runs_screen.run_list.select("paced")
        await press(pilot, "P")
        await pilot.pause()
        clock.advance(3.6)  # the tool result shown; the resume, 3 h later, waited for
        await pilot.press("2")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
