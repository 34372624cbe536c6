"""The timeline's own keys: `/` searches its events (n/N), e/E errors, t/T tool calls; and
what `v` (the raw JSON) and `y` (copy the value) do with the highlighted event."""

from __future__ import annotations

import json
from pathlib import Path

from agentor.testing import ScriptedModel
from tests.app_support import (
    IDS,
    SIZE,
    app_for,
    copy_fixtures,
    fixed_clock,
    notifications,
    screen_text,
    text_reply,
    wait_until,
    watcher_reports,
    weather_agent,
    write_log,
)
from tests.test_runs_index import write_big_log
from tui.app import RunsApp
from tui.text.event_value import COPY_LIMIT
from tui.text.styles import MATCH_STYLE
from tui.widgets.raw_event import RawEventScreen
from tui.widgets.timeline_search import SEARCH


def subtitle(app) -> str:
    """The timeline's bottom border as on screen: its subtitle says what a search found."""
    region = app.runs_screen.timeline.region
    row = screen_text(app).splitlines()[region.bottom - 1]
    return row[region.x : region.right]


def highlighted(app, index: int) -> list[str]:
    """The parts of timeline row `index` drawn as search matches."""
    row = app.runs_screen.timeline.render_row(index, 150)
    return [row.plain[s.start : s.end] for s in row.spans if str(s.style) == MATCH_STYLE]


async def test_slash_searches_the_timeline_and_n_and_N_go_from_match_to_match(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(IDS["parallel_calls"])
        await pilot.press("enter", "home")
        await pilot.press("slash")
        search = app.query_one("#search")
        assert app.focused is search and not app.runs_screen.runs_pane.filter_bar.display
        await pilot.press(*"PORTO")  # case does not matter
        await pilot.pause()
        # Matches show as you type; the cursor stays where it was.
        timeline = app.runs_screen.timeline
        assert timeline.cursor == 0
        assert timeline.finder.found[SEARCH] == [0, 1, 3, 5, 6, 7, 8]
        assert "/PORTO: 1 of 7 (n/N)" in subtitle(app)
        assert highlighted(app, 3) == ["Porto"] and highlighted(app, 4) == []
        rows = screen_text(app).splitlines()
        porto = next(x for x in rows if 'get_weather(city="Porto")' in x and "tool_call" in x)
        lisbon = next(x for x in rows if 'get_weather(city="Lisbon")' in x and "tool_call" in x)
        assert "▌tool_call" in porto and "▌tool_call" not in lisbon
        await pilot.press("enter")  # to the first match
        assert app.focused is timeline and timeline.cursor == 0
        await pilot.press("n", "n")
        assert timeline.cursor == 3
        assert "/PORTO: 3 of 7 (n/N)" in subtitle(app)
        await pilot.press("N", "N", "N")  # back past the first: around to the last
        assert timeline.cursor == 8
        assert "wrapped to the bottom" in subtitle(app)
        await pilot.press("n")
        assert timeline.cursor == 0 and "wrapped to the top" in subtitle(app)
        # `/` again shows the query; esc in the timeline clears the search, then goes back.
        await pilot.press("slash")
        assert search.value == "PORTO"
        await pilot.press("escape")
        assert app.focused is timeline and "/PORTO" not in subtitle(app)
        assert highlighted(app, 3) == []
        await pilot.press("slash", *"porto", "enter", "escape")
        assert app.focused is timeline and timeline.finder.query == ""
        await pilot.press("escape")
        assert app.focused is app.runs_screen.run_list
        # In the run list, `/` filters runs as before.
        await pilot.press("slash")
        assert (
            app.runs_screen.runs_pane.filter_bar.display
            and app.focused is app.runs_screen.runs_pane.filter_bar
        )
        assert not search.display


async def test_enter_in_the_search_goes_to_the_first_match_wherever_the_cursor_is(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(IDS["parallel_calls"])
        await pilot.press("enter")
        timeline = app.runs_screen.timeline
        timeline.move_cursor(4)  # between the matches of "porto": 0, 1, 3, then 5
        await pilot.press("slash", *"porto", "enter")
        await wait_until(pilot, lambda: timeline.finder.found[SEARCH], what="the matches")
        assert timeline.finder.found[SEARCH][:4] == [0, 1, 3, 5]
        await wait_until(pilot, lambda: timeline.cursor == 0, what="the first match")
        assert "/porto: 1 of 7 (n/N)" in subtitle(app) and "wrapped" not in subtitle(app)
        await pilot.press("n")
        assert timeline.cursor == 1


async def test_the_detail_shows_the_match_a_search_entered_goes_to(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(IDS["crash_after_tool_result"])
        await pilot.press("enter")  # the timeline, at its last line (4, a tool_result)
        await pilot.pause()
        assert (
            app.runs_screen.timeline.cursor == 3
            and "tool_result · turn 1 · line 4" in app.runs_screen.event_detail.text
        )
        await pilot.press("slash", *"run_start", "enter")
        await wait_until(
            pilot, lambda: app.runs_screen.timeline.cursor == 0, what="the first match"
        )
        await wait_until(
            pilot,
            lambda: app.runs_screen.event_detail.text.startswith("run_start · line 1"),
            what="its detail",
        )
        assert "Detail · run_start · line 1" in screen_text(app)


async def test_a_search_finds_text_as_json_escapes_it(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    # Upstream writes ASCII escapes: "22°C" is `22\u00b0C` in the file, a quote is `\"`.
    lines = [
        {"type": "run_start", "agent": "A", "messages": [{"role": "user", "content": "hi"}]},
        {"type": "tool_result", "name": "f", "result": 'It said "22°C"', "turn": 1},
        {"type": "message", "text": "nothing here", "turn": 1},
    ]
    (runs / "r.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert "\\u00b0" in (runs / "r.jsonl").read_text()
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "home", "slash")
        app.query_one("#search").value = '"22°c"'  # typed (or pasted)
        await pilot.press("enter")
        assert app.runs_screen.timeline.finder.found[SEARCH] == [1]
        assert app.runs_screen.timeline.cursor == 1
        await pilot.press("slash")
        app.query_one("#search").value = "[b]no such\x1b[2J text"  # shown literally
        await pilot.press("enter")
        assert "/[b]no such␛[2J text: no match" in subtitle(app)
        assert "/[b]no such␛[2J text: no match" in screen_text(app)
        assert app.runs_screen.timeline.cursor == 1


async def test_searching_100000_events_runs_off_the_screens_thread(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    path = runs / "big.jsonl"
    write_big_log(path, 100_000)
    expected = [n for n, line in enumerate(path.read_text().splitlines()) if "c777" in line]
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        timeline = app.runs_screen.timeline
        assert len(timeline.run_log) == 100_000
        timeline.search("C777")
        # The call came back before any result: the scan runs in a thread.
        assert not timeline.finder.complete(SEARCH, 100_000)
        await pilot.pause()
        assert "searching…" in screen_text(app) or timeline.finder.complete(SEARCH, 100_000)
        await wait_until(pilot, lambda: timeline.finder.complete(SEARCH, 100_000), what="search")
        assert timeline.finder.found[SEARCH] == expected and len(expected) > 10
        timeline.move_cursor(0)
        await pilot.press("n")
        assert timeline.cursor == expected[0]
        assert f"/C777: 1 of {len(expected)} (n/N)" in subtitle(app)
        # A jump waits for its scan (in a thread too), then lands.
        timeline.move_cursor(0)
        await pilot.press("t")
        await wait_until(pilot, lambda: timeline.cursor == 2, what="the first tool call")
        await pilot.press("e")
        await wait_until(pilot, lambda: "no error below" in subtitle(app), what="no error")
        # A search replaced by another: only the last one's matches are kept.
        timeline.search("c12345")
        timeline.search("c54321")
        await wait_until(pilot, lambda: timeline.finder.complete(SEARCH, 100_000), what="search")
        text = path.read_text().splitlines()
        assert timeline.finder.found[SEARCH] == [n for n, x in enumerate(text) if "c54321" in x]


def error_log(runs: Path) -> Path:
    """A run with errors of each kind among tool calls, over two segments."""
    events = [
        {"type": "run_start", "agent": "A", "messages": [{"role": "user", "content": "go"}]},
        {"type": "generation", "turn": 1, "calls": [{"id": "a"}, {"id": "b"}]},
        {"type": "tool_call", "name": "f", "call_id": "a", "turn": 1},  # 2
        {"type": "tool_call", "name": "g", "call_id": "b", "turn": 1},  # 3
        {"type": "tool_result", "name": "f", "call_id": "a", "result": 1, "turn": 1},
        {"type": "tool_result", "name": "g", "call_id": "b", "error": "boom", "turn": 1},  # 5
        {"type": "run_end", "status": "failed", "error": "HTTP 500"},  # 6
        {"type": "run_start", "agent": "A"},
        {"type": "tool_call", "name": "f", "call_id": "c", "turn": 2},  # 8
    ]
    path = write_log(runs, "errs", events)
    with path.open("a") as f:
        f.write('{"type": "tool_result", "na\n')  # 9: an unreadable line
        f.write(json.dumps({"type": "run_end", "status": "max_turns", "turn": 2}) + "\n")  # 10
        f.write(json.dumps({"type": "message", "text": "after"}) + "\n")
    return path


async def test_e_and_t_jump_to_errors_and_tool_calls_g_and_G_to_the_ends(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    error_log(runs)
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "g")
        timeline = app.runs_screen.timeline
        assert timeline.cursor == 0
        visited = []
        for _ in range(4):
            await pilot.press("e")
            visited.append(timeline.cursor)
        assert visited == [5, 6, 9, 10]
        await pilot.press("e")
        assert timeline.cursor == 10 and "no error below" in subtitle(app)
        await pilot.press("E", "E")
        assert timeline.cursor == 6
        await pilot.press("g", "t", "t", "t")
        assert timeline.cursor == 8
        await pilot.press("t")
        assert timeline.cursor == 8 and "no tool call below" in subtitle(app)
        await pilot.press("T")
        assert timeline.cursor == 3 and "no tool call" not in subtitle(app)
        await pilot.press("G")
        assert timeline.cursor == 11
        await pilot.press("k", "k", "j")
        assert timeline.cursor == 10
        # From the command palette, from the run list: the timeline takes the focus.
        await pilot.press("escape")
        assert app.focused is app.runs_screen.run_list
        titles = {c.title: c for c in app.get_system_commands(app.screen)}
        titles["Previous error"].callback()
        await pilot.pause()
        assert app.focused is timeline and timeline.cursor == 9


async def engine_run(runs: Path) -> str:
    """A run the engine wrote (compact: its second generation is a delta)."""
    model = ScriptedModel([])
    model.replies = [model.calls(("get_weather", {"city": "Oslo"})), text_reply("Sunny in Oslo.")]
    done = await weather_agent(runs, model).arun("Weather in Oslo?")
    return done.run_id


async def test_v_shows_the_line_as_json_and_a_compact_generation_decoded(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_id = await engine_run(runs)
    lines = (runs / f"{run_id}.jsonl").read_text().splitlines()
    assert '"messages_delta"' in lines[4]  # the second generation
    with (runs / f"{run_id}.jsonl").open("a") as f:
        f.write("not json \x1b[2J\u202e here\n")  # an unreadable line, escape sequence and all
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "home", *["down"] * 4, "v")
        await pilot.pause()
        assert isinstance(app.screen, RawEventScreen)
        text = app.screen.query_one("#raw").text
        assert text.startswith(f"── As written in the file (line 5, {len(lines[4]) + 1:,} bytes)")
        assert '"messages_delta": {' in text
        decoded = text.split("── Decoded: the generation with its request rebuilt")[1]
        assert '"messages_delta"' not in decoded
        assert '"role": "tool"' not in decoded.split('"messages"')[0]
        assert '"content": "The weather in Oslo is sunny and 22C."' in decoded  # the full request
        assert f"Raw JSON · {run_id[:8]} · line 5" in screen_text(app)
        await pilot.press("escape")
        assert (
            not isinstance(app.screen, RawEventScreen) and app.focused is app.runs_screen.timeline
        )
        # An unreadable line, shown as it is, literally.
        await pilot.press("G", "v")
        await pilot.pause()
        text = app.screen.query_one("#raw").text
        assert "not JSON, shown as it is" in text
        assert "not json ␛[2J\\u202e here" in text and "\x1b" not in text
        await pilot.press("v")
        assert not isinstance(app.screen, RawEventScreen)


async def test_y_copies_the_events_value_and_says_what_it_copied(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_id = await engine_run(runs)
    lines = (runs / f"{run_id}.jsonl").read_text().splitlines()
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        expected = {
            3: ("tool result", "The weather in Oslo is sunny and 22C."),
            4: ("generation text", "Sunny in Oslo."),
            6: ("final text", "Sunny in Oslo."),
            2: ("event JSON", lines[2]),  # a tool call: the line as it is
        }
        for index, (what, value) in expected.items():
            app.runs_screen.timeline.move_cursor(index)
            await pilot.press("y")
            assert app.clipboard == value
            note = notifications(app)[-1]
            assert note.startswith(f"Copied the {what} ({len(value):,} characters): ")
            assert value[:40] in note
    # A result the clipboard cannot take as it is (a lone surrogate), and markup: shown
    # literally, copied with the surrogate replaced.
    odd = tmp_path / "odd"
    odd.mkdir()
    result = "[bold]files[/bold] \udcff.txt\x1b[2J"
    line = json.dumps({"type": "tool_result", "name": "ls", "result": result})  # \udcff escaped
    (odd / "odd.jsonl").write_text(line + "\n")
    app = app_for(odd)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "y")
        assert app.clipboard == result.encode("utf-8", "replace").decode("utf-8")
        assert notifications(app)[-1].endswith("[bold]files[/bold] \\udcff.txt␛[2J")


async def test_y_on_a_huge_value_copies_its_beginning_and_says_so(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    result = "".join(f"{i:09d}\n" for i in range(30_000))  # 300,000 characters
    line = json.dumps({"type": "tool_result", "name": "dump", "result": result})
    (runs / "huge.jsonl").write_text(line + "\n")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "y")
        assert app.clipboard == result[:COPY_LIMIT] and COPY_LIMIT == 100_000
        assert notifications(app)[-1].startswith(
            "Copied the first 100,000 of the 300,000 characters of the tool result (the "
            "clipboard takes no more through the terminal; w writes the whole run to a file): "
            "000000000⏎000000001⏎"
        )


async def test_a_run_named_on_the_command_line_opens_selected_and_focused(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    run_id = IDS["half_finished_crash"]
    app = RunsApp(runs, watch=False, clock=fixed_clock, run_id=run_id)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert (
            app.runs_screen.run_list.current is not None
            and app.runs_screen.run_list.current.run_id == run_id
        )
        assert app.runs_screen.timeline.run_id == run_id and app.focused is app.runs_screen.timeline
        assert f"Timeline · {run_id[:8]} · 3 lines" in screen_text(app)
        assert len(app.runs_screen.run_list.rows) == 8  # the whole directory is listed
    gone = RunsApp(runs, watch=False, clock=fixed_clock, run_id="deleted-meanwhile")
    async with gone.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert notifications(gone) == [f"Run deleted-meanwhile is not in {runs}."]


async def test_a_search_takes_in_the_lines_a_live_run_appends(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    run_id = IDS["crash_after_tool_result"]
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(run_id)
        await pilot.press("enter", "slash", *"vienna", "enter")
        timeline = app.runs_screen.timeline
        before = list(timeline.finder.found[SEARCH])
        assert before and "vienna: " in subtitle(app)
        path = runs / f"{run_id}.jsonl"
        with path.open("a") as f:
            f.write(json.dumps({"type": "message", "text": "Vienna is sunny.", "turn": 2}) + "\n")
            f.write(json.dumps({"type": "message", "text": "Nothing to see.", "turn": 2}) + "\n")
        watcher_reports(app, [path])  # what the watcher reports
        await pilot.pause()
        assert timeline.finder.found[SEARCH] == [*before, 4]
        assert f"/vienna: 1 of {len(before) + 1} (n/N)" in subtitle(app)  # on the first one
        assert highlighted(app, 4) == ["Vienna"] and highlighted(app, 5) == []
