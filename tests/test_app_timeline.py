"""The timeline of the selected run and the detail of the highlighted event."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from agentor import Agentor, function_tool
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.fleet.claims import ClaimingStore, Claims, Wanted
from agentor.testing import ScriptedModel
from tests.app_support import (
    IDS,
    SIZE,
    app_for,
    copy_fixtures,
    screen_text,
    terminal_output,
    write_log,
)
from tests.approvalkit import TRAVEL_PROMPT, Travel
from tests.conftest import crash_after_tool_result
from tests.test_mcp import agentor_show


async def select(pilot, app, run_id: str) -> None:
    assert app.runs_screen.run_list.select(run_id)
    await pilot.pause()
    assert app.runs_screen.timeline.run_id == run_id


async def test_timeline_has_one_line_per_event_with_offsets_and_summaries(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, IDS["completed"])
        screen = screen_text(app)
        rows = [x for x in screen.splitlines()[18:] if "│" in x]
        timeline = [x.split("││")[0] for x in rows]
        expected = [
            ("+0.00s", "run_start", "Travel Agent · gpt-4o-mini · What is the weather in Lisbon?"),
            ("generation", "1", '→ get_weather(city="Lisbon")  33→12 tok'),
            ("tool_call", "1", 'get_weather(city="Lisbon")'),
            ("tool_result", "1", "get_weather → The weather in Lisbon is sunny and 22C."),
            ("generation", "2", "The weather in Lisbon is sunny and 22°C.  101→12 tok"),
            ("message", "2", "The weather in Lisbon is sunny and 22°C."),
            ("run_end", "2", "completed · The weather in Lisbon is sunny and 22°C."),
        ]
        for line, parts in zip(timeline, expected, strict=False):
            for part in parts:
                assert part in line, (part, line)
        # It opens at the end: the run_end is highlighted and the detail shows it.
        assert app.runs_screen.timeline.cursor == 6
        assert "Timeline · 32e80341 · 7 lines" in screen
        assert "run_end · turn 2 · line 7" in screen
        assert "following" in screen


async def test_detail_shows_the_request_as_a_conversation_and_values_as_json(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, IDS["completed"])
        await pilot.press("enter")  # into the timeline
        await pilot.press("up", "up")  # the second generation
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert detail.startswith("generation · turn 2 · line 5")
        assert f"run      {IDS['completed']}" in detail  # the full id
        assert "usage    in 101 · out 12 · total 113" in detail
        # The request rebuilt in full (upstream writes it whole; ours is a delta).
        assert "Request (4 messages)" in detail
        for role in ("system", "user", "assistant", "tool"):
            assert f"\n{role}" in detail
        assert '→ get_weather(city="Lisbon")' in detail
        assert "Response\n  The weather in Lisbon is sunny and 22°C." in detail
        await pilot.press("up", "up")  # the tool call: its arguments as pretty JSON
        await pilot.pause()
        assert 'Arguments\n  {\n    "city": "Lisbon"\n  }' in app.runs_screen.event_detail.text
        await pilot.press("down")
        await pilot.pause()
        assert (
            "Result\n  The weather in Lisbon is sunny and 22C." in app.runs_screen.event_detail.text
        )
        # The detail scrolls: enter moves into it.
        await pilot.press("enter")
        assert app.focused is app.runs_screen.event_detail


async def test_resume_segments_are_marked(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, IDS["resumed_two_segments"])
        assert app.runs_screen.timeline.run_log.segment_starts == [0, 3]
        screen = screen_text(app)
        assert "▶ resumed · segment 2" in screen
        assert screen.count("run_start") == 2


async def test_failed_run_shows_its_error_in_the_timeline_and_detail(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, IDS["failed"])
        screen = screen_text(app)
        assert "failed · InternalServerError: Error code: 500" in screen
        assert "Error\n  InternalServerError: Error code: 500" in app.runs_screen.event_detail.text


async def test_bad_lines_show_as_unreadable_lines_never_as_events(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    path = write_log(
        runs,
        "torn",
        [
            {"type": "run_start", "agent": "A", "model": "m", "started_at": 1796039000.0},
            {"type": "tool_call", "name": "f", "args": {}, "call_id": "c", "ts": 1796039001.0},
        ],
    )
    with path.open("ab") as f:
        f.write(b'{"type": "tool_result", "na\n')  # corrupt, but whole
        f.write(b'{"type": "tool_result", "name": "f", "result": 1, "ts": 1796039002.0}\n')
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "torn")
        screen = screen_text(app)
        assert "unreadable line 3: not JSON" in screen
        # The list row stays readable and says what is wrong with the file.
        assert "interrupted" in screen and "⚠ 1 bad line; first at byte" in screen
        assert "f → 1" in screen
        assert len(app.runs_screen.timeline.run_log) == 4
        await pilot.press("enter", "up")
        await pilot.pause()
        assert app.runs_screen.event_detail.text.startswith("unreadable line 3")
        assert '{"type": "tool_result", "na' in app.runs_screen.event_detail.text


async def test_huge_values_are_cut_with_a_note(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    big = "x" * 50_000 + "\n" + "y" * 30_000
    write_log(
        runs,
        "big",
        [
            {"type": "run_start", "agent": "A", "model": "m", "started_at": 1796039000.0},
            {"type": "tool_result", "name": "dump", "result": big, "call_id": "c", "turn": 1},
        ],
    )
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "big")
        detail = app.runs_screen.event_detail.text
        assert "… cut: 72,001 more characters, 1 more lines not shown" in detail
        assert len(detail) < 10_000
        assert "dump → xxxx" in screen_text(app)


async def test_a_run_of_100000_events_opens_at_its_end_decoding_only_what_shows(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    start = json.dumps({"type": "run_start", "agent": "Long", "model": "m", "ts": 1796030000.0})
    step = '{"type": "tool_result", "name": "step", "result": %d, "turn": %d, "ts": %.2f}\n'
    steps = "".join(step % (i, i // 2, 1796030000.0 + i / 100) for i in range(1, 100_000))
    (runs / "long.jsonl").write_text(start + "\n" + steps)
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "long")
        log = app.runs_screen.timeline.run_log
        assert len(log) == 100_000
        assert app.runs_screen.timeline.cursor == 99_999
        screen = screen_text(app)
        assert "step → 99999" in screen and "+16m39s" in screen
        assert "Timeline · long · 100,000 lines" in screen
        # Only the lines on screen (and the first, for the start time) were decoded.
        assert log.decoded < 100
        await pilot.press("enter", "home")
        await pilot.pause()
        assert "Long · m" in screen_text(app)
        assert log.decoded < 200


async def test_a_message_whose_tool_calls_are_not_a_list_is_shown_not_a_crash(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    odd = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": 5},
        {"role": "assistant", "content": "ok", "tool_calls": {"id": "c1"}},
    ]
    write_log(runs, "odd", [{"type": "run_start", "agent": "A", "messages": odd}])
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "odd")
        detail = app.runs_screen.event_detail.text
        assert "Input (3 messages)" in detail and "ok" in detail


async def test_times_out_of_any_range_are_shown_not_a_crash(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    path = runs / "wild.jsonl"
    # Python's JSON reads Infinity and NaN; a finite 1e300 is past every calendar.
    path.write_text(
        '{"type": "run_start", "agent": "A", "started_at": 1e300, "ts": 1e300}\n'
        '{"type": "message", "text": "x", "ts": Infinity}\n'
        '{"type": "run_end", "status": "completed", "started_at": -1e300, "ended_at": NaN}\n'
    )
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, "wild")
        for key in ("up", "up"):
            await pilot.press("enter", key)
            await pilot.pause()
            assert app.runs_screen.event_detail.text
        screen = screen_text(app)
        assert "wild" in screen and "run_start" in screen


async def test_a_generations_detail_shows_the_tools_offered_and_the_settings_of_its_segment(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"

    @function_tool
    def get_weather(city: str) -> str:
        """Look the weather up. [red]Not markup[/red]

        Args:
            city: The city to look up.
        """
        return f"Sunny in {city}."

    def agent(temperature: float, *replies: ModelResponse) -> Agentor:
        model = ScriptedModel([*replies, ScriptedModel.text("Sunny.")])
        model.settings = {"temperature": temperature, "seed": 7}
        return Agentor("Travel Agent", model=model, tools=[get_weather], store=FileStore(runs))

    ask = ScriptedModel([]).calls(("get_weather", {"city": "Oslo"}))
    first = await agent(0.2, ask).arun("Weather in Oslo?")
    crash_after_tool_result(runs / f"{first.run_id}.jsonl")
    resumed = await agent(0.9).aresume(first.run_id)  # segment 2, other settings
    assert resumed.status == "completed"

    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, first.run_id)
        await pilot.press("enter", "up", "up")  # segment 2's generation
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert detail.startswith("generation · turn 2 · line 6")
        tools = detail[detail.index("Tools offered (1)\n") :]
        assert tools.startswith(
            "Tools offered (1)\n  get_weather\n    Look the weather up. [red]Not markup[/red]"
        )
        assert '"city": {' in tools and '"description": "The city to look up."' in tools
        settings = detail[detail.index("\nSettings\n") :]
        assert settings == "\nSettings\n  temperature  0.9\n  seed         7"
        await pilot.press("up", "up", "up", "up")  # segment 1's generation
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert detail.startswith("generation · turn 1 · line 2")
        assert "Tools offered (1)\n  get_weather" in detail
        assert detail.endswith("\nSettings\n  temperature  0.2\n  seed         7")


async def test_an_upstream_generation_names_no_tools_and_shows_none(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, IDS["completed"])
        await pilot.press("enter", "up", "up")
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert detail.startswith("generation · turn 2")
        assert "Tools offered" not in detail and "Settings" not in detail


async def test_a_workers_claim_and_release_say_who_took_the_run_where_and_which_attempt(
    tmp_path: Path,
) -> None:
    """A worker's claim and release, as `ClaimingStore` writes them, read as `agentor show`
    says them (`claim by w1 (process 26135 on vm), attempt 1`), never as a list of field
    names; the worker's name (a log may hold anything) is shown literally."""
    runs = tmp_path / "runs"
    store = FileStore(runs)
    run_id = Travel(store).agent.submit(TRAVEL_PROMPT)
    worker = "w1\x1b]52;c;aGk=\x07"  # an OSC 52: would write the clipboard
    claiming = ClaimingStore(store, Claims(Wanted(frozenset({"Travel Agent"})), worker=worker))
    with claiming.lock(run_id):
        pass  # let go without a run_end: a release says so
    where = f"(process {os.getpid()} on {socket.gethostname()})"
    shown = "w1␛]52;c;aGk=␇"
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, run_id)
        rows = screen_text(app)
        timeline = [r.split("││")[0] for r in rows.splitlines()]
        [claim] = [r for r in timeline if " claim " in r and " by " in r]
        assert f" by {shown} {where}, attempt 1 " in claim
        [release] = [r for r in timeline if " release " in r and " by " in r]
        assert f" by {shown} {where}: the resume ended without" in release
        assert "(attempt)" not in rows and "\x1b]52" not in terminal_output(app)
        app.runs_screen.timeline.move_cursor(1)
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert f"by       {shown}" in detail and "attempt  1" in detail
        assert "A worker of a fleet took the run" in detail
        assert "Other fields" not in detail
    told = agentor_show(runs, run_id)  # the same sentence, from the same function
    assert f"claim             by {shown} {where}, attempt 1\n" in told
