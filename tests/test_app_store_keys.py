"""Operating the store from the TUI (issue 14): `p` pins, `d` deletes once confirmed, `w`
writes an export, `ctrl+f` searches every run, `S` shows stats; what runs cost in the list, the
timeline and the detail. Pilot tests over crafted FileStore runs with known prices."""

from __future__ import annotations

import json
import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentor.engine.store.file import FileStore
from agentor.ops.run_export import export
from tests.app_support import (
    SIZE,
    app_for,
    notifications,
    priced,
    screen_text,
    wait_until,
    write_log,
)
from tui.text.search_text import around_match
from tui.widgets.delete_screen import DeleteScreen
from tui.widgets.export_screen import ExportScreen
from tui.widgets.runs_search import RunsSearchScreen
from tui.widgets.stats_screen import StatsScreen

# A day on which gpt-4o-mini cost $0.15 per million input tokens and $0.60 per million output
# tokens: 1000 in and 100 out cost $0.00021 (tests/test_pricing.py).
MAY_2025 = datetime(2025, 5, 1, tzinfo=UTC).timestamp()
USAGE = {"input_tokens": 1000, "output_tokens": 100, "total_tokens": 1100}


def run_events(prompt: str, model: str, usages: list[dict | None], status: str = "completed"):
    t = MAY_2025
    events: list[dict] = [
        {
            "type": "run_start",
            "agent": "Booking Agent",
            "model": model,
            "messages": [{"role": "user", "content": prompt}],
            "started_at": t,
            "ts": t,
        }
    ]
    for turn, usage in enumerate(usages, 1):
        gen = {"type": "generation", "turn": turn, "text": f"turn {turn}", "ts": t + turn}
        if usage is not None:
            gen["usage"] = usage
        events.append(gen)
    end = {"type": "run_end", "status": status, "turn": len(usages), "ts": t + 10}
    if status == "completed":
        end["text"] = "done"
    events.append(end)
    return events


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    d = tmp_path / "runs"
    d.mkdir()
    write_log(d, "known", run_events("Book a room in Paris", "gpt-4o-mini", [USAGE]))
    write_log(d, "unknown", run_events("Ask the local model", "my-local-llm", [USAGE]))
    # One generation priced, one that recorded no usage: a lower bound.
    write_log(d, "partial", run_events("Half known", "gpt-4o-mini", [USAGE, None]))
    write_log(
        d, "gated", run_events("Book it [bold]now[/bold]", "gpt-4o-mini", [], "awaiting_approval")
    )
    return d


def line_of(app, run_id: str) -> str:
    """The run list's line of `run_id` (its id column: after the pin mark and the status)."""
    lines = screen_text(app).splitlines()
    return next(x for x in lines if x.startswith("│") and run_id in x.split()[1:4])


async def open_list(pilot, run_id: str) -> None:
    await priced(pilot)
    assert pilot.app.runs_screen.run_list.select(run_id)
    await pilot.pause()


# -- cost ----------------------------------------------------------------------------------------


async def test_the_cost_column_shows_known_unknown_and_partly_known_costs(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        assert "cost" in screen_text(app).splitlines()[1]  # the header
        assert "$0.00021  Book a room in Paris" in line_of(app, "known")
        assert "–  Ask the local model" in line_of(app, "unknown")  # never $0
        assert "≥$0.00021  Half known" in line_of(app, "partial")
        assert "–  Book it [bold]now[/bold]" in line_of(app, "gated")  # no generation; literal
        # The list's total, under it: what is known, a lower bound as some is not.
        assert str(app.runs_screen.runs_pane.border_subtitle) == "cost ≥$0.00042"
        # A filter narrows the total to the runs shown.
        await pilot.press("slash", *"Paris", "enter")
        await pilot.pause()
        assert "Runs 1 of 4 ─" in screen_text(app).splitlines()[0]
        assert str(app.runs_screen.runs_pane.border_subtitle) == "filter: Paris · cost $0.00021"
        await pilot.press("escape", "slash", *"local", "enter")
        await pilot.pause()
        assert str(app.runs_screen.runs_pane.border_subtitle) == "filter: local · cost –"


async def test_the_tokens_column_writes_every_count_of_a_thousand_and_more_alike(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for run_id, total in (("big", 48_912), ("mid", 8965), ("small", 950)):
        usage = {"input_tokens": total - 100, "output_tokens": 100, "total_tokens": total}
        write_log(runs, run_id, run_events(f"{run_id} run", "gpt-4o-mini", [usage]))
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        # turns, tools, tokens, then the cost
        assert re.search(r" 1 +0 +48\.9k +\$", line_of(app, "big"))
        assert re.search(r" 1 +0 +9\.0k +\$", line_of(app, "mid"))  # not "8965" by "48.9k"
        assert re.search(r" 1 +0 +950 +\$", line_of(app, "small"))


async def test_the_timeline_prices_each_generation_and_the_detail_totals_the_run(
    runs: Path,
) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "partial")
        screen = screen_text(app)
        assert "turn 1  1.0k→100 tok · $0.00021" in screen
        assert "turn 2 · –" in screen  # no usage recorded: unknown, not $0
        await pilot.press("enter", "home")
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert "run cost ≥$0.00021 (1 of 2 generations priced; 1 not: unknown model" in detail
        await pilot.press("down")
        await pilot.pause()
        assert "cost     $0.00021" in app.runs_screen.event_detail.text


def test_a_row_read_whole_is_priced_and_appended_generations_add_to_it(runs: Path) -> None:
    from decimal import Decimal

    from agentor.ops.pricing import RunCost
    from agentor.sources.directory.source import DirectorySource

    source = DirectorySource(runs)
    source.scan()
    assert all(r.cost is None for r in source.rows())  # the scan prices nothing (UI thread)
    assert set(source.fill()) == {"known", "unknown", "partial", "gated"}
    row = source.get("known")
    assert row is not None and row.cost == RunCost(Decimal("0.00021"), 1, 0)
    assert source.get("unknown").cost == RunCost(None, 0, 1)
    path = runs / "known.jsonl"
    with path.open("a") as f:  # a resume's segment, on another model, priced as it comes in
        f.write(json.dumps({"type": "run_start", "model": "gpt-4o", "ts": MAY_2025 + 20}) + "\n")
        gen = {"type": "generation", "turn": 2, "usage": USAGE, "ts": MAY_2025 + 21}
        f.write(json.dumps(gen) + "\n")
    changes = source.refresh(["known"])
    assert changes.appended == {"known": 2}
    cost = source.get("known").cost
    # gpt-4o that day: $2.50 / $10 per million: 1000 in and 100 out cost $0.0035.
    assert cost == RunCost(Decimal("0.00021") + Decimal("0.0035"), 2, 0)


# -- p: pins -------------------------------------------------------------------------------------


async def test_p_pins_the_run_marks_it_and_p_again_unpins(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "known")
        await pilot.press("p")
        await wait_until(pilot, lambda: "known" in app.runs_screen.run_list.pinned, what="the pin")
        await pilot.pause()
        assert (runs / ".pins" / "known").is_file()
        assert FileStore(runs).pinned() == {"known"}
        assert line_of(app, "known").startswith("│ *  completed")
        assert not line_of(app, "unknown").startswith("│ *")
        assert any("Pinned run known: prune keeps it." in n for n in notifications(app))
        await pilot.press("enter", "home")
        await pilot.pause()
        assert "pinned   yes: prune keeps it (p unpins)" in app.runs_screen.event_detail.text
        await pilot.press("escape", "p")
        await wait_until(pilot, lambda: not app.runs_screen.run_list.pinned, what="the pin gone")
        await pilot.pause()
        assert not (runs / ".pins" / "known").exists()
        assert line_of(app, "known").startswith("│    completed")


# -- d: delete -----------------------------------------------------------------------------------


async def test_d_asks_naming_the_run_and_y_deletes_it(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "known")
        await pilot.press("p")
        await wait_until(pilot, lambda: "known" in app.runs_screen.run_list.pinned, what="the pin")
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, DeleteScreen)
        screen = screen_text(app)
        for part in ("Delete this run?", "run     known", "status  completed", "Book a room"):
            assert part in screen
        await pilot.press("n")  # kept
        await pilot.pause()
        assert (runs / "known.jsonl").exists() and app.runs_screen.run_list.index_of(
            "known"
        ) is not None
        await pilot.press("d", "y")
        await wait_until(
            pilot, lambda: app.runs_screen.run_list.index_of("known") is None, what="gone"
        )
        assert not (runs / "known.jsonl").exists()
        assert not (runs / ".pins" / "known").exists()  # its pin went with it
        assert app.runs_screen.run_list.index_of("known") is None
        assert "known" not in {r.run_id for r in app.source.rows()}
        assert any(n.startswith("Deleted run known (") for n in notifications(app))


async def test_d_names_the_forks_a_run_has_in_its_question(runs: Path) -> None:
    fork = run_events("Book a room in Paris", "gpt-4o-mini", [USAGE])
    fork[0]["forked_from"] = "known"  # upstream's way of naming the parent
    write_log(runs, "a-fork-of-known", fork)
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "known")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DeleteScreen), what="the question")
        told = "forks   has 1 fork: a-fork-of-known (it stays, without its parent; prune keeps"
        assert told in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        app.runs_screen.run_list.select("unknown")  # no fork: no such line
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DeleteScreen), what="the question")
        assert "run     unknown" in screen_text(app) and "forks   has" not in screen_text(app)


async def test_d_says_at_once_that_a_run_awaiting_approval_or_held_is_not_deleted(
    runs: Path,
) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "gated")
        await pilot.press("d")
        refused = "Run gated is not deleted: awaiting approval."
        await wait_until(pilot, lambda: refused in notifications(app), what="the refusal")
        assert not isinstance(app.screen, DeleteScreen)  # nothing to confirm
        assert "Book it [bold]now[/bold]" in screen_text(app)  # the list, named literally
        assert (runs / "gated.jsonl").exists() and app.runs_screen.run_list.index_of(
            "gated"
        ) is not None

        held, release = threading.Event(), threading.Event()

        def hold() -> None:
            with FileStore(runs).lock("unknown"):
                held.set()
                release.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(5)
            app.runs_screen.run_list.select(
                "unknown"
            )  # not watched: its row does not know it is held
            await pilot.press("d")
            await wait_until(
                pilot, lambda: [n for n in notifications(app) if "unknown is not" in n]
            )
            assert not isinstance(app.screen, DeleteScreen)
            assert (runs / "unknown.jsonl").exists()
            told = f"Run unknown is not deleted: held by process {os.getpid()}."
            assert told in notifications(app)
        finally:
            release.set()
            holder.join()


async def test_a_run_taken_while_the_question_is_open_is_still_refused(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "unknown")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, DeleteScreen), what="the question")
        with FileStore(runs).lock("unknown"):  # taken before y: delete_run checks again
            await pilot.press("y")
            await wait_until(
                pilot, lambda: [n for n in notifications(app) if "unknown is not" in n]
            )
        assert (runs / "unknown.jsonl").exists()
        assert f"Run unknown is not deleted: held by process {os.getpid()}." in notifications(app)


# -- w: export -----------------------------------------------------------------------------------


async def test_w_writes_the_export_never_over_a_file_and_says_where(
    runs: Path, tmp_path: Path
) -> None:
    out = tmp_path / "exports"
    out.mkdir()
    app = app_for(runs)
    app.export_dir = out
    store = FileStore(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "known")
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        assert app.screen.where == str(out) and "Export run known" in screen_text(app)
        await pilot.press("enter")  # Markdown, the default
        await wait_until(pilot, lambda: (out / "known.md").exists(), what="the export")
        assert (out / "known.md").read_text() == export(store, "known", "md")
        await wait_until(pilot, lambda: f"Wrote {out / 'known.md'}" in notifications(app))

        await pilot.press("w", "enter")  # again: a new file, the first left as it is
        await wait_until(pilot, lambda: (out / "known-2.md").exists(), what="a second export")
        assert (out / "known.md").read_text() == export(store, "known", "md")
        await wait_until(
            pilot,
            lambda: (
                f"Wrote {out / 'known-2.md'} (known.md exists: left as it is)" in notifications(app)
            ),
        )

        await pilot.press("w", "j")
        await wait_until(pilot, lambda: (out / "known.json").exists(), what="the JSON export")
        document = json.loads((out / "known.json").read_text())
        assert document["run_id"] == "known" and len(document["events"]) == 3

        await pilot.press("w", "h")
        await wait_until(pilot, lambda: (out / "known.html").exists(), what="the HTML export")
        assert (out / "known.html").read_text() == export(store, "known", "html")

        await pilot.press("w", "escape")  # cancelled: nothing written
        await pilot.pause()
        assert sorted(p.name for p in out.iterdir()) == [
            "known-2.md",
            "known.html",
            "known.json",
            "known.md",
        ]


async def test_w_into_a_directory_that_is_gone_says_why_and_writes_nothing(
    runs: Path, tmp_path: Path
) -> None:
    app = app_for(runs)
    app.export_dir = tmp_path / "no-such-dir"
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "known")
        await pilot.press("w", "enter")
        await wait_until(pilot, lambda: [n for n in notifications(app) if "not exported" in n])
        where = tmp_path / "no-such-dir"
        told = f"Run known was not exported to {where}: No such file or directory"
        assert told in notifications(app)


# -- ctrl+f: every run ---------------------------------------------------------------------------


async def test_ctrl_f_lists_matches_of_every_run_and_enter_opens_the_event(runs: Path) -> None:
    write_log(
        runs,
        "markup",
        run_events("Find [red]Paris[/red] \x1b[31m hotels", "gpt-4o-mini", [USAGE]),
    )
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "unknown")
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert isinstance(app.screen, RunsSearchScreen)
        await pilot.press(*"paris", "enter")
        search = app.screen
        await wait_until(pilot, lambda: search.state == "done", what="the search")
        assert {h.run_id for h in search.hits} == {"known", "markup"}
        screen = screen_text(app)
        assert "2 matches in 2 runs for 'paris'" in screen
        assert "run known · Book a room in Paris" in screen
        # Text from a log is shown literally: markup as written, the escape made visible.
        assert "Find [red]Paris[/red] ␛[31m hotels" in screen
        hit_rows = [o for o in search.hit_list._options if not o.disabled]
        highlighted = [s for s in hit_rows[0].prompt.spans if "yellow" in str(s.style)]
        assert [hit_rows[0].prompt.plain[s.start : s.end] for s in highlighted] == ["Paris"]
        await pilot.press("enter")  # the first match: known's run_start, line 1
        await pilot.pause()
        assert app.screen is app.screen_stack[0]
        assert app.runs_screen.run_list.current.run_id == "known"
        assert app.runs_screen.timeline.run_id == "known" and app.runs_screen.timeline.cursor == 0
        assert app.focused is app.runs_screen.timeline


async def test_ctrl_f_at_80_columns_cuts_each_snippet_around_its_match(runs: Path) -> None:
    prompt = (
        "I would like a quiet room with a view for three nights near the old town, "
        "please, and breakfast every morning before the museums open at nine"
    )
    write_log(runs, "long", run_events(prompt, "gpt-4o-mini", [USAGE]))
    app = app_for(runs)
    async with app.run_test(size=(80, 24)) as pilot:
        await priced(pilot)
        await pilot.press("ctrl+f", *"breakfast", "enter")
        search = app.screen
        await wait_until(pilot, lambda: search.state == "done", what="the search")
        [hit_row] = [o for o in search.hit_list._options if not o.disabled]
        line = next(x for x in screen_text(app).splitlines() if "line 1" in x)
        # The match in the middle, what is around it cut at both ends.
        assert re.search(r"  …[^…]+, and breakfast every [^…]+…", line), line
        highlighted = [s for s in hit_row.prompt.spans if "yellow" in str(s.style)]
        assert [hit_row.prompt.plain[s.start : s.end] for s in highlighted] == ["breakfast"]
        await pilot.resize_terminal(120, 24)  # wider: cut again, with more around the match

        def hit_line_shown() -> str:
            return next(x for x in screen_text(app).splitlines() if "line 1" in x)

        await wait_until(
            pilot, lambda: "town, please, and breakfast every morning" in hit_line_shown()
        )


def test_a_snippet_is_cut_around_its_match_wherever_the_match_is() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(60))
    for start in range(len(text) - 3):
        cut, s, e = around_match(text, start, start + 3, 12)
        assert len(cut) == 12 and cut[s:e] == text[start : start + 3]
        assert cut.startswith("…") == (start > 4) and "…" not in cut[1:-1]
    assert around_match(text, 10, 40, 12) == ("…" + text[10:20] + "…", 1, 11)  # the match's start
    assert around_match("short", 1, 3, 12) == ("short", 1, 3)


async def test_ctrl_f_goes_past_the_filter_to_a_run_it_hides(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        await pilot.press("slash", *"unknown", "enter")
        await pilot.pause()
        assert app.runs_screen.run_list.index_of("partial") is None
        await pilot.press("ctrl+f", *"Half", "enter")
        await wait_until(pilot, lambda: app.screen.state == "done", what="the search")
        await pilot.press("enter")
        await pilot.pause()
        assert (
            app.runs_screen.run_list.current.run_id == "partial"
            and app.runs_screen.timeline.run_id == "partial"
        )


async def test_ctrl_f_finding_nothing_keeps_the_query_focused_and_says_so(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        await pilot.press("ctrl+f", *"Lisbon", "enter")
        search = app.screen
        assert isinstance(search, RunsSearchScreen)
        await wait_until(pilot, lambda: search.state == "done", what="the search")
        assert search.hits == [] and app.focused is search.query_input
        assert "no run contains 'Lisbon'" in screen_text(app)
        # Typing goes on in the query: the next try is searched and its results focused.
        await pilot.press(*["backspace"] * 6, *"Paris", "enter")
        await wait_until(pilot, lambda: search.state == "done" and search.hits, what="hits")
        assert search.query_text == "Paris" and app.focused is search.hit_list


async def test_tab_back_to_the_query_puts_the_cursor_at_its_end(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        await pilot.press("ctrl+f", *"Paris", "enter")
        search = app.screen
        await wait_until(pilot, lambda: app.focused is search.hit_list, what="the results")
        await pilot.press("tab")
        await pilot.pause()
        query = search.query_input
        assert app.focused is query and query.selection.is_empty
        await pilot.press(*" room")  # added to the query, not typed over it
        assert query.value == "Paris room"


async def test_the_first_hit_takes_the_focus_unless_a_new_query_is_being_typed(
    runs: Path,
) -> None:
    from agentor.engine.store.matching import Hit

    gates = [threading.Event(), threading.Event()]

    def held(query: str):
        gates[0 if query == "Paris" else 1].wait(10)  # a big store: the first hit takes long
        yield Hit("known", 1, "run_start", "messages[1].content", query, 0, len(query))

    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        screen = RunsSearchScreen(held, lambda run_id: None, "here")
        app.push_screen(screen)
        await pilot.pause()
        await pilot.press(*"Paris", "enter")
        await pilot.pause()
        assert screen.state == "searching" and app.focused is screen.query_input
        gates[0].set()
        await wait_until(pilot, lambda: app.focused is screen.hit_list, what="the results")
        # Searching again, and changing the query before the first hit: the focus stays.
        await pilot.press("tab", "!", "enter", "backspace")
        gates[1].set()
        await wait_until(pilot, lambda: screen.state == "done", what="the second search")
        assert len(screen.hits) == 1 and app.focused is screen.query_input


async def test_esc_stops_a_search_under_way_then_closes(runs: Path) -> None:
    from agentor.engine.store.matching import Hit

    gate, stopped_at = threading.Event(), []

    def slow(query: str):
        yield Hit("known", 1, "run_start", "messages[1].content", "Paris", 0, 5)
        gate.wait(10)  # a big store: the next hit takes long
        stopped_at.append(True)
        yield Hit("partial", 1, "run_start", "messages[1].content", "Paris", 0, 5)

    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        screen = RunsSearchScreen(slow, lambda run_id: None, "here")
        app.push_screen(screen)
        await pilot.pause()
        await pilot.press(*"Paris", "enter")
        await wait_until(pilot, lambda: len(screen.hits) == 1, what="the first hit")
        assert screen.state == "searching"
        await pilot.press("escape")
        await pilot.pause()
        assert screen.state == "stopped" and app.screen is screen  # stopped, still open
        assert "stopped: 1 match in 1 run for 'Paris'" in screen_text(app)
        gate.set()
        await wait_until(pilot, lambda: stopped_at, what="the worker to move on")
        searching = [w for w in app.workers if w.group == "runs-search"]
        await wait_until(pilot, lambda: all(w.is_finished for w in searching), what="its end")
        screen._drain()  # what its timer does: take in what the worker found
        assert len(screen.hits) == 1  # what came after the stop is not listed
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


# -- S: stats ------------------------------------------------------------------------------------


async def test_s_shows_runs_tokens_and_cost_of_the_runs_shown(runs: Path) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        await pilot.press("S")
        await pilot.pause()
        assert isinstance(app.screen, StatsScreen)
        text = screen_text(app)
        assert "4 runs · 3.3k tokens · cost ≥$0.00042" in text
        assert "│ 2025-05-01 │    4 │   3.3k │ ≥$0.00042 │ ██████████████████████████████ │" in text
        assert "│ gpt-4o-mini  │    3 │   2.2k │ ≥$0.00042 │" in text
        assert "│ my-local-llm │    1 │   1.1k │         – │" in text  # unknown, not $0
        await pilot.press("escape", "slash", *"Half", "enter", "S")
        await pilot.pause()
        text = screen_text(app)
        assert "1 shown of 4 runs" in text and "1 run · 1.1k tokens · cost ≥$0.00021" in text


async def test_a_store_without_pins_or_deletion_says_so_and_changes_nothing(runs: Path) -> None:
    class PlainStore:
        """A store of the three methods only (no `PinningStore`, no `DeletingStore`)."""

        def __init__(self, inner: FileStore) -> None:
            self.inner = inner

        def append(self, run_id, event):
            self.inner.append(run_id, event)

        def load(self, run_id):
            return self.inner.load(run_id)

        def list_runs(self):
            return self.inner.list_runs()

    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "known")
        app.source.store = PlainStore(FileStore(runs))
        await pilot.press("p", "d")
        await pilot.pause()
        assert f"This store cannot pin runs ({runs})." in notifications(app)
        assert f"This store cannot delete runs ({runs})." in notifications(app)
        assert not (runs / ".pins").exists() and (runs / "known.jsonl").exists()
        assert not isinstance(app.screen, DeleteScreen)


async def test_a_pin_made_elsewhere_is_marked_at_the_next_tick(runs: Path) -> None:
    from tui.controllers.watcher import Watcher

    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        FileStore(runs).pin("unknown")  # `agentor pin` in a shell
        app.watcher.post_message(Watcher.Ticked(moved=False))  # a second goes by
        await wait_until(
            pilot, lambda: "unknown" in app.runs_screen.run_list.pinned, what="the mark"
        )
        await pilot.pause()
        assert line_of(app, "unknown").startswith("│ *  completed")


async def test_the_store_keys_do_nothing_while_a_screen_is_open_above_the_list(
    runs: Path,
) -> None:
    app = app_for(runs)
    async with app.run_test(size=SIZE) as pilot:
        await open_list(pilot, "known")
        await pilot.press("w")
        await pilot.pause()
        export_screen = app.screen
        await pilot.press("p", "d", "ctrl+f", "S")  # not the export screen's keys
        await pilot.pause()  # each is turned down as it is pressed: nothing is left to run
        assert app.screen is export_screen and len(app.screen_stack) == 2
        assert not (runs / ".pins").exists()
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.screen_stack) == 1


def test_an_export_dir_that_is_not_a_directory_is_refused(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.cli import main

    assert main([str(runs), "--export-dir", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err == f"agentor-tui: error: --export-dir: no such directory: {tmp_path / 'nope'}\n"
