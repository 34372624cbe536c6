"""The run list: statuses of upstream and engine-written runs, the title, filters, keys."""

from __future__ import annotations

import re
from pathlib import Path

from agentor.engine.events import Event
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.app_support import (
    IDS,
    MANIFEST,
    SAMPLE_MANIFEST,
    SIZE,
    app_for,
    copy_fixtures,
    copy_samples,
    priced,
    row_statuses,
    screen_text,
    text_reply,
    toasts,
    weather_agent,
    write_log,
)


async def test_upstream_runs_are_listed_newest_first_with_their_statuses(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        statuses = row_statuses(app)
        assert statuses == {spec["run_id"]: spec["expect"] for spec in MANIFEST.values()}
        rows = app.runs_screen.run_list.rows
        started = [r.sort_key for r in rows]
        assert started == sorted(started, reverse=True)
        # A fork by when it was made (its `fork` event), not by its copy of its parent's start.
        fork = next(r for r in rows if r.run_id == MANIFEST["fork"]["run_id"])
        assert fork.sort_key == 1796037209.7920072 > fork.summary.started_at
        assert [r.summary.started_at for r in rows if r is not fork] == sorted(
            (r.summary.started_at for r in rows if r is not fork), reverse=True
        )
        screen = screen_text(app)
        assert "Runs 8 · 2 interrupted · 2 failed" in screen
        # One line per run: status word, short id, agent, model, relative start, prompt.
        line = next(x for x in screen.splitlines() if IDS["half_finished_crash"][:8] in x)
        for part in ("interrupted", "Travel Agent", "gpt-4o-mini", "46m ago", "Prague"):
            assert part in line
        failed = next(x for x in screen.splitlines() if IDS["failed"][:8] in x)
        assert "failed" in failed and "InternalServerEr" in failed
        assert "max_turns" in screen


async def test_the_sample_runs_show_the_statuses_their_manifest_names(tmp_path: Path) -> None:
    runs = copy_samples(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert row_statuses(app) == {s["run_id"]: s["expect"] for s in SAMPLE_MANIFEST.values()}
        long_run = SAMPLE_MANIFEST["long_run"]["run_id"]
        line = next(x for x in screen_text(app).splitlines() if long_run[:8] in x)
        assert "Trip Planner" in line and " 31 " in line and "48.9k" in line


async def test_the_sample_runs_show_what_they_cost(tmp_path: Path) -> None:
    runs = copy_samples(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        lines = screen_text(app).splitlines()
        for name, sample in SAMPLE_MANIFEST.items():
            line = next(x for x in lines if sample["run_id"][:8] in x)
            assert re.search(r" \$0\.\d+  ", line), (name, line)  # the cost column: money
        assert any(re.search(r"─ cost \$0\.\d+ ─", x) for x in lines)  # the list's sum


async def test_engine_written_runs_show_turns_tools_and_tokens(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    model = ScriptedModel([])
    model.replies = [model.calls(("get_weather", {"city": "Oslo"})), text_reply("Sunny in Oslo.")]
    done = await weather_agent(runs, model).arun("Weather in Oslo?")
    # A crash after the tool result: the log as a killed process leaves it.
    crashed = "crashed-run"
    store = FileStore(runs)
    store.append_many(
        crashed,
        [
            Event(
                "run_start",
                agent="Travel Agent",
                model="scripted",
                started_at=NOW_ISH,
                messages=[{"role": "user", "content": "Weather in Rome?"}],
            ),
            Event(
                "generation",
                turn=1,
                calls=[
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
                    }
                ],
                messages=[{"role": "user", "content": "Weather in Rome?"}],
            ),
            Event("tool_call", name="get_weather", args={"city": "Rome"}, call_id="c1", turn=1),
        ],
    )
    (runs / "broken.jsonl").mkdir()  # a directory where a log should be
    (runs / "empty.jsonl").write_bytes(b"")

    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        statuses = row_statuses(app)
        assert statuses[done.run_id] == "completed"
        assert statuses[crashed] == "interrupted"
        assert statuses["broken"] == "unreadable"
        assert statuses["empty"] == "unreadable"
        screen = screen_text(app)
        line = next(x for x in screen.splitlines() if done.run_id[:8] in x)
        assert line.split()[1] == "completed"
        # 2 turns, 1 tool call, 6 + 49 tokens, the first prompt.
        assert "  2      1       55          –  Weather in Oslo?" in line  # no price: scripted
        assert "is a directory" in screen and "empty file" in screen
        assert "Runs 4 · 1 interrupted · 2 unreadable" in screen


NOW_ISH = 1796039000.0


async def test_filter_narrows_as_you_type_enter_selects_first_match_esc_clears(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        assert app.focused is app.query_one("#filter")
        await pilot.press(*"prag")
        await pilot.pause()
        shown = {r.run_id for r in app.runs_screen.run_list.rows}
        assert shown == {IDS["half_finished_crash"], IDS["resumed_two_segments"]}
        assert "Runs 2 of 8" in screen_text(app)
        await pilot.press("space", *"int")  # words narrow further: prompt and status
        await pilot.pause()
        assert [r.run_id for r in app.runs_screen.run_list.rows] == [IDS["half_finished_crash"]]
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is app.runs_screen.run_list
        assert app.runs_screen.run_list.current.run_id == IDS["half_finished_crash"]
        assert app.runs_screen.timeline.run_id == IDS["half_finished_crash"]
        assert "filter: prag int" in screen_text(app)
        await pilot.press("escape")  # in the list: drops the filter
        await pilot.pause()
        assert len(app.runs_screen.run_list.rows) == 8

        # By id, agent and model too; esc in the filter clears it.
        await pilot.press("slash", *IDS["failed"][:4])
        await pilot.pause()
        assert [r.run_id for r in app.runs_screen.run_list.rows] == [IDS["failed"]]
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.runs_screen.run_list.rows) == 8 and app.focused is app.runs_screen.run_list
        await pilot.press("slash", *"zzz")
        await pilot.pause()
        assert app.runs_screen.run_list.rows == []
        await pilot.press("escape")
        await pilot.press("slash", *"GPT")
        await pilot.pause()
        assert len(app.runs_screen.run_list.rows) == 8


async def test_s_cycles_the_status_filter(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        seen = []
        for _ in range(4):
            await pilot.press("s")
            await pilot.pause()
            seen.append(sorted({r.status for r in app.runs_screen.run_list.rows}))
        assert seen == [
            ["failed", "interrupted", "max_turns"],
            ["failed", "max_turns"],
            ["completed"],
            ["completed", "failed", "interrupted", "max_turns"],
        ]
        await pilot.press("s")
        assert "status: needs attention" in screen_text(app)


async def test_enter_and_tab_move_into_timeline_and_detail_and_esc_comes_back(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.focused is app.runs_screen.run_list
        await pilot.press("down", "enter")
        assert app.focused is app.runs_screen.timeline
        assert app.runs_screen.timeline.run_id == app.runs_screen.run_list.rows[1].run_id
        await pilot.press("enter")
        assert app.focused is app.runs_screen.event_detail
        await pilot.press("escape")
        assert app.focused is app.runs_screen.timeline
        await pilot.press("escape")
        assert app.focused is app.runs_screen.run_list
        await pilot.press("tab")
        assert app.focused is app.runs_screen.timeline
        await pilot.press("tab")
        assert app.focused is app.runs_screen.event_detail


async def test_a_click_selects_a_run(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.click("#runs", offset=(5, 3))  # below the header line: the third run
        await pilot.pause()
        assert app.runs_screen.run_list.cursor == 2
        assert app.runs_screen.timeline.run_id == app.runs_screen.run_list.rows[2].run_id


async def test_c_copies_the_run_id_and_the_notice_shows_it_whole(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        first = app.runs_screen.run_list.rows[0].run_id
        assert app.clipboard == first
        # Whole and on a line of its own, to copy by hand where OSC 52 is ignored.
        assert toasts(app) == [f"Copied run id\n{first}"]
        assert any(f"▌ {first}" in line for line in screen_text(app).splitlines())


async def test_help_screen_and_command_palette_list_every_key(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        footer = screen_text(app).splitlines()[-1]
        for key in (
            "/ Filter",
            "s Status",
            "r Resume",
            "x Stop",
            "f Follow",
            "c Copy id",
            "? Help",
            "q Quit",
        ):
            assert key in footer
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        for key in (
            "/",
            "esc",
            "enter, tab",
            "cycle the status filter",
            "resume",
            "stop the",
            "follow",
            "copy the run id",
            "quit",
        ):
            assert key in text
        await pilot.press("escape")
        await pilot.pause()
        assert "cycle the status filter" not in screen_text(app)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {
            "Filter runs",
            "Cycle status filter",
            "Resume run",
            "Stop resume",
            "Follow",
            "Copy run id",
            "Help",
            "Quit",
        } <= titles


async def test_a_missing_directory_is_a_message_not_a_crash(tmp_path: Path) -> None:
    app = app_for(tmp_path / "nowhere")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.runs_screen.run_list.rows == []
        assert "nowhere is gone" in screen_text(app)


def test_the_help_screen_colours_each_status_as_the_run_list_does() -> None:
    from rich.table import Table

    from tui.text.run_line import status_word
    from tui.text.styles import STATUS_STYLES
    from tui.widgets.help_screen import STATUSES, help_text

    table = [p for p in help_text().renderables if isinstance(p, Table)][-1]
    words = {cell.plain: cell.style for cell in table.columns[0]._cells}
    assert {word for word, _ in STATUSES} == set(STATUS_STYLES)
    # Each status as the list's status column writes it ("awaiting"), in the list's colour.
    assert words == {status_word(status): style for status, style in STATUS_STYLES.items()}


async def test_a_filter_that_hides_every_run_says_so_not_no_runs_yet(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"zzz", "enter")
        await pilot.pause()
        screen = screen_text(app)
        assert "No runs yet." not in screen
        assert "No run matches the filter" in screen
        await pilot.press("escape")
        await pilot.pause()
        assert "No run matches the filter" not in screen_text(app)


async def test_runs_named_by_their_callers_show_their_whole_names(tmp_path: Path) -> None:
    runs = copy_samples(tmp_path / "runs")
    start = {
        "type": "run_start",
        "agent": "Nightly",
        "messages": [{"role": "user", "content": "go"}],
    }
    write_log(runs, "job-7", [start])
    write_log(runs, "nightly-report-2026-11-30-eu-west", [start])
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        lines = screen_text(app).splitlines()
        header = next(x for x in lines if " id " in x and "prompt" in x)
        named = next(x for x in lines if "nightly-report" in x)
        # The id column widens to the longest name (cut at 20 cells); generated ids keep 8.
        assert "nightly-report-2026…" in named and "Nightly" in named
        assert any("job-7 " in x for x in lines)
        uuid_line = next(x for x in lines if SAMPLE_MANIFEST["long_run"]["run_id"][:8] in x)
        assert SAMPLE_MANIFEST["long_run"]["run_id"][:9] not in uuid_line
        assert header.index("agent") == named.index("Nightly") == uuid_line.index("Trip Planner")
        app.runs_screen.run_list.select("nightly-report-2026-11-30-eu-west")
        await pilot.pause()
        assert "Timeline · nightly-report-2026…" in screen_text(app)


def test_short_ids() -> None:
    from tui.text.formatting import short_id

    assert short_id("cabc9046ac5040298aa362c0d6d2c5c5") == "cabc9046"
    assert short_id("3F2B6C1E-8D4A-4E2B-9C1A-7F6E5D4C3B2A") == "3F2B6C1E"
    assert short_id("job-7") == "job-7"
    assert short_id("resumedc543548d886efde61e1f1c8e3") == "resumedc543548d886e…"
    assert len(short_id("x" * 128)) == 20
