"""`F` forks the open run at the highlighted timeline line, in this process when an agent was
given (the fork opens live), else the screen says how to give one and shows the `agentor fork`
command. The parent's bytes never change; nothing recorded before the fork point runs again."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static, TextArea

from agentor.engine.store import FileStore
from tests.app_support import SIZE, OneAgent, app_for, notifications, screen_text, wait_until
from tests.forkkit import Weather, log_bytes, result_line, tool_messages
from tui.widgets.fork_screen import ForkScreen

PROMPT = "Weather in Vienna and Paris?"


async def weather_runs(tmp_path: Path) -> tuple[Path, FileStore, Weather, str]:
    """A runs directory holding one completed weather run (two calls, two results)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    store = FileStore(runs)
    w = Weather(store)
    run_id = (await w.agent.arun(PROMPT)).run_id
    w.ran.clear()
    return runs, store, w, run_id


async def open_at(pilot, app, run_id: str, line: int) -> None:
    """Select the run, focus its timeline, the cursor on `line` (1-based)."""
    assert app.run_list.select(run_id)
    await pilot.pause()
    app.open_run(run_id)
    app.screen.set_focus(app.timeline)
    app.timeline.move_cursor(line - 1)
    await pilot.pause()


def fork_rows(app, parent: str) -> list:
    return [r for r in app.source.rows() if r.forked_from == parent]


async def fork_done(pilot, app, parent: str):
    await wait_until(
        pilot,
        lambda: fork_rows(app, parent) and not app.forker.running,
        what="the fork to end",
    )
    await pilot.pause()
    [row] = fork_rows(app, parent)
    await wait_until(pilot, lambda: app.source.get(row.run_id).status == "completed")
    return app.source.get(row.run_id)


async def test_F_at_a_tool_result_edits_the_result_and_the_fork_runs_and_opens(
    tmp_path: Path,
) -> None:
    runs, store, w, parent = await weather_runs(tmp_path)
    before = log_bytes(store, parent)
    line = result_line(store, parent, "Paris")
    asked = len(w.agent.model.requests)
    app = app_for(runs, agents=OneAgent(w.agent))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, line)
        await pilot.press("F")
        await pilot.pause()
        assert isinstance(app.screen, ForkScreen)
        editor = app.screen.query_one("#fork-text", TextArea)
        assert editor.text == "Sunny in Paris."  # the recorded result, to edit
        assert f"at line {line}" in screen_text(app)
        editor.text = "Snow in Paris."
        await pilot.press("ctrl+s")
        row = await fork_done(pilot, app, parent)
        # The fork is open, selected, and its lineage is on screen.
        assert app.timeline.run_id == row.run_id
        assert app.run_list.current.run_id == row.run_id
        assert row.fork_at == line and row.fork_edit == "result edited"
        assert "heard: Sunny in Vienna. | Snow in Paris." in screen_text(app)
        lineage = f"⑂ forked from {parent} at line {line}: result edited"
        assert app.event_detail.text.startswith(lineage)
    # The model saw the edited result (and the other recorded one); no tool ran again.
    new = w.agent.model.requests[asked:]
    assert len(new) == 1
    assert sorted(tool_messages(new[0])) == ["Snow in Paris.", "Sunny in Vienna."]
    assert w.ran == []
    assert log_bytes(store, parent) == before
    assert store.load(row.run_id)[-2].text == "heard: Sunny in Vienna. | Snow in Paris."


async def test_F_at_a_generation_asks_again_with_a_message_added(tmp_path: Path) -> None:
    runs, store, w, parent = await weather_runs(tmp_path)
    before = log_bytes(store, parent)
    asked = len(w.agent.model.requests)
    app = app_for(runs, agents=OneAgent(w.agent))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, 2)  # the first generation
        await pilot.press("F")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ForkScreen)
        model = screen.query_one("#fork-model", Input)
        assert model.value == "weather-model"  # the run's model, to edit
        screen.query_one("#fork-input", Input).value = "And Rome?"
        await pilot.press("ctrl+s")
        row = await fork_done(pilot, app, parent)
        assert row.fork_edit == "input added" and row.fork_at == 2
    # The model was asked again with the message added; Rome's call ran, nothing before did.
    new = w.agent.model.requests[asked:]
    assert new[0][-1] == {"role": "user", "content": "And Rome?"}
    assert w.ran == ["Rome"]
    assert log_bytes(store, parent) == before


async def test_F_at_the_run_start_replaces_the_prompt(tmp_path: Path) -> None:
    runs, store, w, parent = await weather_runs(tmp_path)
    before = log_bytes(store, parent)
    app = app_for(runs, agents=OneAgent(w.agent))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, 1)
        await pilot.press("F")
        await pilot.pause()
        editor = app.screen.query_one("#fork-text", TextArea)
        assert editor.text == PROMPT
        editor.text = "Weather in Oslo?"
        await pilot.press("ctrl+s")
        row = await fork_done(pilot, app, parent)
        assert row.fork_edit == "prompt replaced" and row.fork_at == 1
        assert "heard: Sunny in Oslo." in screen_text(app)
    assert w.ran == ["Oslo"]
    assert log_bytes(store, parent) == before


async def test_F_on_another_line_says_what_can_be_forked(tmp_path: Path) -> None:
    runs, store, w, parent = await weather_runs(tmp_path)
    types = [e.type for e in store.load(parent)]
    call = types.index("tool_call") + 1
    app = app_for(runs, agents=OneAgent(w.agent))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, call)
        await pilot.press("F")
        await pilot.pause()
        assert not isinstance(app.screen, ForkScreen)
        [note] = notifications(app)
        assert f"Line {call} is a tool_call line: it cannot be forked." in note
        assert "a tool_result (a new result), a generation" in note
    assert fork_rows(app, parent) == []


async def test_F_without_an_agent_explains_and_shows_the_command(tmp_path: Path) -> None:
    runs, store, _, parent = await weather_runs(tmp_path)
    before = sorted(p.name for p in runs.iterdir())
    line = result_line(store, parent, "Vienna")
    app = app_for(runs, agents=OneAgent(None))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, line)
        await pilot.press("F")
        await pilot.pause()
        app.screen.query_one("#fork-text", TextArea).text = "Hail in Vienna."
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ForkScreen)  # the explanation stays until esc
        assert "This fork needs an agent to run it" in screen_text(app)
        text = app.screen.query_one("#fork-status", Static).content.plain
        assert "--agent path/to/file.py:agent" in text
        assert f"agentor fork {parent} --at {line} --result 'Hail in Vienna.'" in text
        assert f"--dir {runs}" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ForkScreen)
    assert sorted(p.name for p in runs.iterdir()) == before  # nothing written
