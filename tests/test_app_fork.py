"""`F` forks the open run at the highlighted timeline line, in this process when an agent was
given (the fork opens live), else the screen says how to give one and shows the `agentor fork`
command. The parent's bytes never change; nothing recorded before the fork point runs again."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Select, Static, TextArea

from agentor import Agentor
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.app_support import (
    IDS,
    SAMPLE_MANIFEST,
    SIZE,
    FailingModel,
    GatedModel,
    OneAgent,
    app_for,
    copy_fixtures,
    copy_samples,
    notifications,
    screen_text,
    text_reply,
    wait_until,
    weather_agent,
    write_log,
)
from tests.forkkit import Weather, log_bytes, result_line, tool_messages
from tests.openai_server import FakeOpenAI
from tests.test_fork_samples import Tools
from tui.text.fork_text import ForkRequest
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
    assert app.runs_screen.run_list.select(run_id)
    await pilot.pause()
    app.runs_screen.open_run(run_id)
    app.screen.set_focus(app.runs_screen.timeline)
    app.runs_screen.timeline.move_cursor(line - 1)
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
        await pilot.press(*"Snow")  # it is selected: what is typed replaces it
        assert editor.text == "Snow"
        await pilot.press(*" in Paris.")
        await pilot.press("ctrl+s")
        row = await fork_done(pilot, app, parent)
        # The fork is open, selected, and its lineage is on screen.
        assert app.runs_screen.timeline.run_id == row.run_id
        assert app.runs_screen.run_list.current.run_id == row.run_id
        assert row.fork_at == line and row.fork_edit == "result edited"
        assert "heard: Sunny in Vienna. | Snow in Paris." in screen_text(app)
        lineage = f"⑂ forked from {parent} at line {line}: result edited"
        assert app.runs_screen.event_detail.text.startswith(lineage)
    # The model saw the edited result (and the other recorded one); no tool ran again.
    new = w.agent.model.requests[asked:]
    assert len(new) == 1
    assert sorted(tool_messages(new[0])) == ["Snow in Paris.", "Sunny in Vienna."]
    assert w.ran == []
    assert log_bytes(store, parent) == before
    assert store.load(row.run_id)[-2].text == "heard: Sunny in Vienna. | Snow in Paris."


async def test_a_new_fork_is_at_the_top_of_the_list_selected_its_segment_labelled_a_fork(
    tmp_path: Path,
) -> None:
    """As the README has it: type another result ("Hail, 3C.") over the recorded one; the fork
    is listed by when it was made (the newest: at the top, selected, where the eye is), not at
    its parent's start further down; its own segment says it is a fork, not a resume."""
    runs, store, w, parent = await weather_runs(tmp_path)
    newer = (await w.agent.arun("Weather in Oslo?")).run_id  # the parent is no longer the newest
    line = result_line(store, parent, "Paris")
    app = app_for(runs, agents=OneAgent(w.agent))
    async with app.run_test(size=SIZE) as pilot:
        run_list = app.runs_screen.run_list
        assert [r.run_id for r in run_list.rows] == [newer, parent]
        await open_at(pilot, app, parent, line)
        await pilot.press("F")
        editor = await wait_until(pilot, lambda: app.screen.query("#fork-text").first(TextArea))
        await pilot.press(*"Hail, 3C.")
        assert editor.text == "Hail, 3C."  # typed over the recorded result, not before it
        await pilot.press("ctrl+s")
        row = await fork_done(pilot, app, parent)
        await wait_until(pilot, lambda: run_list.rows[0].run_id == row.run_id, what="on top")
        assert [r.run_id for r in run_list.rows] == [row.run_id, newer, parent]
        assert run_list.cursor == 0 and app.runs_screen.timeline.run_id == row.run_id
        screen = screen_text(app)
        ids = [r[:8] for r in (row.run_id, newer, parent)]
        listed = [x for x in screen.splitlines() if any(f"  {i}  " in x for i in ids)]
        assert [next(i for i in ids if i in x) for x in listed] == ids  # as on screen
        assert "⑂ Weather in Vienna and Paris?" in listed[0]
        label = f"⑂ forked from {parent[:8]} at line {line}: result edited · segment 2"
        assert label in screen
        assert "▶ resumed" not in screen


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


async def test_F_with_an_agent_of_another_name_says_how_to_fork_with_it(tmp_path: Path) -> None:
    runs, _, w, parent = await weather_runs(tmp_path)
    other = w.agent.clone(name="Other Agent")
    app = app_for(runs, agents=OneAgent(other))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, 2)
        await pilot.press("F")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        said = app.screen.query_one("#fork-status", Static).content.plain
        assert (
            f"This fork needs an agent to run it: this run was written by {w.agent.name}; "
            "--agent gives Other Agent (start agentor-tui with --any-agent to fork it with "
            "that agent anyway)."
        ) in " ".join(said.split())
        assert "resume" not in said


async def test_F_at_a_generation_with_another_model_over_http(tmp_path: Path) -> None:
    """The real openai client against the fake server: the model chosen from the models seen
    in the store is the one asked, with the message added; nothing recorded runs again."""
    runs = copy_samples(tmp_path / "runs")  # the samples name gpt-4o-mini
    another = {"type": "run_start", "run_id": "other-model", "agent": "Weather Agent"}
    write_log(runs, "other-model", [{**another, "model": "gpt-4o", "ts": 1.8e9, "v": 1}])
    store = FileStore(runs)
    parent = SAMPLE_MANIFEST["parallel_tools"]["run_id"]
    before = log_bytes(store, parent)
    events = store.load(parent)
    line = [n for n, e in enumerate(events, 1) if e.type == "generation"][-1]
    tools = Tools()
    with FakeOpenAI() as srv:
        agent = Agentor(
            "Weather Agent",
            model="offline-demo",
            tools=tools.tools,
            store=store,
            base_url=srv.url,
            api_key="sk-test",
            max_retries=0,
        )
        app = app_for(runs, agents=OneAgent(agent, any_agent=True))
        async with app.run_test(size=SIZE) as pilot:
            await open_at(pilot, app, parent, line)
            await pilot.press("F")
            await pilot.pause()
            screen = app.screen
            models = screen.query_one("#fork-models", Select)
            seen = [value for _, value in models._options if isinstance(value, str)]
            assert seen == ["gpt-4o", "gpt-4o-mini"]  # the models in the store
            assert screen.query_one("#fork-model", Input).value == "gpt-4o-mini"  # the run's
            models.value = "gpt-4o"
            await pilot.pause()
            assert screen.query_one("#fork-model", Input).value == "gpt-4o"
            screen.query_one("#fork-input", Input).value = "And Quito?"
            await pilot.press("ctrl+s")
            row = await fork_done(pilot, app, parent)
            assert row.fork_edit == "model gpt-4o, input added"
            starts = [e for e in store.load(row.run_id) if e.type == "run_start"]
            assert starts[-1].model == "gpt-4o"  # the fork's own segment
    first = srv.requests[0]
    assert first["model"] == "gpt-4o"
    assert first["messages"][-1] == {"role": "user", "content": "And Quito?"}
    assert [name for name, _ in tools.ran] == ["get_weather"]  # Quito's call, nothing recorded
    assert log_bytes(store, parent) == before


async def test_the_fork_opens_live_while_the_model_is_still_asked(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    parent = IDS["crash_after_tool_result"]
    store = FileStore(runs)
    line = [e.type for e in store.load(parent)].index("tool_result") + 1
    model = GatedModel([text_reply("Vienna: hail, 3C.")]).hold(0)
    executed: list[str] = []
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model, executed)))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, line)
        await pilot.press("F")
        await pilot.pause()
        app.screen.query_one("#fork-text", TextArea).text = "Hail in Vienna, 3C."
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: model.waiting.is_set(), what="the model request")
        [row] = await wait_until(pilot, lambda: fork_rows(app, parent), what="the fork's row")
        await wait_until(
            pilot, lambda: app.runs_screen.timeline.run_id == row.run_id, what="the fork open"
        )
        await pilot.pause()
        # Written and opened before the model answered: running, its edit in the timeline.
        assert app.source.get(row.run_id).status == "running"
        screen = screen_text(app)
        assert f"forked from {parent}" in screen
        assert "get_weather → Hail in Vienna, 3C." in screen
        assert "Forking 2dfade51 at line" in " ".join(notifications(app))
        await pilot.press("F")  # one fork at a time
        await pilot.pause()
        assert not isinstance(app.screen, ForkScreen)
        assert f"Fork {row.run_id[:8]} is still running: one fork at a time." in notifications(app)
        model.gate.set()
        await wait_until(pilot, lambda: app.source.get(row.run_id).status == "completed")
        # The row's status comes from the list; the timeline draws the end a moment later.
        await wait_until(
            pilot,
            lambda: "completed · Vienna: hail, 3C." in screen_text(app),
            what="the fork's end in its timeline",
        )
    assert executed == []
    assert model.requests[0][-1]["content"] == "Hail in Vienna, 3C."


async def test_F_refuses_an_empty_prompt_and_an_unopened_timeline(tmp_path: Path) -> None:
    runs, _, w, parent = await weather_runs(tmp_path)
    (tmp_path / "empty").mkdir()
    empty = app_for(tmp_path / "empty", agents=OneAgent(w.agent))
    async with empty.run_test(size=SIZE) as pilot:
        empty.runs_screen.timeline.action_fork()  # no run open
        await pilot.pause()
        assert "Open a run's timeline and pick a line to fork at." in notifications(empty)
    app = app_for(runs, agents=OneAgent(w.agent))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, 1)
        await pilot.press("F")
        await pilot.pause()
        app.screen.query_one("#fork-text", TextArea).text = ""
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ForkScreen)
        assert "the prompt is empty" in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
    assert fork_rows(app, parent) == [] and len(list(runs.iterdir())) == 1


async def test_a_refused_fork_and_a_failing_model_are_said(tmp_path: Path) -> None:
    runs, _, w, parent = await weather_runs(tmp_path)
    # Named as the model the run recorded (the dialog's default): the fork asks this one.
    agent = w.agent.clone(model=FailingModel(name="weather-model"))
    app = app_for(runs, agents=OneAgent(agent))
    async with app.run_test(size=SIZE) as pilot:
        # The engine's refusal (a line beyond the log), as the controller reports it.
        app.forker.start(ForkRequest(parent, 99, "generation"), agent)
        await wait_until(pilot, lambda: not app.forker.running, what="the refusal")
        await pilot.pause()
        assert any(n.startswith(f"Cannot fork {parent[:8]}: ") for n in notifications(app))
        assert fork_rows(app, parent) == []
        # The model fails: the fork was written, ends failed, and says so.
        await open_at(pilot, app, parent, 2)
        await pilot.press("F")
        await pilot.pause()
        await pilot.press("ctrl+s")
        [row] = await wait_until(pilot, lambda: fork_rows(app, parent), what="the fork's row")
        await wait_until(pilot, lambda: not app.forker.running)
        await wait_until(pilot, lambda: app.source.get(row.run_id).status == "failed")
        await pilot.pause()
        assert any(f"Fork {row.run_id[:8]} ended failed" in n for n in notifications(app))
    assert w.ran == []


async def test_F_without_an_agent_at_a_generation_and_the_run_start(tmp_path: Path) -> None:
    runs, _, _, parent = await weather_runs(tmp_path)
    app = app_for(runs, agents=OneAgent(None))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, 2)
        await pilot.press("F")
        await pilot.pause()
        app.screen.query_one("#fork-model", Input).value = "gpt-4o"
        app.screen.query_one("#fork-input", Input).value = "And Rome?"
        await pilot.press("ctrl+s")
        await pilot.pause()
        said = app.screen.query_one("#fork-status", Static).content.plain
        assert "This fork needs an agent to run it" in said
        assert f"agentor fork {parent} --at 2 --input 'And Rome?' --model gpt-4o" in said
        await pilot.press("escape")
        await open_at(pilot, app, parent, 1)
        await pilot.press("F")
        await pilot.pause()
        app.screen.query_one("#fork-text", TextArea).text = "Weather in Oslo?"
        await pilot.press("ctrl+s")
        await pilot.pause()
        said = app.screen.query_one("#fork-status", Static).content.plain
        assert f"agentor fork {parent} --at 1 --input 'Weather in Oslo?' --dir" in said
    assert len(list(runs.iterdir())) == 1  # nothing written


async def test_F_at_a_resumes_run_start_asks_as_at_a_generation(tmp_path: Path) -> None:
    """A later segment's run_start forks as the turn after it: the form asks for a model and
    a message, not for a prompt."""
    runs = copy_samples(tmp_path / "runs")
    parent = SAMPLE_MANIFEST["resumed"]["run_id"]
    kinds = [e.type for e in FileStore(runs).load(parent)]
    second = [n for n, kind in enumerate(kinds, 1) if kind == "run_start"][1]
    app = app_for(runs, agents=OneAgent(None))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, second)
        await pilot.press("F")
        await pilot.pause()
        assert isinstance(app.screen, ForkScreen)
        resumed_with = FileStore(runs).load(parent)[second - 1].model
        assert resumed_with and app.screen.query_one("#fork-model", Input).value == resumed_with
        assert not app.screen.query("#fork-text")


async def test_quitting_while_a_fork_runs_leaves_it_interrupted_and_resumable(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    parent = IDS["crash_after_tool_result"]
    store = FileStore(runs)
    line = [e.type for e in store.load(parent)].index("tool_result") + 1
    model = GatedModel([text_reply("never said")]).hold(0)
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, line)
        await pilot.press("F")
        await pilot.pause()
        app.screen.query_one("#fork-text", TextArea).text = "Hail in Vienna, 3C."
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: model.waiting.is_set(), what="the model request")
        [row] = await wait_until(pilot, lambda: fork_rows(app, parent), what="the fork's row")
        await pilot.press("q")
    fork_id = row.run_id
    assert not store.is_locked(fork_id)
    asked = ScriptedModel([text_reply("Vienna: hail.")])
    done = await weather_agent(runs, asked).aresume(fork_id)
    assert done.status == "completed" and done.final_output == "Vienna: hail."
    assert tool_messages(asked.requests[0]) == ["Hail in Vienna, 3C."]  # the edit, kept


async def test_F_replays_a_collected_run_with_another_model_and_runs_no_tool(
    tmp_path: Path, monkeypatch
) -> None:
    """A run another framework made (imported from its spans) has no agent here: F at a
    generation with another model replays it, the recorded results answering its calls."""
    import json

    from agentor.cli import main as agentor_main
    from tests.conftest import ROOT

    runs = tmp_path / "runs"
    spans = ROOT / "examples" / "otlp" / "three-frameworks.jsonl"
    assert agentor_main(["import", str(spans), "--store", str(runs)]) == 0
    store = FileStore(runs)
    parent = next(r for r in store.list_runs() if "Lisbon" in json.dumps(store.load(r)[0].messages))
    before = log_bytes(store, parent)
    with FakeOpenAI() as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        app = app_for(runs)
        async with app.run_test(size=SIZE) as pilot:
            await open_at(pilot, app, parent, 4)  # a tool_result: no agent to fork it
            await pilot.press("F")
            await pilot.pause()
            await pilot.press("ctrl+s")
            await pilot.pause()
            said = str(app.screen.query_one("#fork-status", Static).render())
            assert "collected from pydantic-ai's spans" in said and "agentor replay" in said
            await pilot.press("escape")
            await open_at(pilot, app, parent, 2)  # the first generation
            await pilot.press("F")
            await pilot.pause()
            app.screen.query_one("#fork-model", Input).value = "gpt-4.1-mini"
            await pilot.press("ctrl+s")
            row = await fork_done(pilot, app, parent)
        models = {r["model"] for r in other.requests}
    assert models == {"gpt-4.1-mini"}
    replayed = store.load(row.run_id)
    results = [e for e in replayed if e.type == "tool_result" and e.replayed_from]
    assert len(results) == 2 and all(e.error is None for e in results)
    assert log_bytes(store, parent) == before
