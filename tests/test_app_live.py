"""Live: what other processes do to the directory shows up by itself (real watchfiles)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from agentor.engine.store.file import FileStore
from tests.app_support import (
    IDS,
    SIZE,
    app_for,
    copy_fixtures,
    row_statuses,
    screen_text,
    wait_until,
    write_log,
)

# What upstream wrote when it finished the crashed Vienna run: the reply, message and end.
FINISH_VIENNA = [
    {
        "type": "generation",
        "turn": 2,
        "usage": {"input_tokens": 100, "output_tokens": 12, "total_tokens": 112},
        "model": "gpt-4o-mini",
        "text": "Vienna is sunny, 22°C.",
        "started_at": 1796037300.0,
        "ended_at": 1796037301.0,
    },
    {"type": "message", "text": "Vienna is sunny, 22°C.", "turn": 2},
    {
        "type": "run_end",
        "status": "completed",
        "text": "Vienna is sunny, 22°C.",
        "turn": 2,
        "ended_at": 1796037301.5,
    },
]


async def settle(pilot) -> None:
    """Until the watcher reports changes (it proves it with a probe file): a change made
    before that would be missed."""
    app = pilot.app
    await wait_until(pilot, lambda: app.watcher.armed, what="the watcher to be armed")


async def test_events_appended_by_another_writer_appear_in_list_and_timeline(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    run_id = IDS["crash_after_tool_result"]
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(run_id)
        await pilot.pause()
        assert len(app.runs_screen.timeline.run_log) == 4 and app.runs_screen.timeline.follow
        await settle(pilot)
        # A partial line first: nothing shows until its newline arrives.
        line = json.dumps(FINISH_VIENNA[0]).encode() + b"\n"
        path = runs / f"{run_id}.jsonl"
        read_before = app.source.bytes_read
        with path.open("ab") as f:
            f.write(line[:20])
            f.flush()
            # Read by the list (the watcher reported it), yet no line for it anywhere.
            await wait_until(
                pilot, lambda: app.source.bytes_read >= read_before + 20, what="a read"
            )
            await pilot.pause()
            assert len(app.runs_screen.timeline.run_log) == 4
            assert app.source.get(run_id).summary.events == 4
            f.write(line[20:])
            for event in FINISH_VIENNA[1:]:
                f.write(json.dumps(event).encode() + b"\n")
        await wait_until(pilot, lambda: row_statuses(app)[run_id] == "completed", what="status")
        await wait_until(pilot, lambda: len(app.runs_screen.timeline.run_log) == 7, what="timeline")
        await pilot.pause()
        # Following: the cursor moved to the newest event, and the detail with it (the detail
        # follows live events a frame or so after their lines).
        assert app.runs_screen.timeline.cursor == 6
        await wait_until(
            pilot, lambda: "run_end · turn 2 · line 7" in screen_text(app), what="the detail"
        )
        screen = screen_text(app)
        assert "completed · Vienna is sunny, 22°C." in screen
        assert "Runs 8 · 1 interrupted · 2 failed" in screen


async def test_with_follow_off_new_events_do_not_move_the_cursor(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    run_id = IDS["crash_after_tool_result"]
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(run_id)
        await pilot.press("f")
        assert not app.runs_screen.timeline.follow
        assert "follow off" in screen_text(app)
        await settle(pilot)
        write_log(runs, run_id, FINISH_VIENNA)
        await wait_until(pilot, lambda: len(app.runs_screen.timeline.run_log) == 7, what="timeline")
        assert app.runs_screen.timeline.cursor == 3
        await pilot.press("f")  # on again: jumps to the newest
        assert app.runs_screen.timeline.follow and app.runs_screen.timeline.cursor == 6


async def test_a_new_run_file_appears_and_a_deleted_one_leaves(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await settle(pilot)
        was_on = app.runs_screen.run_list.current.run_id
        write_log(
            runs,
            "fresh-run",
            [
                {
                    "type": "run_start",
                    "agent": "Newcomer",
                    "model": "m",
                    "started_at": 1796039990.0,
                    "messages": [{"role": "user", "content": "brand new"}],
                }
            ],
        )
        await wait_until(pilot, lambda: "fresh-run" in row_statuses(app), what="new row")
        assert app.runs_screen.run_list.rows[0].run_id == "fresh-run"  # the newest is on top
        await pilot.pause()
        assert "Newcomer" in screen_text(app) and "Runs 9 · 3 interrupted" in screen_text(app)

        # The cursor stayed on the run it was on; open the new one, then it is deleted: it
        # leaves the list, the cursor moves on to the next run, nothing crashes.
        assert app.runs_screen.run_list.current.run_id == was_on
        assert app.runs_screen.run_list.select("fresh-run")
        await pilot.pause()
        assert app.runs_screen.timeline.run_id == "fresh-run"
        (runs / "fresh-run.jsonl").unlink()
        (runs / f"{IDS['failed']}.jsonl").unlink()
        await wait_until(
            pilot, lambda: len(app.runs_screen.run_list.rows) == 7, what="rows to leave"
        )
        assert "fresh-run" not in row_statuses(app) and IDS["failed"] not in row_statuses(app)
        await pilot.pause()
        assert (
            app.runs_screen.timeline.run_id == app.runs_screen.run_list.current.run_id
        )  # moved to the next run


async def test_the_directory_deleted_leaves_a_clear_message(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await settle(pilot)
        shutil.rmtree(runs)
        await wait_until(pilot, lambda: app.watcher.gone, what="the deletion")
        await pilot.pause()
        screen = screen_text(app)
        assert "was deleted" in screen
        assert app.runs_screen.run_list.rows == []
        await pilot.press("r", "down", "enter", "c")  # keys on an empty app do no harm
        assert app.is_running


async def test_a_lock_taken_and_released_elsewhere_turns_running_then_interrupted(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    run_id = IDS["half_finished_crash"]
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert row_statuses(app)[run_id] == "interrupted"
        # Another holder (its own FileStore: a separate open file, as another process has).
        with FileStore(runs).lock(run_id):
            await wait_until(pilot, lambda: row_statuses(app)[run_id] == "running", what="running")
            await pilot.pause()
            assert "1 running" in screen_text(app)
        await wait_until(
            pilot, lambda: row_statuses(app)[run_id] == "interrupted", what="interrupted"
        )


async def test_a_run_written_before_the_watch_was_set_up_is_listed_once_it_is(
    tmp_path: Path,
) -> None:
    """A writer racing the start: its file lands after the first scan and before watchfiles
    watches (so it is never reported); the watcher, once armed, reads the directory again."""
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=True)
    scan = app.source.scan

    def scan_then_a_run_arrives() -> None:
        scan()
        write_log(runs, "raced-run", [{"type": "run_start", "agent": "Racer", "messages": []}])

    app.source.scan = scan_then_a_run_arrives
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: "raced-run" in row_statuses(app), what="the raced run")
        # The probe that proved the watch is gone, and was never a row.
        await wait_until(pilot, lambda: not list(runs.glob(".*.probe")), what="the probe gone")
        assert len(app.runs_screen.run_list.rows) == 9
