"""`M` in the TUI: marking a run, comparing it with another, a fork with its parent (forks made
by the real engine, tests/forkkit.py), the compare view's rows, first divergence, differences
and totals; the same through a PostgreSQL source."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentor.engine.store.copy import copy_runs
from agentor.engine.store.file import FileStore
from agentor.sources.postgres.source import PostgresSource
from tests.app_support import (
    SAMPLE_MANIFEST,
    SIZE,
    app_for,
    copy_samples,
    fixed_clock,
    notifications,
    screen_text,
)
from tests.forkkit import Weather, result_line, weather_model
from tests.pg_support import PgStores
from tests.playkit import press
from tui.app import RunsApp
from tui.widgets.compare_list import DIFFERS_MARK, FIRST_MARK, FIRST_STYLE
from tui.widgets.compare_screen import CompareScreen
from tui.widgets.playback_screen import PlaybackScreen
from tui.widgets.run_list import COMPARE_MARK

PROMPT = "What is the weather in Oslo and Rome?"
# A tool result as a fork gives it: markup and an escape sequence, to be shown literally.
EDITED = "Hail in Rome. [bold red]loud[/] \x1b[31m"
SHOWN = "Hail in Rome. [bold red]loud[/] ␛[31m"  # how a cell draws it


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """parent-run; fork-run (its Rome result edited); other-run (another prompt)."""
    directory = tmp_path / "runs"
    store = FileStore(directory)
    w = Weather(store)
    parent = w.agent.run(PROMPT, run_id="parent-run").run_id
    at = result_line(store, parent, "Rome")
    w.agent.fork(parent, at=at, result=EDITED, fork_id="fork-run")
    Weather(store, weather_model(prefix="o")).agent.run("Weather in Lima?", run_id="other-run")
    return directory


def row_texts(app: RunsApp) -> dict[str, str]:
    run_list = app.runs_screen.run_list
    width = run_list.size.width
    return {r.run_id: run_list.render_row(i, width).plain for i, r in enumerate(run_list.rows)}


def compare_screen(app: RunsApp) -> CompareScreen:
    screen = app.screen
    assert isinstance(screen, CompareScreen), f"not the compare view: {screen!r}"
    return screen


def rendered(screen: CompareScreen, index: int) -> str:
    rows = screen.compare_list
    return rows.render_row(index, rows.size.width).plain


async def test_m_marks_the_run_and_m_again_unmarks_it(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select("other-run")
        await press(pilot, "M")
        assert app.runs_screen.run_list.compare_mark == "other-run"
        marked = row_texts(app)
        assert COMPARE_MARK in marked["other-run"]
        assert not any(COMPARE_MARK in t for r, t in marked.items() if r != "other-run")
        assert COMPARE_MARK in screen_text(app)
        assert any("Marked other-run" in n for n in notifications(app))
        await press(pilot, "M")
        assert app.runs_screen.run_list.compare_mark is None
        assert COMPARE_MARK not in screen_text(app)
        assert isinstance(app.screen, type(app.screen)) and not isinstance(
            app.screen, CompareScreen
        )


async def test_m_on_another_run_compares_the_two_first_divergence_highlighted(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select("parent-run")
        await press(pilot, "M")
        app.runs_screen.run_list.select("fork-run")
        await press(pilot, "M")
        await pilot.pause()
        screen = compare_screen(app)
        assert [r.run_id for r in screen.runs] == ["parent-run", "fork-run"]
        text = screen_text(app)
        # Both results of Rome's call, side by side on the row of the first divergence, which
        # the cursor is on; the edited one literally (its markup and escape shown as text).
        rows = screen.compare_list
        first = rendered(screen, rows.cursor)
        assert rows.cursor == screen.first_row
        assert first.startswith(FIRST_MARK)
        assert "→ Sunny in Rome." in first and SHOWN in first
        styles = {str(span.style) for span in rows.render_row(rows.cursor, 150).spans}
        assert FIRST_STYLE in styles  # its cells stand out, wherever the cursor goes
        assert SHOWN in text and "loud[/]" in text
        # The other differences: turn 2's text and the final answer, marked ≠.
        differing = [rendered(screen, i) for i in rows.difference_rows()]
        assert len(differing) == 3 and all(r.startswith(DIFFERS_MARK) for r in differing[1:])
        assert "heard: Sunny in Oslo. | Sunny in Rome." in differing[1]
        assert "answer: heard: Sunny in Oslo. | Hail in Rome." in differing[2]
        # The rows that do not differ are unmarked, the same on both sides.
        oslo = next(
            rendered(screen, i)
            for i, r in enumerate(screen.rows)
            if r.kind == "result" and r.call == 0
        )
        assert oslo.startswith(" ") and oslo.count("→ Sunny in Oslo.") == 2
        # The totals of both at the top, the first divergence said, the detail of the row.
        assert "a  parent-run  completed · 2 turns · 2 tool calls · 6 tokens" in text
        assert "fork of parent-run at line 6" in text
        assert "first divergence: turn 1, call 2 get_weather: another result · 3 differences" in (
            text
        )
        assert "a (line 6): Sunny in Rome." in text and f"b (line 8): {SHOWN}" in text
        assert "difference row 1 of 3 (n/N)" in text
        # The mark stays, for comparing the same run with others.
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)
        assert app.runs_screen.run_list.compare_mark == "parent-run"


async def test_n_and_shift_n_go_from_difference_to_difference(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select("parent-run")
        await press(pilot, "M")
        app.runs_screen.run_list.select("fork-run")
        await press(pilot, "M")
        await pilot.pause()
        screen = compare_screen(app)
        rows = screen.compare_list
        marked = rows.difference_rows()
        assert rows.cursor == marked[0]
        await pilot.press("n")
        assert rows.cursor == marked[1]
        assert "the model said something else" in screen_text(app)
        await pilot.press("n", "n")
        assert rows.cursor == marked[2]
        assert "no difference below" in screen_text(app)
        await pilot.press("N")
        assert rows.cursor == marked[1]
        await pilot.press("down", "down")  # the list scrolls, both sides together
        assert rows.cursor == marked[1] + 2
        await pilot.press("q")
        assert not isinstance(app.screen, CompareScreen)


async def test_m_on_a_fork_with_nothing_marked_compares_it_with_its_parent(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select("fork-run")
        await press(pilot, "M")
        await pilot.pause()
        screen = compare_screen(app)
        assert [r.run_id for r in screen.runs] == ["parent-run", "fork-run"]
        assert "first divergence: turn 1, call 2 get_weather: another result" in screen_text(app)
        assert app.runs_screen.run_list.compare_mark is None  # nothing was marked


async def test_two_runs_that_did_the_same_say_so(runs: Path) -> None:
    store = FileStore(runs)
    await Weather(store).agent.afork("parent-run", fork_id="copy-run")  # a whole-run fork
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select("copy-run")
        await press(pilot, "M")
        await pilot.pause()
        screen = compare_screen(app)
        text = screen_text(app)
        assert "no difference: the runs did the same (2 turns)" in text
        assert screen.compare_list.difference_rows() == [] and screen.first_row is None
        assert not any(rendered(screen, i)[0] in (FIRST_MARK, DIFFERS_MARK) for i in range(5))


async def test_a_fork_whose_parent_is_gone_is_marked_and_says_why(runs: Path) -> None:
    (runs / "parent-run.jsonl").unlink()
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select("fork-run")
        await press(pilot, "M")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)
        assert app.runs_screen.run_list.compare_mark == "fork-run"
        told = " ".join(notifications(app))
        assert "fork-run is a fork of parent-run, which is not in" in told
        # Its log is self-contained: compared with another run, it still reads whole.
        app.runs_screen.run_list.select("other-run")
        await press(pilot, "M")
        await pilot.pause()
        assert [r.run_id for r in compare_screen(app).runs] == ["fork-run", "other-run"]


async def test_a_marked_run_deleted_before_the_compare_is_said(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select("other-run")
        await press(pilot, "M")
        (runs / "other-run.jsonl").unlink()
        app.runs_screen.run_list.select("parent-run")
        await press(pilot, "M")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)
        assert any("Run other-run cannot be read" in n for n in notifications(app))
        assert app.runs_screen.run_list.compare_mark is None  # the mark went with its run


async def test_compare_reads_runs_from_a_postgresql_source(runs: Path, pg_stores: PgStores) -> None:
    with pg_stores() as store:
        report = copy_runs(FileStore(runs), store)
    assert sorted(report.copied) == ["fork-run", "other-run", "parent-run"]
    source = PostgresSource(pg_stores.dsn, schema=pg_stores.schema, clock=fixed_clock)
    app = RunsApp(source, watch=False, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select("fork-run")
        await press(pilot, "M")
        await pilot.pause()
        screen = compare_screen(app)
        assert [r.run_id for r in screen.runs] == ["parent-run", "fork-run"]
        first = rendered(screen, screen.compare_list.cursor)
        assert first.startswith(FIRST_MARK) and SHOWN in first
        assert "a (line 6): Sunny in Rome." in screen_text(app)
        # The playback reads the run through the same source.
        await pilot.press("escape")
        await press(pilot, "P")
        playback = app.screen
        assert isinstance(playback, PlaybackScreen)
        assert len(playback.steps) == len(FileStore(runs).load("fork-run"))
        assert "run_start" in screen_text(app)


async def test_a_late_first_divergence_is_scrolled_into_view(tmp_path: Path) -> None:
    """Two runs of 31 turns that part at turn 28: the view opens there, not at the top."""
    runs = copy_samples(tmp_path / "runs")
    long_run = SAMPLE_MANIFEST["long_run"]["run_id"]
    lines = (runs / f"{long_run}.jsonl").read_text().splitlines(keepends=True)
    changed = [
        line.replace("The weather in Prague is sunny", "The weather in Prague is <b>foggy</b>")
        for line in lines
    ]
    assert changed != lines
    (runs / "long-copy.jsonl").write_text("".join(changed))
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select(long_run)
        await press(pilot, "M")
        app.runs_screen.run_list.select("long-copy")
        await press(pilot, "M")
        await pilot.pause()
        screen = compare_screen(app)
        rows = screen.compare_list
        assert screen.first_row is not None and screen.first_row > 100
        assert rows.cursor == screen.first_row
        top = round(rows.scroll_y)
        assert top <= rows.cursor < top + rows.scrollable_content_region.height - 1
        text = screen_text(app)
        assert "first divergence: turn 28, call 1 get_weather: another result" in text
        assert "→ The weather in Prague is <b>foggy</b>" in text


async def test_an_unreadable_run_is_neither_compared_nor_played(runs: Path) -> None:
    (runs / "broken.jsonl").write_bytes(b"not json at all\n")
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select("broken")
        await press(pilot, "M")
        await press(pilot, "P")
        assert not isinstance(app.screen, (CompareScreen, PlaybackScreen))
        told = [n for n in notifications(app) if "Run broken is unreadable" in n]
        assert len(told) == 2, notifications(app)
        assert app.runs_screen.run_list.compare_mark is None


async def test_m_and_p_with_no_run_say_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    app = app_for(tmp_path / "empty")
    async with app.run_test(size=SIZE) as pilot:
        await press(pilot, "M")
        await press(pilot, "P")
        assert notifications(app) == ["No run selected.", "No run selected."]
        assert not isinstance(app.screen, (CompareScreen, PlaybackScreen))


async def test_a_collected_run_and_its_replay_compare_side_by_side_and_play_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of other frameworks (imported from their spans) in M and P as any run: a
    pydantic-ai run beside its replay by another model, the served results marked."""
    from agentor.cli import main as agentor_main
    from tests.conftest import ROOT
    from tests.openai_server import FakeOpenAI

    runs = tmp_path / "runs"
    spans = ROOT / "examples" / "otlp" / "three-frameworks.jsonl"
    assert agentor_main(["import", str(spans), "--store", str(runs)]) == 0
    store = FileStore(runs)
    parent = next(r for r in store.list_runs() if "Lisbon" in str(store.load(r)[0].messages))
    with FakeOpenAI() as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        argv = ["replay", parent, "--model", "gpt-4.1-mini", "--store", str(runs)]
        argv += ["--fork-id", "replay-run"]
        assert await asyncio.to_thread(agentor_main, argv) == 0
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.run_list.select(parent)
        await press(pilot, "M")
        app.runs_screen.run_list.select("replay-run")
        await press(pilot, "M")
        await pilot.pause()
        screen = compare_screen(app)
        assert [r.run_id for r in screen.runs] == [parent, "replay-run"]
        text = screen_text(app)
        assert "Sunny in Lisbon" in text and "completed" in text
        await pilot.press("escape")
        await press(pilot, "P")
        playback = app.screen
        assert isinstance(playback, PlaybackScreen)
        assert len(playback.steps) == len(store.load("replay-run"))
