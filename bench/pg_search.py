"""pg-search: `PostgresStore.search` (the search done in the database) vs a bare count of the
matching lines by the server, the database's `grep -c`.

The schema holds 20,000 runs of every kind (bench/synthetic.py's events, 1 in 50 long): 40
runs written through `PostgresStore.append_many`, their `events` rows then copied by SQL under
new run ids, plus 12 runs whose prompt names Reykjavik. Measured, interleaved, each a median:

- `Reykjavik`, exact case: `sum(1 for _ in store.search(q, ignore_case=False))` (the server
  finds the lines holding the bytes, streams them ordered by run and seq; each
  is decoded and matched as a file's line is, its snippet made) vs `SELECT count(*) FROM
  events WHERE position(q IN line) > 0` over one connection;
- `reykjavik`, case ignored (smart case) vs the same count on `lower(encode(line, 'escape'))`
  (in the "C" collation);
- for information, once: the search a store without its own would get (agentor.ops.run_search
  loading every run and matching its events in Python), what the database search replaces
  (it counts events, not lines: a loaded generation holds its whole conversation again).

Both must count the same lines. The ratio on the last line is the exact-case query's (goal
<= 1.5x). The server is `AGENTOR_BENCH_PG`, else `AGENTOR_TEST_PG`, else the local one; the
bench works in a schema of its own (`agentor_bench_search_<pid>`), dropped at the end.
"""

from __future__ import annotations

import os
import time

import harness
import psycopg
import synthetic

from agentor.engine.store.postgres import PostgresStore
from agentor.ops import run_search as search_module

NAME = "pg-search"
GOAL = 1.5
DSN = os.environ.get(
    "AGENTOR_BENCH_PG",
    os.environ.get("AGENTOR_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test"),
)
SCHEMA = f"agentor_bench_search_{os.getpid()}"
TEMPLATES = 40
PLANTED = 12


def populate(store: PostgresStore, conn: psycopg.Connection, runs: int) -> int:
    """`runs` runs plus PLANTED naming Reykjavik; returns the bytes of their lines."""
    now = time.time()
    for i in range(TEMPLATES):
        run_id = f"tpl{i:02d}" + synthetic.run_id_for(i)[:20]
        turns = 40 if i % 50 == 0 else 1 + i % 6
        store.append_many(run_id, synthetic.run_events(run_id, turns, now - 86400 + i, agent=i))
    copies = -(-(runs - TEMPLATES) // TEMPLATES)
    conn.execute(
        f'INSERT INTO "{SCHEMA}".events (run_id, seq, type, line)'
        " SELECT t.run_id || '-' || g, t.seq, t.type, t.line"
        f' FROM "{SCHEMA}".events t CROSS JOIN generate_series(1, %s) g',
        (copies,),
    )
    conn.execute(  # rows in `runs` (a listing's), all a load needs
        f'INSERT INTO "{SCHEMA}".runs (run_id, last_seq) SELECT run_id, max(seq)'
        f' FROM "{SCHEMA}".events GROUP BY run_id ON CONFLICT (run_id) DO NOTHING'
    )
    for i in range(PLANTED):
        run_id = synthetic.run_id_for(10_000_000 + i)
        events = synthetic.run_events(run_id, turns=2, started=now - 3600 * i)
        events[0].messages[-1]["content"] = "What is the weather in Reykjavik this week?"  # type: ignore[index]
        store.append_many(run_id, events)
    conn.execute(f'VACUUM ANALYZE "{SCHEMA}".events')
    row = conn.execute(f'SELECT sum(octet_length(line)) FROM "{SCHEMA}".events').fetchone()
    return int(row[0])


def count_sql(folded: bool) -> str:
    where = (
        "strpos(lower(encode(line, 'escape') COLLATE \"C\"), %s::text) > 0"
        if folded
        else "position(%s::bytea IN line) > 0"
    )
    return f'SELECT count(*) FROM "{SCHEMA}".events WHERE {where}'


def case(
    store: PostgresStore, bare: psycopg.Connection, query: str, reps: int
) -> dict[str, object]:
    folded = query.islower()
    param: object = query if folded else query.encode()
    expect = bare.execute(count_sql(folded), (param,)).fetchone()[0]

    def ours() -> float:
        t = time.perf_counter()
        n = sum(1 for _ in store.search(query, ignore_case=folded))
        took = time.perf_counter() - t
        assert n == expect, (query, n, expect)
        return took

    def baseline() -> float:
        t = time.perf_counter()
        n = bare.execute(count_sql(folded), (param,)).fetchone()[0]
        took = time.perf_counter() - t
        assert n == expect
        return took

    times = harness.interleaved([("ours", ours), ("baseline", baseline)], reps)
    return {"query": query, "lines": expect, "times": times}


def without_the_database(store: PostgresStore, query: str) -> tuple[float, int]:
    """What a store without its own search gets: every run loaded, matched in Python."""
    matcher = search_module.matcher_for(query, False, False)
    t = time.perf_counter()
    n = sum(1 for _ in search_module._search_store(store, matcher))
    return time.perf_counter() - t, n


def main() -> None:
    args = harness.parse_args(__doc__)
    runs, reps = (1_000, 2) if args.quick else (20_000, 7)
    store = PostgresStore(DSN, schema=SCHEMA)
    admin = psycopg.connect(DSN, autocommit=True)
    try:
        t = time.perf_counter()
        size = populate(store, admin, runs)
        made = time.perf_counter() - t
        bare = psycopg.connect(DSN, autocommit=True)
        results = [case(store, bare, "Reykjavik", reps), case(store, bare, "reykjavik", reps)]
        slow, found = without_the_database(store, "Reykjavik")
        bare.close()
    finally:
        store.close()
        admin.execute(f'DROP SCHEMA IF EXISTS "{SCHEMA}" CASCADE')
        admin.close()
    print(
        f"{NAME}: {runs + PLANTED} runs, {harness.fmt_bytes(size)} of lines in PostgreSQL "
        f"(made in {made:.1f}s), {harness.machine()}"
    )
    rows = []
    for r in results:
        times = r["times"]  # type: ignore[assignment]
        ours_s, base_s = harness.median(times["ours"]), harness.median(times["baseline"])
        rows.append(
            [repr(r["query"]), r["lines"], harness.fmt_s(ours_s), harness.fmt_s(base_s),
             f"{ours_s / base_s:.2f}x", harness.spread(times["ours"])]
        )  # fmt: skip
    harness.table(["query", "lines", "ours", "count(*)", "ratio", "ours min..max"], rows)
    print(
        f"without the database's search (load every run, match its events in Python, full "
        f"messages rebuilt: {found} events): {harness.fmt_s(slow)}"
    )
    first = results[0]["times"]  # type: ignore[index]
    ours_s, base_s = harness.median(first["ours"]), harness.median(first["baseline"])
    harness.result_line(
        NAME, ours_s / base_s, f"<={GOAL:g}x", harness.fmt_s(ours_s), harness.fmt_s(base_s)
    )


if __name__ == "__main__":
    main()
