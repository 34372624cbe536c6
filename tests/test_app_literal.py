"""Text from logs is shown literally: never parsed as markup, never sent as escape sequences."""

from __future__ import annotations

from pathlib import Path

from tests.app_support import (
    SIZE,
    FailingModel,
    OneAgent,
    app_for,
    screen_text,
    terminal_output,
    wait_until,
    weather_agent,
    write_log,
)
from tui.literal import literal, literal_line

MARKUP = "[bold red]x[/]"
CLEAR = "\x1b[2J"
TITLE = "\x1b]0;title\x07"
CLIPBOARD = "\x1b]52;c;Zm9v\x07"
NASTY = f"{MARKUP} {CLEAR} {TITLE} {CLIPBOARD}"
# How they read on screen.
SHOWN = (MARKUP, "␛[2J", "␛]0;title␇", "␛]52;c;Zm9v␇")
# What must never reach the terminal.
RAW = ("\x1b[2J", "\x1b]0;", "\x1b]52", "\x07", "\x9b", "\u202e")


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
                "result": f"{NASTY} \x9b31m \u202egnp.exe",
                "call_id": "c1",
                "turn": 1,
                "ts": 1796039002.0,
            },
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
        assert_literal(list_line, "run list")
        timeline = "\n".join(x.split("││")[0] for x in lines[17:])
        assert 'fetch(q="[bold red]x[/] ' in timeline  # the call, arguments as JSON
        assert "fetch → [bold red]x[/] ␛[2J ␛]0;title␇ ␛]52;c;Zm9v␇ \\x9b31m" in timeline
        detail = app.event_detail.text
        assert_literal(detail, "detail")
        assert "\\x9b31m \\u202egnp.exe" in detail
        assert_no_raw(app)
        # The request conversation (run_start's input) too.
        await pilot.press("enter", "home")
        await pilot.pause()
        assert f"prompt {MARKUP} ␛[2J" in app.event_detail.text
        assert_no_raw(app)


async def test_notifications_show_errors_literally(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    nasty_run(runs)
    failing = FailingModel(f"boom {NASTY}")
    # The run's agent name is hostile text too: any agent may resume it.
    app = app_for(runs, agents=OneAgent(weather_agent(runs, failing), any_agent=True))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("r")
        await wait_until(pilot, lambda: failing.requests, what="the model request")
        await wait_until(pilot, lambda: "ended failed" in screen_text(app), what="the toast")
        await pilot.pause()
        screen = screen_text(app)
        assert "boom [bold red]x[/]" in screen
        assert "␛[2J" in screen.split("ended failed", 1)[1]
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
