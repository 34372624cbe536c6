"""Text from logs is shown literally: never parsed as markup, never sent as escape sequences."""

from __future__ import annotations

import json
from pathlib import Path

from agentor.engine.interrupted import OUTCOME_UNKNOWN
from agentor.engine.store.file import FileStore
from agentor.literal import literal, literal_line
from tests.app_support import (
    IDS,
    SIZE,
    FailingModel,
    OneAgent,
    app_for,
    copy_fixtures,
    notifications,
    screen_text,
    terminal_output,
    toasts,
    wait_until,
    weather_agent,
    write_log,
)

MARKUP = "[bold red]x[/]"
CLEAR = "\x1b[2J"
TITLE = "\x1b]0;title\x07"
CLIPBOARD = "\x1b]52;c;Zm9v\x07"
NASTY = f"{MARKUP} {CLEAR} {TITLE} {CLIPBOARD}"
# A hyperlink (OSC 8, ST-terminated): a terminal would show "text" and open http://x.
HYPERLINK = "\x1b]8;;http://x\x1b\\text\x1b]8;;\x1b\\"
HYPERLINK_SHOWN = "␛]8;;http://x␛\\text␛]8;;␛\\"
# How they read on screen.
SHOWN = (MARKUP, "␛[2J", "␛]0;title␇", "␛]52;c;Zm9v␇")
# What must never reach the terminal.
RAW = ("\x1b[2J", "\x1b]0;", "\x1b]52", "\x1b]8", "\x07", "\x9b", "\u202e")


def nasty_run(runs: Path) -> None:
    write_log(
        runs,
        "nasty",
        [
            {
                "type": "run_start",
                "agent": f"Agent {MARKUP}",
                "model": "m\x1b[5m",
                "started_at": 1796039000.0,
                "messages": [{"role": "user", "content": f"prompt {NASTY}"}],
            },
            {
                "type": "tool_call",
                "name": "fetch",
                "args": {"q": NASTY},
                "call_id": "c1",
                "turn": 1,
                "ts": 1796039001.0,
            },
            {
                "type": "tool_result",
                "name": "fetch",
                "result": f"{NASTY} \x9b31m \u202egnp.exe {HYPERLINK}",
                "call_id": "c1",
                "turn": 1,
                "ts": 1796039002.0,
            },
        ],
    )


# A call a crash interrupted, hostile in every string field of its tool_start and of the
# request its resume recorded (a host carrying a clipboard write, a server a title, ...).
TOOL = f"send{CLEAR}"
HOST = f"h{CLIPBOARD}"
SERVER = f"s{TITLE}"
CALL_ID = f"c{CLIPBOARD}"
ARGS = {f"to{TITLE}": f"ann{CLIPBOARD}"}
# The reason a resume records (the pane shows the call as interrupted), or one a log made up.
REASONS = {"interrupted": OUTCOME_UNKNOWN, "odd-reason": f"gone{CLEAR} who{TITLE} knows"}


def interrupted_run(runs: Path, run_id: str) -> None:
    start = {
        "type": "run_start",
        "agent": f"Letters{CLEAR}",
        "model": f"m{TITLE}",
        "started_at": 1796039000.0,
        "host": HOST,
        "messages": [{"role": "user", "content": f"prompt {NASTY}"}],
    }
    call = {"name": TOOL, "call_id": CALL_ID, "args": ARGS, "turn": 1, "server": SERVER}
    raw = json.dumps(ARGS)
    asked = {"id": CALL_ID, "type": "function", "function": {"name": TOOL, "arguments": raw}}
    ran = {"pid": 7, "host": HOST}
    write_log(
        runs,
        run_id,
        [
            start,
            {"type": "generation", "turn": 1, "calls": [asked], "ts": 1796039001.0},
            {"type": "tool_call", **call, "ts": 1796039001.0},
            {"type": "tool_start", **call, **ran, "ts": 1796039002.0},
            {**start, "started_at": 1796039010.0},
            {
                "type": "approval_request",
                **call,
                **ran,
                "reason": REASONS[run_id],
                "started_at": 1796039002.0,
                "ts": 1796039010.0,
            },
            {"type": "run_end", "status": "awaiting_approval", "ts": 1796039010.5},
        ],
    )


def assert_literal(screen: str, where: str) -> None:
    for shown in SHOWN:
        assert shown in screen, f"{shown!r} not shown literally in the {where}"


def assert_no_raw(app) -> None:
    out = terminal_output(app)
    for raw in RAW:
        assert raw not in out, f"{raw!r} reached the terminal"


def test_control_characters_become_visible() -> None:
    assert literal_line(NASTY) == "[bold red]x[/] ␛[2J ␛]0;title␇ ␛]52;c;Zm9v␇"
    assert literal("a\r\nb\tc\x00\x7f\x85\u202e\ud800") == "a\nb   c␀␡\\x85\\u202e\\ud800"
    assert literal_line("a\nb\tc", 10) == "a⏎b c"
    assert literal_line("x" * 20, 5) == "xxxx…"


async def test_list_timeline_and_detail_show_markup_and_escapes_literally(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    nasty_run(runs)
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_text(app)
        lines = screen.splitlines()
        list_line = next(x for x in lines if "nasty" in x and "interrupted" in x)
        assert "Agent [bold red…" in list_line and "m␛[5m" in list_line
        assert MARKUP in list_line and "␛[2J ␛]0;title␇" in list_line
        # The prompt's end is past the screen's edge: the whole row, as drawn wider.
        row = app.runs_screen.run_list.render_row(
            app.runs_screen.run_list.index_of("nasty"), 400
        ).plain
        assert_literal(row, "run list")
        timeline = "\n".join(x.split("││")[0] for x in lines[17:])
        assert 'fetch(q="[bold red]x[/] ' in timeline  # the call, arguments as JSON
        assert "fetch → [bold red]x[/] ␛[2J ␛]0;title␇ ␛]52;c;Zm9v␇ \\x9b31m" in timeline
        detail = app.runs_screen.event_detail.text
        assert_literal(detail, "detail")
        assert "\\x9b31m \\u202egnp.exe" in detail
        assert HYPERLINK_SHOWN in detail
        assert_no_raw(app)
        # The request conversation (run_start's input) too.
        await pilot.press("enter", "home")
        await pilot.pause()
        assert f"prompt {MARKUP} ␛[2J" in app.runs_screen.event_detail.text
        assert_no_raw(app)


async def test_notifications_show_errors_literally(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    nasty_run(runs)
    failing = FailingModel(f"boom {NASTY} {HYPERLINK}")
    # The run's agent name is hostile text too: any agent may resume it.
    app = app_for(runs, agents=OneAgent(weather_agent(runs, failing), any_agent=True))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("r")
        await wait_until(pilot, lambda: failing.requests, what="the model request")
        await wait_until(
            pilot, lambda: any("ended failed" in t for t in toasts(app)), what="the toast"
        )
        await pilot.pause()
        # The notification widget's own text (the list shows the same error, literally too).
        toast = next(t for t in toasts(app) if "ended failed" in t)
        assert f"boom {' '.join(SHOWN)} {HYPERLINK_SHOWN}" in toast
        assert_no_raw(app)


async def test_an_unknown_run_end_status_is_shown_literally_in_the_list(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    write_log(
        runs,
        "bogus",
        [
            {"type": "run_start", "agent": "a", "started_at": 1796039000.0},
            {"type": "run_end", "status": f"x{CLEAR}", "ts": 1796039001.0},
        ],
    )
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        list_line = next(x for x in screen_text(app).splitlines() if "bogus" in x)
        assert "x␛[2J" in list_line
        assert_no_raw(app)


async def test_an_api_key_quoted_by_a_failing_model_never_reaches_a_notification(
    tmp_path: Path,
) -> None:
    """Through the TUI's resume, with the real openai client: the server's error quotes the
    key; what the notification (and the screen) says has it redacted."""
    from agentor import Agentor
    from tests.openai_server import FakeOpenAI

    key = "sk-proj-SECRETsecret0123456789abcdefXYZ"
    runs = copy_fixtures(tmp_path / "runs")

    def boom(request: dict) -> dict:
        return {"status": 500, "message": f"upstream said: bad key {key} (and more)"}

    with FakeOpenAI(boom) as srv:
        agent = Agentor(
            "Travel Agent",
            store=FileStore(runs),
            base_url=srv.url,
            api_key=key,
            max_retries=0,
        )
        app = app_for(runs, agents=OneAgent(agent))
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            assert app.runs_screen.run_list.select(IDS["crash_after_tool_result"])
            await pilot.pause()
            await pilot.press("r")
            await wait_until(
                pilot, lambda: any("ended failed" in t for t in toasts(app)), what="the toast"
            )
            await pilot.pause()
            assert srv.requests, "the request reached the server"
            toast = next(t for t in toasts(app) if "ended failed" in t)
            assert "500" in toast and "***" in toast
            shown = [*notifications(app), *toasts(app), screen_text(app)]
            assert not any(key in t or key[8:] in t for t in shown)


async def test_a_call_a_crash_interrupted_shows_its_host_and_every_field_literally(
    tmp_path: Path,
) -> None:
    """Its tool_start and the request its resume recorded, in the timeline (wide enough to
    show each row whole), the detail and the approvals pane: every field shown as text, no
    escape sequence sent to the terminal."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for run_id in REASONS:
        interrupted_run(runs, run_id)
    host, server = literal_line(HOST), literal_line(SERVER)
    app = app_for(runs)
    async with app.run_test(size=(240, 45)) as pilot:
        pane = app.runs_screen.approval_pane
        for run_id, reason in REASONS.items():
            assert app.runs_screen.run_list.select(run_id)
            await pilot.pause()
            assert_no_raw(app)
            rows = screen_text(app)
            assert f"@{server} · started in process 7 on {host}" in rows  # the tool_start row
            assert f"@{server} · {literal_line(reason)}" in rows  # the request's row
            timeline = app.runs_screen.timeline
            for line in (3, 5):  # the tool_start, the request
                timeline.move_cursor(line)
                await pilot.pause()
                detail = app.runs_screen.event_detail.text
                for shown in (literal_line(TOOL), literal_line(CALL_ID), server, host):
                    assert shown in detail, (line, shown)
                assert_no_raw(app)
            assert literal_line(reason) in detail
            await pilot.press("enter")  # into its approvals pane
            await wait_until(pilot, lambda: app.focused is pane.call_list, what="the pane")
            if reason == OUTCOME_UNKNOWN:
                assert f"in process 7 on {host}" in screen_text(app)
            assert_no_raw(app)
            await pilot.press("escape", "escape")
            await pilot.pause()
