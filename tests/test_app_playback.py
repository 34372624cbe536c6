"""`P` in the TUI: a run's timeline played back at its recorded pace, timed by a clock the test
moves itself (so nothing here waits for real time but the one test on Textual's timers): the
order, the gaps, a long idle gap shortened and said, pause, step, speed, the status line."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentor.sources.playback import CAPPED_WAIT
from tests.app_support import IDS, SIZE, app_for, copy_fixtures, screen_text, wait_until, write_log
from tests.playkit import EVENTS, ManualClock, press
from tui.app import RunsApp
from tui.widgets.playback_screen import PlaybackScreen


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    directory = tmp_path / "runs"
    directory.mkdir()
    write_log(directory, "paced", EVENTS)
    return directory


async def playing(pilot, app: RunsApp, clock: ManualClock | None = None) -> PlaybackScreen:
    app.runs_screen.playback_clock = clock
    assert app.runs_screen.run_list.select("paced")
    await press(pilot, "P")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, PlaybackScreen)
    return screen


def shown(screen: PlaybackScreen) -> list[str]:
    rows = screen.rows
    return [rows.render_row(i, 150).plain.strip() for i in range(rows.row_count())]


def status(screen: PlaybackScreen) -> str:
    return screen.status().plain


async def test_events_appear_in_order_after_their_recorded_gaps(runs: Path) -> None:
    clock, app = ManualClock(), app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        screen = await playing(pilot, app, clock)
        assert screen.position == 1 and len(shown(screen)) == 1
        assert shown(screen)[0].startswith("+0.00s run_start")
        assert status(screen).startswith("▶ playing ×1 · event 1 of 6 · recorded 2026-")
        clock.advance(0.99)  # the generation ended 1 s after the start
        assert screen.position == 1
        clock.advance(0.02)
        assert screen.position == 2 and "thinking" in shown(screen)[-1]
        clock.advance(0.47)  # the call, 0.5 s after the generation (which came at 1.0)
        assert screen.position == 2
        clock.advance(0.03)
        assert screen.position == 3 and shown(screen)[-1].endswith("f(x=1)")
        clock.advance(1.98)  # its result, 2 s later
        assert screen.position == 3
        clock.advance(0.03)
        assert screen.position == 4
        # The result as written (markup shown as text), on screen.
        await pilot.pause()
        assert "f → [b]ok[/b]" in screen_text(app)
        assert "event 4 of 6 · recorded 2026-" in screen_text(app)
        assert "(+3.50s)" in status(screen)


async def test_a_long_idle_gap_is_shortened_and_said(runs: Path) -> None:
    clock, app = ManualClock(), app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        screen = await playing(pilot, app, clock)
        clock.advance(3.5)
        assert screen.position == 4
        # Waiting for the resume, three hours later: its note is shown while it is waited for.
        assert shown(screen)[-1] == "… 3 h later"
        clock.advance(CAPPED_WAIT - 0.01)
        assert screen.position == 4
        clock.advance(0.02)
        assert screen.position == 5 and "resumed · segment 2" in shown(screen)[-1]
        assert shown(screen)[-2] == "… 3 h later"
        clock.advance(0.5)
        assert screen.position == 6 and status(screen).startswith("■ ended ×1 · event 6 of 6")
        assert clock.live == []  # nothing more is waited for
        await pilot.pause()
        assert "… 3 h later" in screen_text(app)


async def test_speed_keys_divide_the_gaps_and_a_change_keeps_what_is_left(runs: Path) -> None:
    clock, app = ManualClock(), app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        screen = await playing(pilot, app, clock)
        clock.advance(0.5)  # half of the first gap (1 s) at ×1
        await pilot.press("2")
        assert screen.speed == 2 and status(screen).startswith("▶ playing ×2")
        clock.advance(0.24)  # what is left (0.5 s recorded) takes 0.25 s at ×2
        assert screen.position == 1
        clock.advance(0.02)
        assert screen.position == 2
        # 0.01 s (at ×2) into the next gap of 0.5 s: ×10 takes the 0.48 s left in 0.048 s.
        await pilot.press("0")
        assert screen.speed == 10
        clock.advance(0.045)
        assert screen.position == 2
        clock.advance(0.005)
        assert screen.position == 3
        await pilot.press("minus")
        assert screen.speed == 4
        await pilot.press("plus", "plus")
        assert screen.speed == 20
        await pilot.press("1")
        assert screen.speed == 1
        clock.advance(1.96)  # 1.98 s left of the 2 s to the result, at ×1 again
        assert screen.position == 3
        clock.advance(0.03)
        assert screen.position == 4


async def test_space_pauses_and_goes_on_step_shows_one_event(runs: Path) -> None:
    clock, app = ManualClock(), app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        screen = await playing(pilot, app, clock)
        clock.advance(0.4)
        await pilot.press("space")
        assert screen.paused and status(screen).startswith("⏸ paused ×1 · event 1 of 6")
        clock.advance(100)
        assert screen.position == 1  # paused: time passes, nothing comes
        await pilot.press("space")
        clock.advance(0.59)  # what was left of the gap: 0.6 s
        assert screen.position == 1
        clock.advance(0.02)
        assert screen.position == 2
        # `.` pauses a playback under way and shows the next event; → too.
        await pilot.press("full_stop")
        assert screen.paused and screen.position == 3
        await pilot.press("right", "right")
        assert screen.position == 5 and "resumed" in shown(screen)[-1]
        assert "… 3 h later" in shown(screen)
        clock.advance(100)
        assert screen.position == 5
        await pilot.press("space")  # on from there: the end comes 0.5 s later
        clock.advance(0.51)
        assert screen.position == 6
        await pilot.press("right")  # at the end, a step does nothing
        assert screen.position == 6
        await pilot.press("escape")
        assert not isinstance(app.screen, PlaybackScreen)
        assert clock.live == []


async def test_leaving_the_playback_stops_its_timer(runs: Path) -> None:
    clock, app = ManualClock(), app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await playing(pilot, app, clock)
        assert len(clock.live) == 1
        await pilot.press("escape")
        await pilot.pause()
        assert clock.live == [] and not isinstance(app.screen, PlaybackScreen)


async def test_textual_timers_play_a_run_to_its_end(tmp_path: Path) -> None:
    """No test clock: Textual's timers (the recorded run took a few milliseconds)."""
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(IDS["parallel_calls"])
        await press(pilot, "P")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PlaybackScreen)
        n = len(screen.steps)
        await wait_until(pilot, lambda: screen.position == n, timeout=10, what="the end")
        assert status(screen).startswith(f"■ ended ×1 · event {n} of {n}")
        assert len(shown(screen)) == n
