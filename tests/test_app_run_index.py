"""The app and the run index: the list comes from the index at once (no log read), and a live
app saves the index a while after its rows change, so the next start reads nothing again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentor.sources.directory import runindex
from agentor.sources.directory.source import DirectorySource
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
from tests.test_app_live import FINISH_VIENNA
from tui.controllers import index_saver

VIENNA = IDS["crash_after_tool_result"]


def listed(directory: Path) -> DirectorySource:
    source = DirectorySource(directory)
    source.scan()
    return source


async def until(condition, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_the_list_appears_from_the_index_without_reading_a_log(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    cold = app_for(runs)
    async with cold.run_test(size=SIZE) as pilot:
        await pilot.pause()
        want = row_statuses(cold)
    saved = listed(runs)
    saved.fill()
    saved.save_index()

    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.source.from_index == 8  # type: ignore[attr-defined]
        assert (app.source.bytes_read, app.source.lines_decoded) == (0, 0)  # type: ignore[attr-defined]
        assert row_statuses(app) == want
        assert "Runs 8 · 2 interrupted · 2 failed" in screen_text(app)


async def test_a_live_app_saves_the_index_after_its_rows_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_saver, "SAVE_CHECK_S", 0.05)
    runs = copy_fixtures(tmp_path / "runs")
    index_file = runs / runindex.INDEX_DIR / runindex.INDEX_FILE
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.index_saver.saves >= 1)  # the logs read at the start
        assert listed(runs).from_index == 8
        await until(lambda: not app.source.index_stale)  # type: ignore[attr-defined]
        saves = app.index_saver.saves
        app.index_saver.next_at = 0.0  # no wait for the cost of the last save
        write_log(runs, VIENNA, FINISH_VIENNA)
        await until(lambda: row_statuses(app)[VIENNA] == "completed")
        await until(lambda: app.index_saver.saves > saves)
        await pilot.pause()
    assert index_file.exists()
    warm = listed(runs)
    assert warm.from_index == 8 and warm.bytes_read == 0
    assert warm.get(VIENNA).status == "completed"  # type: ignore[union-attr]


async def test_an_index_that_cannot_be_saved_anywhere_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_saver, "SAVE_CHECK_S", 0.05)
    runs = copy_fixtures(tmp_path / "runs")
    (runs / runindex.INDEX_DIR).write_text("in the way")  # no directory can be made there
    (tmp_path / "cache").write_text("in the way too")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.index_saver.failed)
        saver = app.index_saver
        saver.next_at = 0.0  # tried again at once: fails again, said no more
        await until(lambda: saver.next_at > 0.0 and not saver.saving)  # it failed once more
        await pilot.pause()
        said = [n for n in notifications(app) if "Cannot save the run index" in n]
        assert len(said) == 1 and "the next start reads every log again" in said[0]
        assert len(row_statuses(app)) == 8  # the list itself is whole
    assert (runs / runindex.INDEX_DIR).read_text() == "in the way"


async def test_the_app_saves_an_index_its_next_start_takes_every_row_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opened twice: the second start reads no log. Two rows with the same torn last line hold
    a nested object (`LogTail.first_bad`) the others do not, as rows priced mid-fill hold a
    cost the others do not: columns shorter than the table, each of one repeated value."""
    monkeypatch.setattr(index_saver, "SAVE_CHECK_S", 0.05)
    runs = copy_fixtures(tmp_path / "runs")
    completed = (runs / f"{IDS['completed']}.jsonl").read_bytes()
    for run_id in ("torn1" + "0" * 27, "torn2" + "0" * 27):
        (runs / f"{run_id}.jsonl").write_bytes(completed + b'{"type": "message", "tu\n')
    first = app_for(runs, watch=True)
    async with first.run_test(size=SIZE) as pilot:
        await until(lambda: first.index_saver.saves >= 1)
        await until(lambda: not first.source.index_stale)  # type: ignore[attr-defined]
        want = row_statuses(first)
        await pilot.pause()
    assert want["torn1" + "0" * 27] == "completed"
    assert first.source.get("torn1" + "0" * 27).error.startswith("1 bad line")  # type: ignore[attr-defined]

    second = app_for(runs, watch=True)
    async with second.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert second.source.index.problem is None  # type: ignore[attr-defined]
        assert second.source.from_index == 10  # type: ignore[attr-defined]
        assert (second.source.bytes_read, second.source.lines_decoded) == (0, 0)  # type: ignore[attr-defined]
        assert row_statuses(second) == want


async def test_the_index_is_saved_as_soon_as_the_first_scan_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A short look (open, quit once the list is there) leaves an index: saved right after the
    first scan, not at the saver's first look (which never comes here)."""
    monkeypatch.setattr(index_saver, "SAVE_CHECK_S", 3600.0)
    runs = copy_fixtures(tmp_path / "runs")
    index_file = runs / runindex.INDEX_DIR / runindex.INDEX_FILE
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(index_file.exists)
        assert app.index_saver.saves >= 1
        await pilot.pause()
    warm = listed(runs)
    assert warm.from_index == 8 and warm.bytes_read == 0


async def test_quitting_saves_the_rows_changed_since_the_last_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_saver, "SAVE_CHECK_S", 3600.0)  # no save but the first and the last
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.index_saver.saves >= 1 and not app.index_saver.saving)
        write_log(runs, VIENNA, FINISH_VIENNA)
        await until(lambda: row_statuses(app)[VIENNA] == "completed")
        saves = app.index_saver.saves
        await pilot.pause()
    assert app.index_saver.saves == saves + 1  # on the way out
    warm = listed(runs)
    assert warm.from_index == 8 and warm.bytes_read == 0
    assert warm.get(VIENNA).status == "completed"  # type: ignore[union-attr]

    again = app_for(runs, watch=True)  # nothing changed: nothing saved at exit
    async with again.run_test(size=SIZE) as pilot:
        await until(lambda: not again.source.index_stale and not again.index_saver.saving)  # type: ignore[attr-defined]
        saves = again.index_saver.saves
        await pilot.pause()
    assert again.index_saver.saves == saves
