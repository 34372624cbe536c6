"""`PostgresSource`, the TUI's data layer on a PostgreSQL store, without the app: rows listed
briefly and filled in, what a refresh reports, liveness from the server's locks, one run's
lines, and a database that stops answering. Real server (tests/pg_support.py)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agentor import RunLockedError
from agentor.engine.events import Event, Usage
from agentor.engine.history import RunSummary
from agentor.engine.store.postgres import PostgresStore
from agentor.sources.postgres.source import PostgresSource
from agentor.sources.runrow import RunRow, newest_first
from tests.pg_support import PgStores, append_and_die_before_notifying


@pytest.fixture
def source(pg_stores: PgStores) -> Iterator[PostgresSource]:
    made = PostgresSource(pg_stores.dsn, schema=pg_stores.schema)
    yield made
    made.close()


def write_run(store: PostgresStore, run_id: str, started: float, turns: int, end: bool) -> None:
    """A run of `turns` tool turns that started at `started`, ended or not."""
    events = [
        Event(
            "run_start",
            agent="Weather Agent",
            model="m",
            messages=[{"role": "user", "content": f"prompt of {run_id}"}],
            started_at=started,
            ts=started,
        )
    ]
    for turn in range(1, turns + 1):
        call = {"id": f"c{turn}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        events += [
            Event("generation", turn=turn, calls=[call], usage=Usage(5, 1, 6), ts=started + turn),
            Event("tool_call", name="f", args={}, call_id=f"c{turn}", turn=turn),
            Event("tool_result", name="f", args={}, call_id=f"c{turn}", turn=turn, result="ok"),
        ]
    if end:
        events.append(Event("run_end", status="completed", text="done", turn=turns))
    store.append_many(run_id, events)


def whole(pg_stores: PgStores) -> dict[str, Any]:
    with pg_stores() as store:
        return {r.run_id: r.summary for r in store.list_summaries()}


def test_a_scan_lists_every_run_briefly_and_fill_completes_them_newest_first(
    pg_stores: PgStores, source: PostgresSource
) -> None:
    now = time.time()
    with pg_stores() as store:
        for i in range(5):
            write_run(store, f"run{i}", now - 100 + i, turns=i + 1, end=i % 2 == 0)
    source.scan()
    rows = source.rows()
    assert [r.run_id for r in rows] == ["run4", "run3", "run2", "run1", "run0"]
    assert source.incomplete == 5 and not any(r.complete for r in rows)
    # What a list shows at once: status, agent, prompt; the counts are not read yet.
    assert [r.status for r in rows] == ["completed", "interrupted"] * 2 + ["completed"]
    assert (
        rows[0].summary.first_prompt == "prompt of run4"
        and rows[0].summary.agent == "Weather Agent"
    )
    assert rows[0].summary.turns == 0
    assert source.fill(2) == ["run4", "run3"]
    assert source.incomplete == 3 and rows[0].complete and not rows[2].complete
    assert source.fill() == ["run2", "run1", "run0"] and source.fill() == []
    expected = whole(pg_stores)
    for row in source.rows():
        assert row.complete and row.summary == expected[row.run_id]
    assert source.get("run4").summary.turns == 5


def test_refresh_reports_what_changed_and_keeps_whole_summaries_that_did_not(
    pg_stores: PgStores, source: PostgresSource
) -> None:
    now = time.time()
    store = pg_stores()
    write_run(store, "a", now - 10, turns=2, end=False)
    write_run(store, "b", now - 20, turns=1, end=True)
    source.scan()
    source.fill()
    store.append("a", Event("message", text="more"))
    write_run(store, "c", now - 5, turns=1, end=False)
    changes = source.refresh(["a", "c"])
    assert changes.appended == {"a": 1} and changes.added == {"c"} and not changes.removed
    assert source.get("a").complete and source.get("a").summary.events == 8
    assert source.get("c").complete  # read whole: it was asked for by name
    # Everything, briefly: nothing new, nothing changes, the whole summaries stay.
    assert not source.refresh()
    assert source.get("a").complete and source.get("a").summary.turns == 2
    # A run that gained events is a sketch again (`incomplete`: fill has work again).
    store.append("b", Event("message", text="after the end"))
    changes = source.refresh()
    assert changes.appended == {"b": 1} and changes.incomplete == {"b"}
    assert not source.get("b").complete and source.incomplete == 1
    assert source.fill() == ["b"] and source.get("b").summary.events == 6
    # A run gone from the table leaves the list.
    pg_stores.sql("DELETE FROM {s}.runs WHERE run_id = 'c'")
    assert source.refresh().removed == {"c"} and source.get("c") is None


def test_a_fill_never_puts_back_an_older_summary(
    pg_stores: PgStores, source: PostgresSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = pg_stores()
    write_run(store, "a", time.time(), turns=1, end=False)
    source.scan()  # "a" is listed briefly: fill reads it
    stale = store.list_summaries(run_ids=["a"])
    store.append("a", Event("message", text="new"))
    read = source.store.list_summaries

    def fill_reads(**kwargs: Any) -> Any:
        # While fill's page is on its way, the watch reads the newer row.
        monkeypatch.setattr(source.store, "list_summaries", read)
        assert source.refresh(["a"]).appended == {"a": 1}
        return stale

    monkeypatch.setattr(source.store, "list_summaries", fill_reads)
    assert source.fill() == ["a"]  # its page lands late: the newer summary stays
    assert source.get("a").summary.events == 5 and source.get("a").complete


def test_a_status_a_fill_read_first_the_next_refresh_tells_once(
    pg_stores: PgStores, source: PostgresSource
) -> None:
    """The run moved on between the brief listing and the fill (it ended): the fill shows
    it, and the refresh its write asks for still tells it (the app's news come from there)."""
    store = pg_stores()
    write_run(store, "a", time.time(), turns=1, end=False)
    write_run(store, "b", time.time() - 5, turns=1, end=True)
    source.scan()  # listed briefly: fill reads them
    store.append("a", Event("run_end", status="completed", text="done", turn=1))
    assert source.fill() == ["a", "b"] and source.get("a").status == "completed"
    changes = source.refresh(["a", "b"])
    assert changes.updated == {"a"} and changes.appended == {"a": 1}  # "b" did not move
    assert not source.refresh(["a", "b"])  # told once


def test_a_run_someone_holds_is_running_until_they_let_go(
    pg_stores: PgStores, source: PostgresSource
) -> None:
    store, holder = pg_stores(), pg_stores()
    write_run(store, "a", time.time(), turns=1, end=False)
    source.scan()
    assert source.get("a").status == "interrupted"
    with holder.lock("a"):
        assert source.refresh_liveness() == ["a"]
        row = source.get("a")
        assert row.status == "running"
        assert row.held_since is not None  # seen free before: taken after that
        assert source.refresh_liveness() == []
    assert source.refresh_liveness() == ["a"] and source.get("a").status == "interrupted"


def test_a_runs_lines_are_read_as_stored_and_on_as_they_come(
    pg_stores: PgStores, source: PostgresSource
) -> None:
    store = pg_stores()
    write_run(store, "a", time.time(), turns=2, end=False)
    source.scan()
    with pytest.raises(KeyError):
        source.open("nope")
    log = source.open("a")
    assert len(log) == 7 and log.segment_starts == [0]
    stored = b"".join(line for _, line in store.read_lines("a"))
    assert b"".join(log.raw(i) for i in range(7)) == stored and log.indexed_to == len(stored)
    assert log.request(4) == store.load("a")[4].messages  # rebuilt from the delta
    assert log.poll() == 0
    store.append_many("a", [Event("message", text="x"), Event("run_end", status="completed")])
    assert log.poll() == 2 and len(log) == 9 and log.item(8).status == "completed"
    scan = log.marks(0, log.indexed_to, 0, lambda: False)
    assert scan is not None and scan.calls == [2, 5]


async def test_a_run_whose_writer_died_before_notifying_is_shown_by_the_next_poll(
    pg_stores: PgStores,
) -> None:
    made = PostgresSource(pg_stores.dsn, schema=pg_stores.schema, poll_interval=1.0)
    try:
        write_run(pg_stores(), "a", time.time(), turns=1, end=False)
        made.scan()
        watch = made.watch()
        await anext(watch)  # what changed since the scan: nothing
        await asyncio.to_thread(
            append_and_die_before_notifying, pg_stores.dsn, pg_stores.schema, "lost"
        )
        changes = await asyncio.wait_for(anext(watch), timeout=30)  # no notification came
        assert "lost" in changes.added
        row = made.get("lost")
        assert row is not None and row.summary.events == 1
        await watch.aclose()
    finally:
        made.close()


def test_while_the_database_cannot_be_reached_reads_return_at_once_and_say_why(
    pg_stores: PgStores, source: PostgresSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_run(pg_stores(), "a", time.time(), turns=1, end=False)
    source.scan()
    source.store._pool.close()  # every read now fails as a lost server's would
    changes = source.refresh(["a"])
    assert not changes and source.get("a") is not None  # the rows stay
    assert source.error is not None and source.error.startswith("cannot list the runs of")
    asked: list[str] = []
    monkeypatch.setattr(source.store, "held_runs", lambda: asked.append("held") or set())
    assert source.refresh_liveness() == [] and asked == []  # nothing waits on the server
    with pytest.raises(OSError, match="cannot list the runs of"):
        source.open("a")


def test_rows_are_newest_first_then_by_id_whatever_order_they_come_in() -> None:
    def row(run_id: str, started: float | None, modified: float = 0.0) -> RunRow:
        return RunRow(run_id, RunSummary(run_id, started_at=started), modified_at=modified)

    expected = ["b", "c2", "c1", "a", "u", "d"]  # ties (c1, c2) by id, descending
    made = {r.run_id: r for r in [row("a", 3.0), row("b", 9.0), row("c1", 5.0), row("c2", 5.0)]}
    made |= {"u": row("u", None, modified=2.5), "d": row("d", 1.0)}  # not started: its mtime
    for order in (list(made), sorted(made), sorted(made, reverse=True)):
        assert [r.run_id for r in newest_first([made[k] for k in order])] == expected


def test_every_caller_of_resume_store_is_told_when_a_run_is_taken_here(
    pg_stores: PgStores, source: PostgresSource
) -> None:
    told: list[tuple[str, str]] = []
    resumes = source.resume_store(lambda run_id: told.append(("resumer", run_id)))
    decisions = source.resume_store(lambda run_id: told.append(("approver", run_id)))
    assert resumes is decisions is source.store  # one pool, one lock session
    with decisions.lock("a"):
        assert told == [("resumer", "a"), ("approver", "a")]
        # Taken here already: refused here too.
        with pytest.raises(RunLockedError), resumes.lock("a"):
            pass
