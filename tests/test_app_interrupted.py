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

import pytest

from agentor import Agentor
from agentor.engine.events import APPROVAL, RUN_START, TOOL_START
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests import mcpkit
from tests.app_support import (
    SIZE,
    OneAgent,
    fixed_clock,
    notifications,
    screen_text,
    toasts,
    wait_until,
)
from tests.approvalkit import summary
from tests.test_app_approval import awaiting_run, open_approvals, tui
from tests.test_interrupted import RUN, Letters, paused
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


def footer(app: RunsApp) -> str:
    return screen_text(app).rstrip("\n").splitlines()[-1]


def lasting_notes(app: RunsApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """Toasts stay up until a newer note of their kind takes them down: every test app's do
    (tests/conftest.py); kept as the name these tests say it by."""


async def test_an_interrupted_call_resumed_here_is_announced_with_the_keys_that_decide_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`r` on a run stopped while its call ran: the resume pauses on the call, and the news
    names the keys that decide such a call (a runs it again, g gives its result, n says it
    failed; `e` has nothing to do with it); in the pane the footer offers `g`."""
    store = FileStore(tmp_path / "runs")
    letters = Letters(store)
    await letters.interrupted()
    app = RunsApp(tmp_path / "runs", agents=OneAgent(letters.agent), watch=False, by="al")
    lasting_notes(app, monkeypatch)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        assert app.runs_screen.run_list.select(RUN)
        await pilot.press("r")
        news = await wait_until(
            pilot, lambda: [t for t in toasts(app) if "awaits" in t], what="the news"
        )
        assert news[0].endswith(
            "Run letters-1 awaits a decision on send_letter, interrupted while running: select "
            "it and press enter: a runs it again, g gives the result it had, n tells the model "
            "it failed."
        )
        await pilot.press("r")  # again: the same keys
        again = await wait_until(pilot, lambda: [t for t in toasts(app) if "cannot go on" in t])
        assert "send_letter, interrupted while running, waits for a decision; " in again[0]
        assert "a runs it again, g gives the result it had" in again[0]
        assert "e edits" not in news[0] + again[0]
        await open_approvals(pilot, app, RUN)
        assert " g Give result " in footer(app)
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, GivenResultScreen))
        await pilot.press(*"went by hand", "enter")
        await wait_until(pilot, lambda: app.source.get(RUN).status == COMPLETED, what="the end")
    assert letters.ran == ["ann"], "given, not run again"


async def test_after_an_interrupted_calls_result_is_given_the_pane_and_the_notice_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No agent here serves the run: once the call is decided the notice says how to go on
    elsewhere, and the pane's title does not offer `r`; the Call pane and the footer stop
    offering the choice (`g`) once it is made."""
    await paused(tmp_path)
    app = RunsApp(tmp_path / "runs", agents=OneAgent(None), watch=False, by="al")
    lasting_notes(app, monkeypatch)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await open_approvals(pilot, app, RUN)
        pane = screen_text(app)
        assert " choose   a run again · g give its result · n it failed" in pane
        assert " g Give result " in footer(app)
        await pilot.press("g")
        await wait_until(pilot, lambda: isinstance(app.screen, GivenResultScreen))
        await pilot.press(*"went by hand", "enter")
        said = await wait_until(
            pilot, lambda: [t for t in toasts(app) if "Decision recorded" in t], what="it"
        )
        assert "no --agent here serves this run" in said[0]
        await wait_until(pilot, lambda: "no call waits" in screen_text(app), what="the title")
        pane = screen_text(app)
        assert "Approval · run letters-1 · no call waits: no --agent here serves it" in pane
        assert "r resumes it" not in pane
        assert " choose " not in pane and "a run again · g give its result" not in pane
        assert "approved by al" in pane  # the decision, where the choice was
        assert " g Give result " not in footer(app)
        await pilot.press("g")  # decided: g says so, and gives nothing
        await wait_until(pilot, lambda: [t for t in toasts(app) if "was approved" in t])
        assert not isinstance(app.screen, GivenResultScreen)
