"""The store keys and the cost column on PostgreSQL (`agentor-tui postgresql://...`): rows are
priced from each run's generations as `PostgresSource.fill()` reads them, a run that gains
events is priced again; `p`, `d`, `w`, `ctrl+f` go through the store protocols (a store that
keeps no pins or cannot delete says so, and nothing happens). Real server (tests/pg_support)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from agentor.engine.events import Event, Usage
from agentor.engine.store.api import DeletingStore, PinningStore
from agentor.ops.pricing import RunCost
from agentor.ops.run_export import export
from agentor.sources.postgres.source import PostgresSource
from tests.app_support import SIZE, fixed_clock, notifications, priced, wait_until
from tests.pg_support import PgStores
from tests.test_app_store_keys import MAY_2025
from tui.app import RunsApp


def write(store, run_id: str, model: str, usages: list[Usage | None]) -> None:
    prompt = [{"role": "user", "content": f"Book Paris for {run_id}"}]
    events = [Event("run_start", agent="A", model=model, messages=prompt, ts=MAY_2025)]
    for turn, usage in enumerate(usages, 1):
        events.append(Event("generation", turn=turn, text="ok", usage=usage, ts=MAY_2025 + turn))
    events.append(Event("run_end", status="completed", text="done", ts=MAY_2025 + 9))
    store.append_many(run_id, events)


def test_fill_prices_rows_and_a_run_that_gains_events_is_priced_again(
    pg_stores: PgStores,
) -> None:
    with pg_stores() as store:
        write(store, "known", "gpt-4o-mini", [Usage(1000, 100, 1100)])
        write(store, "unknown", "my-local-llm", [Usage(1000, 100, 1100)])
        write(store, "partial", "gpt-4o-mini", [Usage(1000, 100, 1100), None])
    source = PostgresSource(pg_stores.dsn, schema=pg_stores.schema)
    try:
        source.scan()
        assert all(r.cost is None for r in source.rows())  # listed briefly: not priced
        assert sorted(source.fill()) == ["known", "partial", "unknown"]
        assert source.get("known").cost == RunCost(Decimal("0.00021"), 1, 0)
        assert source.get("unknown").cost == RunCost(None, 0, 1)
        assert source.get("partial").cost == RunCost(Decimal("0.00021"), 1, 1)
        assert source.fill() == []  # nothing left to price
        with pg_stores() as store:  # a resume on another model
            store.append_many(
                "known",
                [
                    Event("run_start", model="gpt-4o", ts=MAY_2025 + 20),
                    Event("generation", turn=2, usage=Usage(1000, 100, 1100), ts=MAY_2025 + 21),
                ],
            )
        changes = source.refresh(["known"])
        assert "known" in changes.incomplete and source.get("known").cost is None
        assert source.fill() == ["known"]
        cost = source.get("known").cost
        assert cost == RunCost(Decimal("0.00021") + Decimal("0.0035"), 2, 0)
    finally:
        source.close()


async def test_the_keys_on_a_database(pg_stores: PgStores, tmp_path: Path) -> None:
    with pg_stores() as store:
        write(store, "known", "gpt-4o-mini", [Usage(1000, 100, 1100)])
        write(store, "other", "gpt-4o-mini", [Usage(1000, 100, 1100)])
    source = PostgresSource(pg_stores.dsn, schema=pg_stores.schema, clock=fixed_clock)
    app = RunsApp(source, watch=False, clock=fixed_clock)
    app.export_dir = tmp_path
    async with app.run_test(size=SIZE) as pilot:
        await priced(pilot)
        assert str(app.runs_screen.runs_pane.border_subtitle) == "cost $0.00042"
        assert app.runs_screen.run_list.select("known")
        await pilot.press("p")
        await pilot.pause()
        if isinstance(source.store, PinningStore):
            await wait_until(
                pilot, lambda: "known" in app.runs_screen.run_list.pinned, what="the pin"
            )
            assert source.store.pinned() == {"known"}
        else:  # said, and nothing else happens
            assert f"This store cannot pin runs ({source.where})." in notifications(app)
            assert app.runs_screen.run_list.pinned == set()

        await pilot.press("w", "enter")  # export reads through the store
        await wait_until(pilot, lambda: (tmp_path / "known.md").exists(), what="the export")
        with pg_stores() as store:
            assert (tmp_path / "known.md").read_text() == export(store, "known", "md")

        await pilot.press("ctrl+f", *"Paris for other", "enter")
        await wait_until(pilot, lambda: app.screen.state == "done", what="the search")
        assert [h.run_id for h in app.screen.hits] == ["other"]
        await pilot.press("enter")
        await pilot.pause()
        assert app.runs_screen.timeline.run_id == "other" and app.runs_screen.timeline.cursor == 0

        await pilot.press("d")
        await pilot.pause()
        if isinstance(source.store, DeletingStore):
            await pilot.press("y")
            await wait_until(pilot, lambda: app.runs_screen.run_list.index_of("other") is None)
        else:
            assert f"This store cannot delete runs ({source.where})." in notifications(app)
            assert app.runs_screen.run_list.index_of("other") is not None
