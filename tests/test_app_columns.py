"""The run list's counting columns (`took`, `turns`, `tools`) and the detail's fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentor.engine.store.file import FileStore
from agentor.sources.directory import source as directory_module
from agentor.sources.directory.source import DirectorySource
from tests.app_support import (
    NOW,
    SIZE,
    notifications,
    priced,
    screen_text,
    watcher_reports,
    write_log,
)
from tui.app import RunsApp

HOUR = 3600.0
PROMPT = [{"role": "user", "content": "Weather in Oslo and Rome?"}]


def call(call_id: str, city: str) -> dict[str, Any]:
    args = json.dumps({"city": city})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": "get_weather", "arguments": args},
    }


def asked(at: float) -> list[dict[str, Any]]:
    """Turn 1 asks for two calls, under ids the server numbers per request (c1, c2)."""
    gen = {"type": "generation", "turn": 1, "calls": [call("c1", "Oslo"), call("c2", "Rome")]}
    gen |= {"messages": PROMPT, "ts": at}
    calls = [
        {"type": "tool_call", "name": "get_weather", "call_id": cid, "turn": 1, "ts": at}
        | {"args": {"city": city}}
        for cid, city in (("c1", "Oslo"), ("c2", "Rome"))
    ]
    return [gen, *calls]


def oslo(at: float, **kw: Any) -> dict[str, Any]:
    return {"type": "tool_result", "name": "get_weather", "call_id": "c1", "turn": 1, "ts": at} | {
        "args": {"city": "Oslo"},
        "result": "sunny",
        **kw,
    }


def start(at: float) -> dict[str, Any]:
    return {"type": "run_start", "agent": "A", "model": "m", "messages": PROMPT, "started_at": at}


def resumed_with_rewinds(t0: float) -> list[dict[str, Any]]:
    """A two-call run whose slow Rome call was cut off three times, each resume hours after
    the crash: 8 `tool_call` events, 2 calls, 2 s of work per segment."""
    events = [start(t0), *asked(t0 + 1), oslo(t0 + 2)]
    for n in (1, 2, 3):
        at = t0 + n * 7 * HOUR
        events += [start(at), *asked(at + 1), oslo(at + 2, replayed_from="c1")]
    at = t0 + 3 * 7 * HOUR
    rome = {"type": "tool_result", "name": "get_weather", "call_id": "c2", "turn": 1, "ts": at + 2}
    return [
        *events,
        rome | {"args": {"city": "Rome"}, "result": "rainy"},
        {"type": "generation", "turn": 2, "text": "Sunny, rainy.", "ts": at + 2},
        {"type": "run_end", "status": "completed", "text": "Sunny, rainy.", "ended_at": at + 2},
    ]


def line_of(app: RunsApp, run_id: str) -> str:
    return next(x for x in screen_text(app).splitlines() if run_id in x)


async def test_tools_counts_calls_and_took_is_the_active_time_not_the_idle_gaps(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    t0 = NOW - 22 * HOUR
    events = resumed_with_rewinds(t0)
    write_log(runs, "rewound", events)
    assert sum(e["type"] == "tool_call" for e in events) == 8
    app = RunsApp(runs, watch=False, clock=lambda: NOW)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        line = line_of(app, "rewound")
        # 4 segments of 2 s each, not the 21 h from the first start to the end; 2 turns,
        # 2 calls (not 8 tool_call events).
        assert " 8.0s      2      2 " in line, line
        # The wall span is in the detail of the run_start.
        assert app.runs_screen.run_list.select("rewound")
        await pilot.press("enter", "home")
        await pilot.pause()
        detail = app.runs_screen.event_detail.text
        assert "active   8.0s over 4 segments (the whole run)" in detail
        assert "wall     21h00m from the first start to the last event" in detail


async def test_a_running_runs_took_ticks_with_the_clock(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    # Crashed after 1 s of work an hour ago, resumed 10 s ago, and running now.
    events = [start(NOW - HOUR), *asked(NOW - HOUR + 1), start(NOW - 10)]
    write_log(runs, "live", events)
    now = [NOW]
    app = RunsApp(runs, watch=False, clock=lambda: now[0])
    with FileStore(runs).lock("live"):
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            line = line_of(app, "live")
            assert "running" in line and " 11.0s " in line, line
            now[0] += 5
            app.runs_screen.run_list.clock_moved()  # what the app's 1 s timer does
            await pilot.pause()
            assert " 16.0s " in line_of(app, "live")


async def test_a_run_taken_before_its_resume_recorded_a_step_ticks_from_when_it_was_taken(
    tmp_path: Path,
) -> None:
    # Crashed after 1 s of work an hour ago. A resume takes it now: until its first step is
    # recorded (its run_start goes with it), the log still ends in the crashed segment, and the
    # hour since the crash is idle time, not work.
    runs = tmp_path / "runs"
    runs.mkdir()
    write_log(runs, "job7", [start(NOW - HOUR), *asked(NOW - HOUR + 1)])
    now = [NOW]
    app = RunsApp(runs, watch=False, clock=lambda: now[0])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "interrupted" in line_of(app, "job7") and " 1.0s " in line_of(app, "job7")
        with FileStore(runs).lock("job7"):
            app.source.refresh_liveness()  # what the app's 1 s timer does
            app.runs_screen.show_rows()
            await pilot.pause()
            line = line_of(app, "job7")
            assert "running" in line and " 1.0s " in line, line
            now[0] += 5
            app.runs_screen.run_list.clock_moved()
            await pilot.pause()
            assert " 6.0s " in line_of(app, "job7")


def test_quick_rows_filled_and_tailed_rows_count_the_same_calls(
    monkeypatch, tmp_path: Path
) -> None:
    events = resumed_with_rewinds(NOW - 22 * HOUR)
    # A quick row (head and tail read), filled; and the same run tailed line by line.
    monkeypatch.setattr(directory_module, "SCAN_WHOLE_FILES", 0)
    monkeypatch.setattr(directory_module, "TAIL_BYTES", 512)
    quick = tmp_path / "quick"
    quick.mkdir()
    write_log(quick, "r", events)
    index = DirectorySource(quick)
    index.scan()
    assert index.fill() == ["r"]
    filled = index.get("r")
    assert filled is not None and filled.complete and filled.summary is not None

    tailed_dir = tmp_path / "tailed"
    tailed_dir.mkdir()
    tail = DirectorySource(tailed_dir)
    for event in events:
        write_log(tailed_dir, "r", [event])
        tail.refresh_paths([tailed_dir / "r.jsonl"])
    tailed = tail.get("r")
    assert tailed is not None and tailed.complete and tailed.summary is not None
    for s in (filled.summary, tailed.summary):
        assert (s.tool_calls, s.turns, s.segments) == (2, 2, 4)
        assert s.active_time() == 8.0
    assert filled.summary == tailed.summary


async def test_detail_labels_never_run_into_their_values(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    replayed = oslo(NOW - 50, replayed_from="call_1_0", forked_from="run-before")
    write_log(runs, "r", [start(NOW - 60), *asked(NOW - 55), replayed])
    odd = [{"role": "assistant", "tool_call_id": "call_9", "content": "x"}]
    write_log(runs, "odd", [{"type": "run_start", "messages": odd, "started_at": NOW - 99}])
    app = RunsApp(runs, watch=False, clock=lambda: NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("enter", "tab")  # into the detail, for its width
        assert app.focused is app.runs_screen.event_detail
        detail = app.runs_screen.event_detail.text
        for label, value in (
            ("call_id", "c1"),
            ("forked_from", "run-before"),
            ("replayed_from", "call_1_0"),
            ("name", "get_weather"),
        ):
            assert f"\n{label} " in detail and f"{label}{value}" not in detail
        # On screen too, in the 80-column layout where the detail pane is narrow.
        screen = screen_text(app)
        assert "replayed_from call_1_0" in screen
        assert "replayed_fromcall_1_0" not in screen
        # A role as long as its column is parted from what follows it too.
        await pilot.press("escape", "escape")
        assert app.runs_screen.run_list.select("odd")
        await pilot.pause()
        assert "\nassistant (for call_9)" in app.runs_screen.event_detail.text


async def test_turns_of_a_thousand_and_more_are_never_cut(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    gens = [
        {"type": "generation", "turn": turn, "text": f"step {turn}", "ts": NOW - 100 + turn / 100}
        for turn in range(990, 1012)
    ]
    write_log(runs, "long", [start(NOW - 100), *gens])
    endless = [{"type": "generation", "turn": 123_456, "text": "more", "ts": NOW - 40}]
    write_log(runs, "endless", [start(NOW - 50), *endless])
    app = RunsApp(runs, watch=False, clock=lambda: NOW)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.runs_screen.run_list.select("long")
        await pilot.pause()
        rows = [x for x in screen_text(app).splitlines() if "generation" in x]
        for turn in (1000, 1005, 1011):
            assert any(f"generation  {turn}  step {turn}" in x for x in rows), turn
        # The rows before the first turn of four digits line up with it.
        assert any("generation   999  step 999" in x for x in rows)
        assert not any("…" in x for x in rows)
        # The list's columns: 1011 turns whole; 123,456 turns as "123k", not cut.
        assert " 1011 " in line_of(app, "long")
        assert " 123k " in line_of(app, "endless")


async def test_a_partly_priced_cost_of_a_fraction_of_a_cent_fits_its_column(
    tmp_path: Path,
) -> None:
    """A run resumed by a model no price is known for (the demo's offline model after a
    gpt-4o-mini segment): its lower bound, "≥$0.000024", is one cell too wide for the column;
    it is shown whole with one digit, rounded down ("≥$0.00002"), not cut to "≥$0.0000…"."""
    runs = tmp_path / "runs"
    runs.mkdir()

    def segment(model: str, at: float) -> list[dict[str, Any]]:
        # gpt-4o-mini: 105 tokens in, 13 out cost $0.00002355.
        usage = {"input_tokens": 105, "output_tokens": 13, "total_tokens": 118}
        begin = {"type": "run_start", "agent": "A", "model": model, "messages": PROMPT}
        gen = {"type": "generation", "turn": 1, "text": "Sunny.", "messages": PROMPT}
        return [begin | {"started_at": at, "ts": at}, gen | {"usage": usage, "ts": at + 1}]

    priced_then_not = [*segment("gpt-4o-mini", NOW - 60), *segment("offline-demo", NOW - 30)]
    write_log(runs, "mixedrun", priced_then_not)
    write_log(runs, "wholerun", segment("gpt-4o-mini", NOW - 90))
    app = RunsApp(runs, watch=False, clock=lambda: NOW)
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        assert " ≥$0.00002  " in line_of(app, "mixedrun")
        assert " $0.000024  " in line_of(app, "wholerun")


async def test_a_log_named_with_no_run_id_is_a_row_saying_why(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    write_log(runs, "bad", [start(NOW - 60)])
    (runs / "bad name!.jsonl").write_text(json.dumps(start(NOW - 50)) + "\n")
    # Not logs: a torn sidecar, notes, a hidden file.
    (runs / "bad.jsonl.torn").write_text("{\n")
    (runs / "notes.txt").write_text("hello\n")
    (runs / ".hidden.jsonl").write_text("{}\n")
    app = RunsApp(runs, watch=False, clock=lambda: NOW)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        ids = [r.run_id for r in app.runs_screen.run_list.rows]
        assert sorted(ids) == ["bad", "bad name!.jsonl"]
        line = line_of(app, "bad name!.jsonl")
        assert "unreadable" in line and "not a valid run id: 'bad name!'" in line
        assert "Runs 2 · 1 interrupted · 1 unreadable" in screen_text(app)
        # Its timeline and `r` say why, as for any unreadable file.
        assert app.runs_screen.run_list.select("bad name!.jsonl")
        await pilot.pause()
        assert "not a valid run id: 'bad name!'" in screen_text(app)
        await pilot.press("r")
        await pilot.pause()
        (note,) = notifications(app)
        assert note.startswith("Run bad name!.jsonl cannot be resumed: it is unreadable (")
        assert "not a valid run id" in note
        # A second one arrives (the paths a watcher reports) and goes; the other rows stay.
        other = runs / "bad.jsonl.jsonl"  # its stem "bad.jsonl" is no id: no clash with "bad"
        other.write_text("{}\n")
        watcher_reports(app, [other, runs / "bad.jsonl.torn"])
        await pilot.pause()
        assert sorted(r.run_id for r in app.runs_screen.run_list.rows) == [
            "bad",
            "bad name!.jsonl",
            "bad.jsonl.jsonl",
        ]
        assert app.source.get("bad").status == "interrupted"  # type: ignore[union-attr]
        other.unlink()
        watcher_reports(app, [other])
        await pilot.pause()
        assert "bad.jsonl.jsonl" not in [r.run_id for r in app.runs_screen.run_list.rows]


def test_the_timeline_and_the_run_list_quote_the_same_prompt() -> None:
    """One definition of a run's prompt (`replay.first_user_text`): the run list's column and
    the timeline's run_start line say the same of a prompt in content parts."""
    from agentor.engine.events import RUN_START, Event
    from agentor.engine.history import RunSummary, fold
    from tui.text.event_views import timeline_line

    parts = [
        {"type": "text", "text": "Weather in"},
        {"type": "image_url", "image_url": {"url": "https://example.com/map.png"}},
        {"type": "text", "text": "Oslo?"},
    ]
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": parts}]
    start = Event(RUN_START, agent="A", model="m", messages=messages)
    prompt = fold(RunSummary(run_id="r"), [start]).first_prompt
    assert prompt == "Weather in Oslo?"
    assert timeline_line(start).plain == f"A · m · {prompt}"
