"""Stopping a resume in the TUI (`x`, `q`, ctrl+c) while a sync tool runs: the run is let go only
once the tool's thread has ended and its result is recorded, and the screen says what it waits
for; a second `q` abandons the resume and says what that loses."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from agentor import Agentor, function_tool
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.app_support import (
    IDS,
    SIZE,
    OneAgent,
    app_for,
    copy_fixtures,
    notifications,
    row_statuses,
    screen_text,
    text_reply,
    wait_until,
)
from tests.conftest import log_lines
from tui.app import RunsApp

PRAGUE = IDS["half_finished_crash"]  # rewound on resume: the model asks for the tool again
WAITING = "stopping: waiting for get_weather to finish (a running tool cannot be interrupted)"


class BlockingTools:
    """Sync tools that block until the test releases them, counting their executions."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.runs: list[str] = []

        def blocking(name: str):
            def tool(city: str) -> str:
                self.runs.append(f"{name} {city}")
                self.started.set()
                assert self.release.wait(30), "never released"
                return f"{name}: fine in {city}."

            tool.__name__ = name
            tool.__doc__ = f"{name} for a city (slowly)."
            return function_tool(tool)

        self.get_weather = blocking("get_weather")
        self.get_news = blocking("get_news")

    def agent(self, runs: Path, model: ScriptedModel, *tools) -> OneAgent:
        agent = Agentor(
            name="Travel Agent",
            model=model,
            tools=list(tools) or [self.get_weather],
            store=FileStore(runs),
        )
        return OneAgent(agent)


def prague_model(*calls: tuple[str, dict[str, str]]) -> ScriptedModel:
    model = ScriptedModel([])
    calls = calls or (("get_weather", {"city": "Prague"}),)
    model.replies = [model.calls(*calls), text_reply("Sunny in Prague.")]
    return model


def row_line(app: RunsApp, run_id: str) -> str:
    return next(x for x in screen_text(app).splitlines() if run_id[:8] in x)


async def resume_until_the_tool_runs(pilot, app: RunsApp, tools: BlockingTools) -> None:
    assert app.runs_screen.run_list.select(PRAGUE)
    await pilot.pause()
    await pilot.press("r")
    await wait_until(pilot, tools.started.is_set, what="the tool to start")


async def until_exited(app: RunsApp, timeout: float = 10.0) -> None:
    """The app left by itself (its pilot cannot run it any more)."""
    deadline = time.monotonic() + timeout
    while app.return_code is None:
        assert time.monotonic() < deadline, "the app did not exit"
        await asyncio.sleep(0.02)


async def until_let_go(runs: Path, run_id: str) -> None:
    """The run's lock is free again (a resume abandoned by a test still unwinds)."""
    deadline = time.monotonic() + 10
    while FileStore(runs).is_locked(run_id):
        assert time.monotonic() < deadline, "the run stayed locked"
        await asyncio.sleep(0.02)


async def test_x_during_a_sync_tool_waits_for_it_records_it_and_the_tool_never_runs_twice(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    tools = BlockingTools()
    model = prague_model()
    app = app_for(runs, agents=tools.agent(runs, model))
    try:
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await resume_until_the_tool_runs(pilot, app, tools)
            await pilot.press("x")
            await wait_until(pilot, lambda: WAITING in notifications(app), what="the notice")
            await pilot.pause()
            # The thread is held by the test: the run cannot have been let go.
            assert "stopping" in row_line(app, PRAGUE)
            assert f"▍ b9ba499c {WAITING}" in screen_text(app)
            assert FileStore(runs).is_locked(PRAGUE)
            assert not any(n.startswith("Stopped") for n in notifications(app))

            await pilot.press("r")
            assert notifications(app)[-1] == f"Run b9ba499c cannot be resumed yet: {WAITING}."
            await pilot.press("x")  # asked again: it says again what it waits for
            await pilot.pause()
            assert notifications(app)[-1] == WAITING

            tools.release.set()
            stopped = (
                "Stopped resuming b9ba499c: get_weather finished and its result was recorded, "
                "so the next resume will not run it again. It is left interrupted, r resumes it."
            )
            await wait_until(pilot, lambda: stopped in notifications(app), what="stopped")
            await wait_until(
                pilot, lambda: row_statuses(app)[PRAGUE] == "interrupted", what="interrupted"
            )
            await pilot.pause()
            assert "interrupted" in row_line(app, PRAGUE)
            assert not FileStore(runs).is_locked(PRAGUE)
            last = log_lines(runs / f"{PRAGUE}.jsonl")[-1]
            assert (last["type"], last["result"]) == ("tool_result", "get_weather: fine in Prague.")

            # The next resume replays the recorded result: the tool does not run again.
            await pilot.press("r")
            await wait_until(
                pilot,
                lambda: row_statuses(app)[PRAGUE] == "completed" and not app.resumer.running,
                what="the resume to complete",
            )
        assert tools.runs == ["get_weather Prague"]
        assert len(model.requests) == 2
    finally:
        tools.release.set()


def list_title(app: RunsApp) -> str:
    return next(x for x in screen_text(app).splitlines() if "Runs 8" in x)


async def test_the_list_title_counts_a_stopping_run_as_its_row_shows_it(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    tools = BlockingTools()
    app = app_for(runs, agents=tools.agent(runs, prague_model()))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await resume_until_the_tool_runs(pilot, app, tools)
            await wait_until(
                pilot, lambda: "· 1 running · 1 interrupted" in list_title(app), what="running"
            )
            await pilot.press("x")
            await wait_until(pilot, lambda: app.resumer.waiting_for, what="the tool wait")
            await pilot.pause()
            assert "stopping" in row_line(app, PRAGUE)
            assert "Runs 8 · 1 stopping · 1 interrupted · 2 failed" in list_title(app)
            assert "running" not in list_title(app)
            tools.release.set()
            await wait_until(
                pilot, lambda: "Runs 8 · 2 interrupted · 2 failed" in list_title(app), what="end"
            )
            assert "stopping" not in list_title(app)
    finally:
        tools.release.set()


async def test_a_stop_names_every_tool_it_waits_for(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    tools = BlockingTools()
    model = prague_model(("get_weather", {"city": "Prague"}), ("get_news", {"city": "Prague"}))
    agents = tools.agent(runs, model, tools.get_weather, tools.get_news)
    app = app_for(runs, agents=agents)
    both = (
        "stopping: waiting for get_weather and get_news to finish (a running tool cannot be "
        "interrupted)"
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await resume_until_the_tool_runs(pilot, app, tools)
            await wait_until(pilot, lambda: len(tools.runs) == 2, what="both tools to start")
            await pilot.press("x")
            await wait_until(pilot, lambda: both in notifications(app), what="the notice")
            tools.release.set()
            await wait_until(
                pilot,
                lambda: any(
                    n.startswith("Stopped resuming b9ba499c: get_weather and get_news finished")
                    for n in notifications(app)
                ),
                what="stopped",
            )
        types = [d["type"] for d in log_lines(runs / f"{PRAGUE}.jsonl")]
        assert types[-2:] == ["tool_result", "tool_result"]
    finally:
        tools.release.set()


async def test_q_during_a_sync_tool_says_what_it_waits_for_and_quits_once_it_has_stopped(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    tools = BlockingTools()
    app = app_for(runs, agents=tools.agent(runs, prague_model()))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await resume_until_the_tool_runs(pilot, app, tools)
            await pilot.press("q")
            quitting = (
                f"Quitting once the resume of b9ba499c has stopped: {WAITING}. q again quits "
                "at once, but get_weather's result will not be recorded: the run will run it "
                "again on the next resume."
            )
            await wait_until(pilot, lambda: quitting in notifications(app), what="the notice")
            await pilot.pause()
            # Held by the test's tool: still here, saying so on screen.
            assert app.is_running and app.return_code is None
            assert "▍ b9ba499c quitting: waiting for get_weather to finish (a running" in (
                screen_text(app)
            )
            assert "stopping" in row_line(app, PRAGUE)
            tools.release.set()
            await until_exited(app)
        assert (app.return_code, app.return_value) == (0, None)
        assert not FileStore(runs).is_locked(PRAGUE)
        assert log_lines(runs / f"{PRAGUE}.jsonl")[-1]["type"] == "tool_result"
        assert tools.runs == ["get_weather Prague"]
    finally:
        tools.release.set()


async def test_a_second_quit_abandons_the_resume_and_says_what_that_loses(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    tools = BlockingTools()
    app = app_for(runs, agents=tools.agent(runs, prague_model()))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await resume_until_the_tool_runs(pilot, app, tools)
            await pilot.press("ctrl+c")  # as q: stop, and wait
            await wait_until(pilot, lambda: app.resumer.waiting_for, what="the tool wait")
            await pilot.pause()
            assert app.is_running and app.resumer.quitting
            await pilot.press("ctrl+q")  # as q again: go now
            await until_exited(app)
        assert app.return_code == 1
        assert app.return_value == (
            "quit without waiting for get_weather to finish (resume of run "
            f"{PRAGUE}): its result will not be recorded, and the run will run "
            "get_weather again on the next resume."
        )
    finally:
        tools.release.set()
        await until_let_go(runs, PRAGUE)  # this process goes on: the thread unwinds


async def test_ctrl_c_quits_an_idle_app_as_q_does(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await until_exited(app)
    assert (app.return_code, app.return_value) == (0, None)
    assert not any("Do you want to quit" in n for n in notifications(app))


async def test_a_stop_with_no_tool_running_stops_at_once(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = ScriptedModel([])
    gate = asyncio.Event()
    waiting = asyncio.Event()

    async def generate(messages, tools, on_text=None):
        waiting.set()
        await gate.wait()  # a model request, cancelled with the run
        return text_reply("never")

    model.generate = generate
    app = app_for(runs, agents=BlockingTools().agent(runs, model))
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(PRAGUE)
        await pilot.pause()
        await pilot.press("r")
        await wait_until(pilot, waiting.is_set, what="the model request")
        await pilot.press("x")
        await wait_until(pilot, lambda: not app.resumer.running, what="the stop")
        assert notifications(app)[-1] == (
            "Stopped resuming b9ba499c: it is left interrupted, r resumes it."
        )
        assert not any(n.startswith("stopping") for n in notifications(app))
        assert not FileStore(runs).is_locked(PRAGUE)


async def test_r_on_another_run_while_one_resumes_says_only_one_runs_at_a_time(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    tools = BlockingTools()
    app = app_for(runs, agents=tools.agent(runs, prague_model()))
    try:
        async with app.run_test(size=SIZE) as pilot:
            await resume_until_the_tool_runs(pilot, app, tools)
            assert app.runs_screen.run_list.select(IDS["crash_after_tool_result"])
            await pilot.pause()
            await pilot.press("r")
            assert notifications(app)[-1] == (
                "Only one resume runs at a time: b9ba499c is being resumed: x stops it."
            )
            await pilot.press("x")
            await wait_until(pilot, lambda: app.resumer.waiting_for, what="the tool wait")
            await pilot.press("r")
            assert notifications(app)[-1] == (
                "Only one resume runs at a time: b9ba499c is stopping."
            )
            tools.release.set()
            await wait_until(pilot, lambda: not app.resumer.running, what="the stop")
            assert row_statuses(app)[IDS["crash_after_tool_result"]] == "interrupted"
    finally:
        tools.release.set()
