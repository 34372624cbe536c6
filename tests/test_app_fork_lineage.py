"""Lineage in the TUI: forks marked ⑂ in the run list and found by the `fork` / `is:fork` filter,
a fork's parent and fork point in the detail pane, `u` to the parent at the fork point, `L` the
fork tree (its root ancestor and every fork below) where `enter` opens a run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, Tree

import agentor.engine.loop
import agentor.forking
import agentor.session.run
from agentor.engine.store.file import FileStore
from agentor.sources.directory.source import DirectorySource
from agentor.sources.lineage import fork_tree, root_of
from agentor.sources.runrow import RunRow
from tests.app_support import SIZE, app_for, notifications, priced, screen_text, wait_until
from tests.forkkit import Weather, result_line
from tests.test_snapshots import SteppingClock
from tui.widgets.fork_screen import ForkScreen
from tui.widgets.fork_tree import ForkTreeScreen

ROOT, A, B, C, OTHER = "r00t0000", "a1f0rk00", "b2f0rk00", "c3f0rk00", "u4other0"


def make_family(runs: Path) -> dict[str, int]:
    """A root run, two forks of it (a result edited, a message added), a fork of the first
    (its prompt replaced) and an unrelated run; the lines each was forked at."""
    store = FileStore(runs)
    w = Weather(store)
    w.agent.run("Weather in Vienna and Paris?", run_id=ROOT)
    paris = result_line(store, ROOT, "Paris")
    w.agent.fork(ROOT, at=paris, result="Snow in Paris.", fork_id=A)
    w.agent.fork(ROOT, "And Rome?", at=2, fork_id=B)
    w.agent.fork(A, "Weather in Oslo?", at=1, fork_id=C)
    w.agent.run("Weather in Lima?", run_id=OTHER)
    return {A: paris, B: 2, C: 1}


@pytest.fixture
def family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, int]]:
    clock = SteppingClock(1796039000.0)  # the same times in every run: snapshots stay put
    for module in (agentor.engine.loop, agentor.session.run, agentor.forking):
        monkeypatch.setattr(module, "time", clock)
    monkeypatch.setenv("HOME", str(tmp_path))
    runs = tmp_path / "runs"
    runs.mkdir()
    return runs, make_family(runs)


def listed(app) -> list[str]:
    return [r.run_id for r in app.runs_screen.run_list.rows]


def test_rows_know_their_parent_fork_point_and_edit(family) -> None:
    runs, at = family
    source = DirectorySource(runs)
    source.scan()
    rows = {r.run_id: r for r in source.rows()}
    assert (rows[A].forked_from, rows[A].fork_at, rows[A].fork_edit) == (
        ROOT,
        at[A],
        "result edited",
    )
    assert (rows[B].forked_from, rows[B].fork_at, rows[B].fork_edit) == (ROOT, 2, "input added")
    # A fork of a fork names its own parent, not the one its copied events name.
    assert (rows[C].forked_from, rows[C].fork_at, rows[C].fork_edit) == (A, 1, "prompt replaced")
    assert rows[ROOT].forked_from is None and rows[OTHER].forked_from is None


def test_a_quick_row_learns_its_parent_once_filled(family) -> None:
    runs, _ = family
    source = DirectorySource(runs)
    source._add(C, str(runs / f"{C}.jsonl"), whole_under=-1)  # head and tail only
    row = source.get(C)
    assert row is not None and not row.complete
    source.fill()
    assert source.get(C).forked_from == A


def test_the_fork_tree_goes_up_to_the_root_and_down_every_fork() -> None:
    rows = [RunRow("r"), RunRow("a"), RunRow("b"), RunRow("c"), RunRow("x")]
    rows[1].forked_from = rows[2].forked_from = "r"
    rows[3].forked_from = "a"
    top = fork_tree(rows, "c")
    assert top.run_id == "r"
    assert [n.run_id for n in top.forks] == ["a", "b"]
    assert [n.run_id for n in top.forks[0].forks] == ["c"]
    # A parent the store lacks is the root, shown as missing; a crafted loop ends.
    lone = RunRow("y")
    lone.forked_from = "gone"
    assert fork_tree([lone], "y").row is None
    p, q = RunRow("p"), RunRow("q")
    p.forked_from, q.forked_from = "q", "p"
    assert root_of({"p": p, "q": q}, "p") == "q"


async def test_forks_are_marked_and_the_filter_finds_them(family) -> None:
    runs, _ = family
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        screen = screen_text(app)
        assert screen.count("⑂ Weather in") == 3  # A, B, C; not the root nor the other run
        await pilot.press("slash", *"fork", "enter")
        await pilot.pause()
        assert sorted(listed(app)) == [A, B, C]
        assert "Runs 3 of 5" in screen_text(app)
        await pilot.press("escape")
        await pilot.press("slash", *"is:fork oslo", "enter")
        await pilot.pause()
        assert listed(app) == [C]


async def test_u_goes_to_the_parent_at_the_fork_point(family) -> None:
    runs, at = family
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(A)
        await pilot.pause()
        assert app.runs_screen.event_detail.text.startswith(
            f"⑂ forked from {ROOT} at line {at[A]}: result edited"
        )
        await pilot.press("u")
        await pilot.pause()
        assert app.runs_screen.run_list.current.run_id == ROOT
        assert (
            app.runs_screen.timeline.run_id == ROOT and app.runs_screen.timeline.cursor == at[A] - 1
        )
        assert app.focused is app.runs_screen.timeline
        assert "tool_result" in app.runs_screen.event_detail.text.splitlines()[0]
        # The root has no parent: u says so.
        await pilot.press("u")
        await pilot.pause()
        assert f"Run {ROOT} is no fork: it has no parent." in notifications(app)


async def test_u_shows_a_parent_the_filter_hid(family) -> None:
    runs, _ = family
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"is:fork", "enter")
        await pilot.pause()
        assert app.runs_screen.run_list.select(C)
        await pilot.press("u")
        await wait_until(
            pilot,
            lambda: (
                app.runs_screen.run_list.current.run_id == A
                and app.runs_screen.timeline.run_id == A
            ),
            what="the parent",
        )
        assert app.runs_screen.timeline.cursor == 0


async def test_u_on_a_fork_whose_parent_is_gone_says_so(family) -> None:
    runs, _ = family
    (runs / f"{A}.jsonl").unlink()
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(C)
        await pilot.press("u")
        await pilot.pause()
        assert f"The parent {A} is not in {runs}." in notifications(app)
        assert app.runs_screen.run_list.current.run_id == C


async def test_L_shows_the_tree_and_enter_opens_a_run(family) -> None:
    runs, _ = family
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(C)
        await pilot.press("L")
        await pilot.pause()
        assert isinstance(app.screen, ForkTreeScreen)
        tree = app.screen.query_one(Tree)
        assert tree.root.data == ROOT
        assert [n.data for n in tree.root.children] == [A, B]
        assert [n.data for n in tree.root.children[0].children] == [C]
        await wait_until(pilot, lambda: tree.cursor_node is not None and tree.cursor_node.data == C)
        text = screen_text(app)
        assert "Fork tree of r00t0000 · 3 forks" in text
        assert "⑂ at line 1: prompt replaced" in text
        await pilot.press("up")  # the tree reads R, A, C, B: up from C is A
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, ForkTreeScreen)
        assert app.runs_screen.run_list.current.run_id == A and app.runs_screen.timeline.run_id == A


def test_fork_tree_snapshot(snap_compare, family) -> None:
    runs, _ = family

    async def open_tree(pilot) -> None:
        await priced(pilot)  # every row read whole (a loaded machine fills them late)
        pilot.app.runs_screen.run_list.select(B)
        await pilot.pause()
        await pilot.press("L")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ForkTreeScreen))
        await pilot.pause()

    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=open_tree)


def test_the_family_copies_are_self_contained(family, tmp_path: Path) -> None:
    """The parent deleted, its forks still list with their lineage (their logs hold it)."""
    runs, _ = family
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(runs / f"{C}.jsonl", alone)
    source = DirectorySource(alone)
    source.scan()
    [row] = source.rows()
    assert row.forked_from == A and row.status == "completed"


def test_fork_form_snapshot(snap_compare, family) -> None:
    """The form at a generation: the run's model, the models seen, a message to add."""
    runs, _ = family

    async def open_form(pilot) -> None:
        await priced(pilot)
        pilot.app.runs_screen.run_list.select(ROOT)
        await pilot.pause()
        pilot.app.screen.set_focus(pilot.app.runs_screen.timeline)
        pilot.app.runs_screen.timeline.move_cursor(1)
        await pilot.pause()
        await pilot.press("F")
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ForkScreen))
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False  # no cursor drawn or not, by when the picture is taken
        await pilot.pause()

    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=open_form)
