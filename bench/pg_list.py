"""pg-list: listing 100,000 runs of a PostgreSQL store in the TUI's data layer vs a bare SELECT.

The schema holds 100,000 runs of every kind (completed, failed, interrupted; a few held by
another session, so *running*): 24 runs written through `PostgresStore.append_many` (bench/
synthetic.py's events: their summary rows are the store's own), then their rows in the runs
table copied by SQL under new ids and start times (the listing reads the runs table only; the
copies have no events, which nothing here reads). Measured, interleaved:

- ours: `PostgresSource.scan()` then `.rows()` (a source made for each repetition, not timed),
  what the app does at start: one query over the
  runs table joined with the server's lock table (`list_summaries(brief=True)`: status, agent,
  model, times, prompt, error, events, whether it is held), a `RunRow` per run with its
  status, sorted newest first; every row the list shows is there (the counts read later);
- baseline: a bare `SELECT` of the same columns of the runs table, newest first, over one
  psycopg connection, `fetchall()` (psycopg's defaults, text format; the collector paused
  while it runs, as ours pauses it: a collection would walk the whole heap of the process).

The ratio is ours / baseline (goal <= 2); ours must also take <= 0.5 s. For information: what
the app then does in the background, `fill()` by pages of 64 until every row has its counts,
and one whole listing (`list_summaries()`, every column). The server is
`AGENTOR_BENCH_PG`, else `AGENTOR_TEST_PG`, else the local one; the bench works in a schema of
its own (`agentor_bench_list_<pid>`), dropped at the end.
"""

from __future__ import annotations

import os
import time

import harness
import psycopg
import synthetic

from agentor.engine.store.pg.rows import BRIEF_COLUMNS, SUMMARY_COLUMNS
from agentor.engine.store.postgres import PostgresStore

NAME = "pg-list"
GOAL_RATIO = 2.0
GOAL_S = 0.5
DSN = os.environ.get(
    "AGENTOR_BENCH_PG",
    os.environ.get("AGENTOR_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test"),
)
SCHEMA = f"agentor_bench_list_{os.getpid()}"
TEMPLATES = 24
HELD = 3
# Columns a copy takes from its template as they are; the times are shifted.
TIMES = ("started_at", "last_event_at", "ended_at", "segment_started_at", "segment_last_at")
COPIED = ("last_seq", *SUMMARY_COLUMNS, "pending_approvals")


def populate(store: PostgresStore, conn: psycopg.Connection, runs: int) -> list[str]:
    """`runs` runs in the schema; the ids of the interrupted templates (to hold some)."""
    now = time.time()
    interrupted = []
    for i in range(TEMPLATES):
        run_id = f"tpl{i:02d}" + synthetic.run_id_for(i)[:20]
        ending = ("completed", "completed", "failed", "interrupted")[i % 4]
        events = synthetic.run_events(run_id, 1 + i % 5, now - 86400 + i, ending=ending, agent=i)
        store.append_many(run_id, events)
        if ending == "interrupted":
            interrupted.append(run_id)
    copies = -(-(runs - TEMPLATES) // TEMPLATES)
    select = ", ".join(
        f"t.{c} - g * 37.0" if c in TIMES else f"t.{c}" for c in COPIED
    )  # each copy started 37 s before the one after it
    conn.execute(
        f'INSERT INTO "{SCHEMA}".runs (run_id, {", ".join(COPIED)})'
        f" SELECT t.run_id || '-' || g, {select}"
        f' FROM "{SCHEMA}".runs t CROSS JOIN generate_series(1, %s) g',
        (copies,),
    )
    conn.execute(
        f'DELETE FROM "{SCHEMA}".runs WHERE run_id IN (SELECT run_id FROM "{SCHEMA}".runs'
        " ORDER BY started_at LIMIT (SELECT count(*) - %s FROM " + f'"{SCHEMA}".runs))',
        (runs,),
    )
    conn.execute(f'VACUUM ANALYZE "{SCHEMA}".runs')
    return interrupted


def fill_all(source: object) -> float:
    """Seconds until every row has its whole summary, filled as the app does (pages of 64)."""
    t = time.perf_counter()
    while source.fill(64):  # type: ignore[attr-defined]
        pass
    assert source.incomplete == 0  # type: ignore[attr-defined]
    return time.perf_counter() - t


def main() -> None:
    args = harness.parse_args(__doc__)
    runs, reps = (2_000, 3) if args.quick else (100_000, 9)
    from agentor.sources.logfile import gc_paused
    from agentor.sources.postgres.source import PostgresSource

    store = PostgresStore(DSN, schema=SCHEMA)
    admin = psycopg.connect(DSN, autocommit=True)
    holder = PostgresStore(DSN, schema=SCHEMA)
    source = None
    try:
        interrupted = populate(store, admin, runs)
        holds = [holder.lock(run_id) for run_id in interrupted[:HELD]]
        for hold in holds:
            hold.__enter__()
        bare = psycopg.connect(DSN)
        # The values ours reads (but whether a run is held: that is the server's lock table).
        columns = ", ".join(
            (*BRIEF_COLUMNS, "holder_pid", "holder_host", "jsonb_array_length(pending_approvals)",
             "last_seq", "claims")
        )  # fmt: skip
        query = f'SELECT {columns} FROM "{SCHEMA}".runs ORDER BY started_at DESC NULLS LAST, run_id'
        listed: list[int] = []

        def ours() -> float:
            fresh = PostgresSource(DSN, schema=SCHEMA)  # as the app starts: no rows yet
            fresh.store.held_runs()  # its connection's first query (the baseline's is warm)
            t = time.perf_counter()
            fresh.scan()
            n = len(fresh.rows())
            took = time.perf_counter() - t
            listed.append(n)
            fresh.close()
            return took

        def baseline() -> float:
            with gc_paused():  # as ours is
                t = time.perf_counter()
                bare.execute(query).fetchall()
                took = time.perf_counter() - t
            bare.rollback()
            return took

        times = harness.interleaved([("ours", ours), ("baseline", baseline)], reps)
        source = PostgresSource(DSN, schema=SCHEMA)
        source.scan()
        times["fill"] = [fill_all(source)]
        t = time.perf_counter()
        store.list_summaries()
        times["whole"] = [time.perf_counter() - t]
        statuses = sorted({r.status for r in source.rows()})
        running = sum(1 for r in source.rows() if r.status == "running")
        bare.close()
    finally:
        if source is not None:
            source.close()
        holder.close()
        store.close()
        admin.execute(f'DROP SCHEMA "{SCHEMA}" CASCADE')
        admin.close()

    assert set(listed) == {runs}, listed
    assert running == min(HELD, len(interrupted)), running
    ours_s, base_s = harness.median(times["ours"]), harness.median(times["baseline"])
    print(f"{NAME}: {runs} runs ({', '.join(statuses)}), {reps} interleaved reps, "
          f"{harness.machine()}")  # fmt: skip
    harness.table(
        ["case", "median", "min..max", "vs baseline"],
        [
            ["PostgresSource.scan() + rows()", harness.fmt_s(ours_s), harness.spread(times["ours"]),
             f"{ours_s / base_s:.2f}"],
            ["bare SELECT of the same columns", harness.fmt_s(base_s),
             harness.spread(times["baseline"]), "1.00"],
            ["(then) fill() every row, pages of 64", harness.fmt_s(times["fill"][0]), "", ""],
            ["(info) list_summaries(), every column", harness.fmt_s(times["whole"][0]), "", ""],
        ],
    )  # fmt: skip
    print(f"goal: ours / baseline <= {GOAL_RATIO}, ours <= {GOAL_S * 1e3:.0f} ms")
    harness.result_line(
        NAME,
        ours_s / base_s,
        f"<={GOAL_RATIO},<={GOAL_S}s",
        harness.fmt_s(ours_s),
        harness.fmt_s(base_s),
    )


if __name__ == "__main__":
    main()
