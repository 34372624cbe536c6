"""Which directory the screen shows, reading it again by hand when it is not watched, and the
status colours the manual names (docs/tui.md)."""

from __future__ import annotations

import colorsys
import re
from pathlib import Path

import pytest

from tests.app_support import (
    IDS,
    SIZE,
    app_for,
    copy_fixtures,
    notifications,
    row_statuses,
    screen_text,
    write_log,
)
from tests.conftest import ROOT
from tests.test_app_live import FINISH_VIENNA
from tui.text.shortpath import short_path

VIENNA = IDS["crash_after_tool_result"]
PRAGUE = IDS["half_finished_crash"]


def title(app) -> str:
    return str(app.query_one("#runs-pane").border_title)


async def test_the_run_list_title_names_the_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert title(app) == "~/runs · Runs 8 · 2 interrupted · 2 failed"
        assert "╭─ ~/runs · Runs 8 · 2 interrupted" in screen_text(app)

    # A long path keeps its last parts; a name with control characters shows them inert.
    deep = copy_fixtures(tmp_path / "projects" / "weather-service" / "state" / "agent-runs")
    app = app_for(deep)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert title(app).startswith("…/weather-service/state/agent-runs · Runs 8")
    odd = copy_fixtures(tmp_path / "runs\x1b[31m[b]x")
    app = app_for(odd)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "~/runs␛[31m[b]x · Runs 8" in screen_text(app)


def test_short_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ann")
    assert short_path("/home/ann") == "~"
    assert short_path("/home/ann/runs") == "~/runs"
    assert short_path("/home/annex/runs") == "/home/annex/runs"  # not under home
    deep = "/srv/" + "/".join("abcdefghijklmnopqrstuvwxyz") + "/runs"
    shown = short_path(deep)
    assert shown == "…/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/runs" and len(shown) <= 40
    assert deep.endswith(shown[1:])
    assert short_path("/srv/" + "x" * 50) == "…/" + "x" * 50  # its own name whole
    monkeypatch.chdir("/")
    assert short_path("srv") == "/srv"  # a relative path as the absolute one it names


async def test_ctrl_r_reloads_an_unwatched_directory_and_keeps_the_selection(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(PRAGUE)
        await pilot.pause()
        assert "^r Reload" in screen_text(app).splitlines()[-1]
        write_log(runs, VIENNA, FINISH_VIENNA)
        write_log(runs, "fresh-run", [{"type": "run_start", "agent": "New", "messages": []}])
        (runs / f"{IDS['failed']}.jsonl").unlink()
        await pilot.pause()
        assert row_statuses(app)[VIENNA] == "interrupted"  # not watched: nothing moved

        await pilot.press("ctrl+r")
        await pilot.pause()
        statuses = row_statuses(app)
        assert statuses[VIENNA] == "completed" and "fresh-run" in statuses
        assert IDS["failed"] not in statuses
        assert (
            app.runs_screen.run_list.current.run_id == PRAGUE
            and app.runs_screen.timeline.run_id == PRAGUE
        )
        assert notifications(app)[-1].endswith(": 1 new, 1 changed, 1 gone.")


async def test_ctrl_r_is_not_offered_while_watching(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "Reload" not in screen_text(app).splitlines()[-1]
        assert app.runs_screen.check_action("reload", ()) is False


# -- colours ---------------------------------------------------------------------------------


def drawn_hues(svg: str) -> dict[str, float]:
    """The hue (degrees) each status word is drawn in, read from a screenshot's SVG."""
    fills = dict(re.findall(r"\.(terminal-[\d-]*r\d+) \{ fill: (#[0-9a-f]{6})", svg))
    hues = {}
    for css, word in re.findall(
        r'<text class="(terminal-[\d-]*r\d+)"[^>]*>(\w+)(?:&#160;)*</text>', svg
    ):
        if (
            word in ("awaiting", "running", "stopping", "interrupted", "failed")
            and word not in hues
        ):
            r, g, b = (int(fills[css][i : i + 2], 16) / 255 for i in (1, 3, 5))
            hues[word] = colorsys.rgb_to_hls(r, g, b)[0] * 360
    return hues


async def test_status_colours_on_screen_are_those_the_readme_names(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.runs_screen.run_list.show_status(VIENNA, "running")
        app.runs_screen.run_list.show_status(PRAGUE, "stopping")
        app.runs_screen.run_list.show_status(IDS["completed"], "interrupted")
        app.runs_screen.run_list.show_status(IDS["failed"], "awaiting_approval")
        app.runs_screen.run_list.show_status(IDS["max_turns"], "failed")
        await pilot.pause()
        hues = drawn_hues(app.export_screenshot())
    manual = " ".join((ROOT / "docs" / "tui.md").read_text().split())
    assert "status (awaiting approval pink, running cyan, stopping violet, interrupted" in manual
    assert 300 <= hues["awaiting"] <= 330, hues  # pink: neither violet nor red
    assert 170 <= hues["running"] <= 200, hues  # cyan
    assert 250 <= hues["stopping"] <= 290, hues  # violet
    assert 45 <= hues["interrupted"] <= 65, hues  # yellow, not orange (about 32)
    assert hues["failed"] <= 15 or hues["failed"] >= 330, hues  # red
