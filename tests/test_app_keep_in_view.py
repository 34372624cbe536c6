"""What stays in view while statuses and filters change: a resumed run under the "needs
attention" filter, and the cursor's run when the filter changes."""

from __future__ import annotations

from pathlib import Path

from tests.app_support import (
    IDS,
    SIZE,
    GatedModel,
    OneAgent,
    app_for,
    copy_fixtures,
    row_statuses,
    text_reply,
    wait_until,
    weather_agent,
)

VIENNA = IDS["crash_after_tool_result"]
PRAGUE = IDS["half_finished_crash"]


def shown(app) -> list[str]:
    return [r.run_id for r in app.runs_screen.run_list.rows]


async def test_a_resumed_run_stays_in_view_under_needs_attention_until_the_user_moves_away(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = GatedModel([text_reply("Vienna is sunny.")]).hold(0)
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")  # needs attention: interrupted, failed, max_turns
        assert app.runs_screen.run_list.select(VIENNA)
        await pilot.pause()
        await pilot.press("r")
        await wait_until(pilot, lambda: row_statuses(app)[VIENNA] == "running", what="running")
        # Running is no status that needs attention, yet the run and its timeline stay.
        assert (
            app.runs_screen.run_list.current.run_id == VIENNA
            and app.runs_screen.timeline.run_id == VIENNA
        )
        title = str(app.query_one("#runs-pane").border_title)
        assert "Runs 4 of 8 · 1 running · 1 interrupted · 2 failed" in title

        model.gate.set()
        await wait_until(
            pilot,
            lambda: row_statuses(app)[VIENNA] == "completed" and not app.resumer.running,
            what="the resume to complete",
        )
        await pilot.pause()
        assert app.runs_screen.run_list.current.run_id == VIENNA  # completed, and still selected
        assert (
            app.runs_screen.timeline.run_id == VIENNA and len(app.runs_screen.timeline.run_log) == 8
        )

        await pilot.press("down")  # moved away: the filter takes it
        await pilot.pause()
        assert VIENNA not in shown(app)
        assert {r.status for r in app.runs_screen.run_list.rows} <= {
            "interrupted",
            "failed",
            "max_turns",
        }
        assert app.runs_screen.timeline.run_id == app.runs_screen.run_list.current.run_id != VIENNA


async def test_a_filter_change_keeps_the_cursor_on_its_run_when_it_is_still_shown(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(PRAGUE)
        await pilot.pause()
        assert shown(app).index(PRAGUE) > 0

        # `/`: the cursor stays on its run while it matches, and comes back to it when what
        # is typed matches it again.
        await pilot.press("slash", *"weather")
        await pilot.pause()
        assert app.runs_screen.run_list.current.run_id == PRAGUE
        await pilot.press(*"zz")
        await pilot.pause()
        assert shown(app) == []
        await pilot.press("backspace", "backspace")
        await pilot.pause()
        assert app.runs_screen.run_list.current.run_id == PRAGUE
        await pilot.press("enter")
        await pilot.pause()
        assert (
            app.runs_screen.run_list.current.run_id == PRAGUE
            and app.runs_screen.timeline.run_id == PRAGUE
        )

        # `s`: needs attention still shows it; failed does not (the first run then).
        await pilot.press("s")
        await pilot.pause()
        assert app.runs_screen.run_list.current.run_id == PRAGUE
        await pilot.press("s")
        await pilot.pause()
        assert PRAGUE not in shown(app) and app.runs_screen.run_list.cursor == 0

        # esc clears the text filter: the cursor stays where it is.
        await pilot.press("escape")
        await pilot.pause()
        assert app.runs_screen.runs_pane.run_filter.text == ""
        assert app.runs_screen.run_list.cursor == 0
