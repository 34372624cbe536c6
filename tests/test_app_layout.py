"""Small screens: the footer keeps its essential keys, `m` maximizes a pane, and the cursor
row stays in view when the screen shrinks."""

from __future__ import annotations

from pathlib import Path

from tests.app_support import (
    IDS,
    SAMPLE_MANIFEST,
    SIZE,
    app_for,
    copy_fixtures,
    copy_samples,
    screen_text,
    wait_until,
)


def footer(app) -> str:
    return screen_text(app).splitlines()[-1]


async def test_the_footer_keeps_help_quit_and_the_palette_on_narrow_screens(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs)
    async with app.run_test(size=(80, 24)) as pilot:
        for size in ((80, 24), (100, 30), (160, 45)):
            await pilot.resize_terminal(*size)
            await pilot.pause()
            line = footer(app)
            for key in ("? Help", "q Quit", "^p palette", "⏎ Open", "esc Back", "m Maximize"):
                assert key in line, (size, line)
        # On a wide screen every key shows.
        for key in ("/ Filter", "s Status", "r Resume", "x Stop", "f Follow", "c Copy id"):
            assert key in line, line
        # Back to 80 columns: the keys left out are the least needed ones.
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert "c Copy id" not in footer(app) and "? Help" in footer(app)


async def test_m_maximizes_the_focused_pane_and_m_or_esc_brings_all_back(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    run_id = IDS["crash_after_tool_result"]
    app = app_for(runs)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.runs_screen.run_list.select(run_id)
        await pilot.press("enter", "enter")  # into the timeline, then the detail
        assert app.focused is app.runs_screen.event_detail
        # 30 columns wrap the id; maximized, it is whole on one line.
        assert f"run      {run_id}" not in screen_text(app)
        await pilot.press("m")
        await pilot.pause()
        assert app.screen.maximized is app.runs_screen.event_detail
        screen = screen_text(app)
        assert f"run      {run_id}" in screen
        assert "Timeline ·" not in screen and "Runs 8" not in screen
        assert "? Help" in footer(app)
        await pilot.press("escape")  # esc restores first (the focus stays)
        await pilot.pause()
        assert app.screen.maximized is None and app.focused is app.runs_screen.event_detail
        assert "Timeline ·" in screen_text(app)
        # The timeline's pane and the run list's pane, with their titles; m brings all back.
        await pilot.press("escape", "m")
        await pilot.pause()
        assert app.screen.maximized is app.query_one("#timeline-pane")
        assert "Timeline ·" in screen_text(app) and "Detail" not in screen_text(app)
        await pilot.press("m", "escape", "m")
        await pilot.pause()
        assert app.screen.maximized is app.query_one("#runs-pane")
        assert "Runs 8 · 2 interrupted · 2 failed" in screen_text(app)
        await pilot.press("m")
        await pilot.pause()
        assert app.screen.maximized is None
        assert "Timeline ·" in screen_text(app)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert "Maximize pane" in titles and "Maximize" not in titles


async def test_the_cursor_row_stays_in_view_when_the_screen_shrinks(tmp_path: Path) -> None:
    runs = copy_samples(tmp_path / "runs")
    (runs / "extra").mkdir()
    copy_fixtures(runs / "extra")
    for path in (runs / "extra").iterdir():
        path.rename(runs / path.name)  # more runs than a small screen shows
    long_run = SAMPLE_MANIFEST["long_run"]["run_id"]
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        runs_list = app.runs_screen.run_list
        runs_list.move_cursor(runs_list.row_count() - 1)  # the last run, in view on a big screen
        last = runs_list.current
        assert last is not None
        await pilot.pause()
        assert last.run_id[:8] in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        assert last.run_id[:8] in screen_text(app)

        # The timeline: a long run's cursor on its last line, then a smaller screen.
        assert runs_list.select(long_run)
        await pilot.press("enter")
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        timeline = app.runs_screen.timeline
        timeline.move_cursor(timeline.row_count() - 1)
        await pilot.pause()
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.pause()
        top = round(timeline.scroll_y)
        shown = timeline.scrollable_content_region.height
        assert top <= timeline.cursor < top + shown, (top, timeline.cursor, shown)


async def test_every_key_of_the_help_fits_a_160x45_screen_without_scrolling(
    tmp_path: Path,
) -> None:
    from tui.widgets.help_screen import HelpScreen

    app = app_for(copy_fixtures(tmp_path / "runs"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.query_one("#help").max_scroll_y == 0
        shown = screen_text(app)
        for words in ("copy its value", "Approval (in the approvals pane)", "unreadable"):
            assert words in shown


async def test_at_80x24_the_list_title_keeps_every_count_and_the_approvals_hint_every_key(
    tmp_path: Path, monkeypatch
) -> None:
    """A long directory name and four kinds of runs: the title gives up words before counts,
    the hint under the approvals says `n reject` before the list has the focus."""
    monkeypatch.setenv("HOME", str(tmp_path))
    runs = copy_samples(tmp_path / "src" / "agentor-tui" / "demo-runs")
    awaiting = SAMPLE_MANIFEST["awaiting_approval"]["run_id"]
    app = app_for(runs)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert "…/demo-runs · Runs 9 · 1 awaiting · 2 interrupted · 2 failed ─" in lines[0]
        assert app.runs_screen.run_list.current.run_id == awaiting  # its calls shown below
        hint = next(line for line in lines if "a approve" in line)
        assert "⏎: a approve · A all · e edit · n reject ─" in hint, hint
        await pilot.press("enter")  # into the approvals
        await pilot.pause()
        hint = next(line for line in screen_text(app).splitlines() if "a approve" in line)
        assert "─ a approve · A all · e edit · n reject ─" in hint, hint
        # Wide enough, the whole words again.
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        top = screen_text(app).splitlines()[0]
        assert "~/src/agentor-tui/demo-runs · Runs 9 · 1 awaiting approval · 2 interrupted" in top


async def test_at_80x24_two_notes_are_compact_and_never_cross_a_dialogs_frame(
    tmp_path: Path,
) -> None:
    from textual.geometry import Spacing

    from tui.text import notices
    from tui.widgets.help_screen import HelpScreen
    from tui.widgets.runs_search import RunsSearchScreen

    run_id = IDS["crash_after_tool_result"]
    app = app_for(copy_fixtures(tmp_path / "runs"))

    def two_notes() -> None:
        app.tell_note(notices.copied_id(run_id))
        app.tell_note(notices.awaiting(run_id, ["book_hotel", "book_hotel"]))

    def toast_regions() -> list:
        """Where the toasts are drawn, once each is laid out."""
        regions = [t.region for t in app.screen.query("Toast")]
        return regions if all(regions) else []

    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        two_notes()
        regions = await wait_until(pilot, lambda: len(toast_regions()) == 2 and toast_regions())
        # Under half the screen's width (a run id whole on a line), no blank lines: the two
        # take a fifth of the screen at most.
        assert all(r.width <= 36 for r in regions), regions
        assert sum(r.area for r in regions) <= 80 * 24 // 5, regions
        for dialog_key, dialog_type, frame in (
            ("question_mark", HelpScreen, "#help"),
            ("ctrl+f", RunsSearchScreen, "#runs-search"),
        ):
            await pilot.press(dialog_key)
            dialog = await wait_until(pilot, lambda: app.screen if app.screen.is_modal else None)
            assert isinstance(dialog, dialog_type)
            app.clear_notifications()
            two_notes()  # news while the dialog is up: drawn inside its frame
            inside = dialog.query_one(frame).region.shrink(Spacing(1, 1, 1, 1))

            def inside_the_frame(inside=inside) -> bool:
                regions = toast_regions()
                return len(regions) == 2 and all(inside.contains_region(r) for r in regions)

            await wait_until(pilot, inside_the_frame, what=f"the notes inside {frame}'s frame")
            # Drawn once: not also on the screen under the dialog.
            assert screen_text(app).count("n rejects.") == 1, screen_text(app)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not app.screen.is_modal)


async def test_notes_on_a_dialog_that_shrinks_stay_inside_its_frame(tmp_path: Path) -> None:
    from textual.containers import Vertical
    from textual.geometry import Spacing
    from textual.screen import ModalScreen
    from textual.widgets import Static

    from tui.text import notices

    class Growing(ModalScreen[None]):
        """A dialog as tall as its text: an editor with an error line, say."""

        DEFAULT_CSS = """
        Growing { align: center middle; }
        #box { width: 70; height: auto; border: round $primary; }
        """

        def compose(self):
            with Vertical(id="box"):
                yield Static("\n".join(f"line {i}" for i in range(16)), id="text")

    app = app_for(copy_fixtures(tmp_path / "runs"))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        dialog = Growing()
        app.push_screen(dialog)
        await pilot.pause()
        app.tell_note(notices.copied_id(IDS["crash_after_tool_result"]))
        box = dialog.query_one("#box")

        def inside_the_frame() -> bool:
            regions = [t.region for t in dialog.query("Toast")]
            inside = box.region.shrink(Spacing(1, 1, 1, 1))
            return bool(regions) and all(r and inside.contains_region(r) for r in regions)

        await wait_until(pilot, inside_the_frame, what="the note inside the frame")
        shorter = "\n".join(f"line {i}" for i in range(6))
        dialog.query_one("#text", Static).update(shorter)  # 18 rows high, now 8
        await wait_until(pilot, lambda: box.region.height == 8, what="the dialog to shrink")
        await wait_until(pilot, inside_the_frame, what="the note inside the smaller frame")
