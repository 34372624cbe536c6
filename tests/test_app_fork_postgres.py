"""Forks on a PostgreSQL store: `PostgresSource` rows learn a fork's parent, line and edit from
its `fork` event (filled in after the brief first listing, and on every change), and `F` forks a
run of the database into the database, opened live. Real server (tests/pg_support.py)."""

from __future__ import annotations

from textual.widgets import TextArea

from agentor.engine.store.postgres import PostgresStore
from agentor.sources.postgres.source import PostgresSource
from tests.app_support import SIZE, OneAgent, fixed_clock, screen_text, wait_until
from tests.forkkit import Weather, result_line, tool_messages
from tests.pg_support import PgStores
from tests.test_app_fork import open_at
from tui.app import RunsApp


def lines(store: PostgresStore, run_id: str) -> list[str]:
    return [e.to_json() for e in store.load(run_id)]


def test_rows_of_a_database_learn_their_lineage(pg_stores: PgStores) -> None:
    store = pg_stores()
    w = Weather(store)
    w.agent.run("Weather in Vienna and Paris?", run_id="root")
    at = result_line(store, "root", "Paris")
    w.agent.fork("root", at=at, result="Snow in Paris.", fork_id="kid")
    source = PostgresSource(pg_stores.dsn, schema=pg_stores.schema)
    try:
        source.scan()
        assert source.get("kid").forked_from is None  # the brief listing does not know yet
        source.fill()
        kid = source.get("kid")
        assert (kid.forked_from, kid.fork_at, kid.fork_edit) == ("root", at, "result edited")
        assert source.get("root").forked_from is None
        # A fork made later is known from the change that brings it.
        w.agent.fork("kid", "And Rome?", at=2, fork_id="grandkid")
        source.refresh(["grandkid"])
        grandkid = source.get("grandkid")
        assert (grandkid.forked_from, grandkid.fork_at, grandkid.fork_edit) == (
            "kid",
            2,
            "input added",
        )
    finally:
        source.close()


async def test_F_forks_a_run_of_the_database_into_it(pg_stores: PgStores) -> None:
    store = pg_stores()
    w = Weather(store)
    parent = (await w.agent.arun("Weather in Vienna and Paris?")).run_id
    w.ran.clear()
    before = lines(store, parent)
    at = result_line(store, parent, "Vienna")
    asked = len(w.agent.model.requests)
    source = PostgresSource(pg_stores.dsn, schema=pg_stores.schema, clock=fixed_clock)
    app = RunsApp(source, agents=OneAgent(w.agent), watch=False, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await open_at(pilot, app, parent, at)
        await pilot.press("F")
        await pilot.pause()
        app.screen.query_one("#fork-text", TextArea).text = "Fog in Vienna."
        await pilot.press("ctrl+s")
        kids = lambda: [r for r in source.rows() if r.forked_from == parent]  # noqa: E731
        [row] = await wait_until(pilot, kids, what="the fork's row")
        await wait_until(pilot, lambda: source.get(row.run_id).status == "completed")
        await wait_until(pilot, lambda: app.runs_screen.timeline.run_id == row.run_id)
        await pilot.pause()
        assert "heard: Fog in Vienna. | Sunny in Paris." in screen_text(app)
    assert sorted(tool_messages(w.agent.model.requests[asked])) == [
        "Fog in Vienna.",
        "Sunny in Paris.",
    ]
    assert w.ran == [] and lines(store, parent) == before
