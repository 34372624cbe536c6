"""The TUI and calls whose outcome an interruption hid, and MCP tools: the approvals pane shows
an interrupted call apart (what ran, when it started, in which process on which host), `g`
gives it the result it had (only it: a call that did not run cannot be given one); the
timeline and the detail show each MCP call's server and what the segment's servers offered.

The runs are real: written by the engine (tests/test_interrupted.py's `Letters`, stopped while
its call ran; a run on the stdio test server of tests/mcp_tool_server.py).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from agentor import Agentor
from agentor.engine.events import APPROVAL, RUN_START, TOOL_START
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests import mcpkit
from tests.app_support import SIZE, OneAgent, fixed_clock, notifications, screen_text, wait_until
from tests.approvalkit import summary
from tests.test_app_approval import awaiting_run, open_approvals, tui
from tests.test_interrupted import RUN, paused
from tui.app import RunsApp
from tui.widgets.reason_screen import GivenResultScreen


async def test_an_interrupted_call_is_shown_apart_and_g_gives_it_the_result_it_had(
    tmp_path: Path,
) -> None:
    letters, store = await paused(tmp_path)
    runs = tmp_path / "runs"
    app = RunsApp(runs, agents=OneAgent(letters.agent), watch=False, clock=fixed_clock, by="al")
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, RUN)
        pane = screen_text(app)
        assert '⚠ send_letter(to="ann")  interrupted while running: outcome unknown' in pane
        assert f"in process {os.getpid()} on {socket.gethostname()}" in pane
        assert "a run again · g give its result · n it failed" in pane
        for label in ("why", "ran", "choose"):  # the call's detail beside the list
            assert f" {label} " in pane

        await pilot.press("g")
        asking = await wait_until(
            pilot, lambda: isinstance(app.screen, GivenResultScreen) and app.screen
        )
        await pilot.press("enter")  # nothing given: refused, said so
        assert "a result is needed" in str(asking.query_one("#reason-status").render())
        await pilot.press(*"went by hand", "enter")
        await wait_until(pilot, lambda: app.source.get(RUN).status == COMPLETED, what="the end")
        [made] = [e for e in store.load(RUN) if e.type == APPROVAL]
        assert (made.decision, made.result, made.by) == ("approved", "went by hand", "al")
        rows = screen_text(app)
        assert "send_letter (given by al: not run) → went by hand" in rows
        assert 'send_letter(to="ann") · started in process' in rows  # the tool_start row
    assert letters.ran == ["ann"], "given, not run again"


async def test_g_on_a_call_that_did_not_run_says_it_cannot_be_given_a_result(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    travel, run_id = await awaiting_run(runs)
    app = tui(runs, travel)
    async with app.run_test(size=SIZE) as pilot:
        await open_approvals(pilot, app, run_id)
        await pilot.press("g")
        told = await wait_until(
            pilot, lambda: [n for n in notifications(app) if "cannot be given" in n]
        )
        assert "it did not run" in told[0]
        assert not isinstance(app.screen, GivenResultScreen)
    assert [e.type for e in FileStore(runs).load(run_id)].count(APPROVAL) == 0


async def test_the_timeline_shows_each_mcp_calls_server_and_the_detail_what_was_offered(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    cfg = mcpkit.server_config(tmp_path, "local")
    model = ScriptedModel(
        lambda m: summary(m) if m[-1]["role"] == "tool" else model.calls(("add", {"a": 4, "b": 5}))
    )
    server = mcpkit.stdio_server(cfg, name="local", env={"MCP_TEST_TOKEN": "not-for-eyes-123"})
    agent = Agentor("Adder", model=model, tools=[server], store=runs)
    run_id = (await agent.arun("Add.")).run_id
    app = RunsApp(runs, agents=OneAgent(None), watch=False, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(run_id)
        await pilot.pause()
        rows = screen_text(app)
        assert "add(a=4, b=5) @local" in rows  # the tool_call row
        assert "add @local → 9" in rows  # the tool_result row
        timeline = app.runs_screen.timeline
        types = [timeline.run_log.item(i).type for i in range(len(timeline.run_log))]
        timeline.move_cursor(types.index(TOOL_START))
        await pilot.pause()
        assert (
            "server" in app.runs_screen.event_detail.text
            and "local" in app.runs_screen.event_detail.text
        )
        timeline.move_cursor(types.index(RUN_START))
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert "MCP servers (1)" in detail
        assert "env: MCP_TEST_TOKEN (values never recorded)" in detail
        assert "tools: add, echo, fail, weather, readme, send, whoami" in detail
        assert "not-for-eyes-123" not in detail + screen_text(app)
