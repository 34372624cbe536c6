"""The app's live work: what an append redraws, bursts read once, rows filled again when a big
log arrives, workers quiet at exit, a deleted directory that comes back."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from textual.worker import WorkerState

from agentor.engine.history import summarize
from agentor.engine.store.file import FileStore
from tests.app_support import (
    IDS,
    SIZE,
    app_for,
    copy_fixtures,
    row_statuses,
    screen_text,
    wait_until,
    watcher_reports,
    write_log,
)
from tests.test_app_live import FINISH_VIENNA, settle

VIENNA = IDS["crash_after_tool_result"]
BIG = 64 * 1024  # logs over this size are listed from their head and tail first


def spy(calls: list[Any], method: Any) -> Any:
    """`method`, noting the first argument of every call in `calls`."""

    def wrapper(first: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(first)
        return method(first, *args, **kwargs)

    return wrapper


def big_log(path: Path, prompt: str, turns: int, result_size: int = 3000) -> None:
    """A completed run of `turns` tool turns with big results, written whole at once (as a log
    copied or moved into the directory arrives)."""
    started = 1796039000.0
    messages = [{"role": "user", "content": prompt}]
    usage = {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}
    start = {"agent": "Big Agent", "model": "m", "messages": messages, "started_at": started}
    events: list[dict[str, Any]] = [{"type": "run_start", **start}]
    for turn in range(1, turns + 1):
        call_id = f"call_{turn}"
        args = {"city": "Oslo"}
        function = {"name": "get_weather", "arguments": json.dumps(args)}
        call = {"id": call_id, "type": "function", "function": function}
        tool = {"name": "get_weather", "args": args, "call_id": call_id, "turn": turn}
        events += [
            {"type": "generation", "turn": turn, "usage": usage, "calls": [call]},
            {"type": "tool_call", **tool},
            {"type": "tool_result", **tool, "result": "x" * result_size},
        ]
    last = turns + 1
    events += [
        {"type": "generation", "turn": last, "usage": usage, "text": "Done."},
        {"type": "message", "text": "Done.", "turn": last},
        {"type": "run_end", "status": "completed", "turn": last, "ended_at": started + 60},
    ]
    scratch = path.with_suffix(".tmp")
    scratch.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert scratch.stat().st_size > BIG
    os.replace(scratch, path)


# -- what an append redraws ------------------------------------------------------------------


async def test_an_append_to_the_open_run_redraws_only_its_new_line_and_its_row(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(VIENNA)
        await pilot.pause()
        await pilot.pause()
        assert len(app.runs_screen.timeline.run_log) == 4 and app.runs_screen.timeline.cursor == 3
        drawn_lines: list[int] = []
        drawn_rows: list[int] = []
        app.runs_screen.timeline.render_row = spy(drawn_lines, app.runs_screen.timeline.render_row)
        app.runs_screen.run_list.render_row = spy(drawn_rows, app.runs_screen.run_list.render_row)

        write_log(runs, VIENNA, FINISH_VIENNA[:1])  # one line; the run is still unfinished
        app.watcher.refresh_run(VIENNA)
        await wait_until(
            pilot, lambda: len(app.runs_screen.timeline.run_log) == 5, what="the new line"
        )
        await pilot.pause()
        # The timeline drew the new line and the one the cursor left, nothing else; the list
        # redrew the run's row (its counts grew) and no other.
        assert sorted(set(drawn_lines)) == [3, 4]
        assert set(drawn_rows) == {app.runs_screen.run_list.index_of(VIENNA)}
        assert app.runs_screen.timeline.cursor == 4
        await wait_until(pilot, lambda: "line 5" in screen_text(app), what="the detail to follow")
        line = next(x for x in screen_text(app).splitlines() if VIENNA[:8] in x)
        assert "interrupted" in line and "  2      1 " in line  # 2 turns now

        # Its end changes its status: the list is drawn again, in full.
        drawn_rows.clear()
        write_log(runs, VIENNA, FINISH_VIENNA[1:])
        app.watcher.refresh_run(VIENNA)
        await wait_until(pilot, lambda: row_statuses(app)[VIENNA] == "completed", what="end")
        await pilot.pause()
        assert len(set(drawn_rows)) == len(app.runs_screen.run_list.rows)
        assert "Runs 8 · 1 interrupted · 2 failed" in screen_text(app)


async def test_a_burst_of_changes_is_read_once_and_its_detail_built_once(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(VIENNA)
        await pilot.pause()
        refreshes: list[Any] = []
        app.source.refresh = spy(refreshes, app.source.refresh)

        # A resume announces each event as it is recorded: three announcements, one read.
        write_log(runs, VIENNA, FINISH_VIENNA)
        for _ in FINISH_VIENNA:
            app.watcher.refresh_run(VIENNA)
        await wait_until(
            pilot, lambda: len(app.runs_screen.timeline.run_log) == 7, what="the lines"
        )
        await pilot.pause()
        assert len(refreshes) == 1

    runs = copy_fixtures(tmp_path / "again")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(VIENNA)
        await pilot.pause()
        details: list[int] = []
        show_event = app.runs_screen.event_detail.show_event

        def noting_show_event(log: Any, run_id: str, index: int, run: Any = None) -> None:
            details.append(index)
            show_event(log, run_id, index, run)

        app.runs_screen.event_detail.show_event = noting_show_event
        # Three lines read one by one before the screen is drawn (the watcher's batches): the
        # detail follows to the newest, built once.
        for event in FINISH_VIENNA:
            write_log(runs, VIENNA, [event])
            watcher_reports(app, [runs / f"{VIENNA}.jsonl"])
        # Once the newest event's detail is shown and none is due, none can follow.
        await wait_until(
            pilot,
            lambda: details and app.runs_screen.event_detail.due is None,
            what="the detail shown",
        )
        await pilot.pause()
        assert details == [6]
        assert "run_end · turn 2 · line 7" in screen_text(app)


# -- filling rows again ----------------------------------------------------------------------


async def test_a_big_log_that_arrives_or_replaces_one_while_watching_gets_complete_counts(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(
            pilot,
            lambda: app.watcher.fill_worker is not None and app.watcher.fill_worker.is_finished,
            what="the first fill",
        )
        await settle(pilot)

        big_log(runs / "bigrun-arrives.jsonl", "BIGPROMPT one", turns=30)
        await wait_until(
            pilot,
            lambda: (row := app.source.get("bigrun-arrives")) is not None and row.complete,
            what="the new big run's row to be filled",
        )
        expected = summarize("bigrun-arrives", FileStore(runs).load("bigrun-arrives"))
        row = app.source.get("bigrun-arrives")
        assert (row.summary.turns, row.summary.tool_calls) == (31, 30)
        assert row.summary.usage.total_tokens == expected.usage.total_tokens == 31 * 12
        await wait_until(
            pilot,
            lambda: re.search(r" 31     30      372 +\S+  BIGPROMPT one", screen_text(app)),
            what="the counts on screen",
        )

        # A small log replaced by a big one (a copy moved over it).
        completed = IDS["completed"]
        big_log(runs / f"{completed}.jsonl", "BIGPROMPT two", turns=25)
        await wait_until(
            pilot,
            lambda: (r := app.source.get(completed)).complete and r.summary.tool_calls == 25,
            what="the replaced run's row to be filled",
        )
        await wait_until(
            pilot,
            lambda: re.search(r" 26     25      312 +\S+  BIGPROMPT two", screen_text(app)),
            what="the replaced run's counts on screen",
        )


# -- closing ---------------------------------------------------------------------------------


async def test_a_fill_batch_that_comes_back_while_the_app_closes_is_dropped_quietly(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    reading, released = threading.Event(), threading.Event()
    shown_while_closing: list[bool] = []

    def fill_until_closing(max_rows: int | None = None) -> list[str]:
        # A batch read while the app goes away (its screen is being torn down).
        reading.set()
        deadline = time.monotonic() + 10
        while app.is_running and time.monotonic() < deadline:
            time.sleep(0.002)
        released.set()
        return [VIENNA]

    async with app.run_test(size=SIZE) as pilot:
        show_rows = app.runs_screen.show_rows

        def noting_show_rows() -> None:
            shown_while_closing.append(app.return_code is not None or not app.is_running)
            show_rows()

        await pilot.pause()
        worker = app.watcher.fill_worker
        assert worker is not None
        await worker.wait()  # the first fill, for real
        app.source.fill = fill_until_closing
        app.runs_screen.show_rows = noting_show_rows
        app.watcher.fill()
        worker = app.watcher.fill_worker
        await wait_until(pilot, reading.is_set, what="the fill worker to read a batch")
    # Left the app: it closed cleanly, the worker drew nothing once it was closing.
    assert released.wait(10)
    deadline = time.monotonic() + 10
    while not worker.is_finished and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert app.return_code in (None, 0)
    assert True not in shown_while_closing
    # Done, or cancelled at shutdown before it went on: never failed.
    assert worker.state in (WorkerState.SUCCESS, WorkerState.CANCELLED)


# -- the directory ---------------------------------------------------------------------------


async def test_a_deleted_directory_that_comes_back_is_listed_and_watched_again(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await settle(pilot)
        shutil.rmtree(runs)
        await wait_until(pilot, lambda: app.watcher.gone, what="the deletion")
        await pilot.pause()
        assert "was deleted" in screen_text(app) and "directory gone" in screen_text(app)
        assert app.runs_screen.run_list.rows == []

        copy_fixtures(runs)  # the directory is back, with its runs
        await wait_until(
            pilot, lambda: len(app.runs_screen.run_list.rows) == 8, what="the runs back"
        )
        await pilot.pause()
        assert not app.watcher.gone
        assert "Runs 8 · 2 interrupted · 2 failed" in screen_text(app)
        assert (
            app.runs_screen.timeline.run_id == app.runs_screen.run_list.current.run_id
        )  # a run is open again
        # ... and watched again: a run written now appears.
        await settle(pilot)
        big_log(runs / "after-return.jsonl", "BIGPROMPT back", turns=25)
        await wait_until(
            pilot, lambda: "after-return" in row_statuses(app), what="a new run after return"
        )
        await wait_until(pilot, lambda: app.source.get("after-return").complete, what="filled")


async def test_a_directory_missing_at_start_is_shown_once_it_is_made(tmp_path: Path) -> None:
    runs = tmp_path / "later"
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "later is gone" in screen_text(app)
        copy_fixtures(runs)
        await wait_until(pilot, lambda: len(app.runs_screen.run_list.rows) == 8, what="the runs")
        await settle(pilot)
        write_log(runs, VIENNA, FINISH_VIENNA)
        await wait_until(
            pilot, lambda: row_statuses(app)[VIENNA] == "completed", what="watching it"
        )


async def test_a_directory_deleted_and_made_again_at_once_is_watched_again(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await settle(pilot)
        # Gone and back before the app looks (`rm -r runs && cp -r saved runs`), one run fewer.
        shutil.rmtree(runs)
        copy_fixtures(runs)
        (runs / f"{IDS['failed']}.jsonl").unlink()
        await wait_until(
            pilot, lambda: len(app.runs_screen.run_list.rows) == 7, what="the new listing"
        )
        await settle(pilot)
        # The new directory is the one watched: what is written to it shows.
        write_log(runs, VIENNA, FINISH_VIENNA)
        await wait_until(pilot, lambda: row_statuses(app)[VIENNA] == "completed", what="the append")
