"""pg-append: PostgresStore.append of a ~300-byte event vs a bare INSERT + COMMIT.

Ours appends to a held run, as the engine does: one statement in autocommit, the append
function checking the hold, inserting the event row, updating the run's summary row and
notifying, committed before it returns. The baseline inserts the very same row (run id, seq,
type, the line's bytes) into a table of the same shape with a bare `INSERT ...; COMMIT` over one
psycopg connection. Both are durable (synchronous_commit as the server has it, fsync on a
local server), so the commit dominates; the ratio is throughput, ours / baseline.

Shown for information: an append to a run nobody holds (the append takes the lock for its
transaction instead of proving a hold).

The server is `AGENTOR_BENCH_PG`, else `AGENTOR_TEST_PG`, else the local one; the bench works in
a schema of its own (`agentor_bench_<pid>`), dropped at the end. Blocks of 50 appends,
interleaved, as bench/append.py does.
"""

from __future__ import annotations

import os
import time

import harness
import psycopg
from append import typical_event

from agentor.engine.log.format import LogEncoder
from agentor.engine.store.postgres import PostgresStore

NAME = "pg-append"
GOAL = 0.8
DSN = os.environ.get(
    "AGENTOR_BENCH_PG",
    os.environ.get("AGENTOR_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test"),
)
SCHEMA = f"agentor_bench_{os.getpid()}"


def main() -> None:
    args = harness.parse_args(__doc__)
    n, reps = (20, 3) if args.quick else (50, 101)
    event = typical_event()
    data = LogEncoder().encode(event)
    store = PostgresStore(DSN, schema=SCHEMA)
    bare = psycopg.connect(DSN)  # not autocommit: INSERT, then COMMIT
    bare.execute(
        f'CREATE TABLE "{SCHEMA}".bare (run_id text NOT NULL, seq integer NOT NULL,'
        " type text NOT NULL, line bytea NOT NULL, PRIMARY KEY (run_id, seq))"
    )
    bare.commit()
    counter = iter(range(1_000_000))
    insert = f'INSERT INTO "{SCHEMA}".bare (run_id, seq, type, line) VALUES (%s, %s, %s, %s)'

    def ours_held() -> float:
        run_id = f"held{next(counter)}"
        with store.lock(run_id):
            store.append(run_id, event)  # the run's row and state: made before timing
            t = time.perf_counter()
            for _ in range(n):
                store.append(run_id, event)
            return time.perf_counter() - t

    def ours_free() -> float:
        run_id = f"free{next(counter)}"
        store.append(run_id, event)
        t = time.perf_counter()
        for _ in range(n):
            store.append(run_id, event)
        return time.perf_counter() - t

    # The loop stays inline (no call per write): it is what it says, nothing more.
    def baseline() -> float:
        run_id = f"bare{next(counter)}"
        t = time.perf_counter()
        for seq in range(1, n + 1):
            bare.execute(insert, (run_id, seq, event.type, data))
            bare.commit()
        return time.perf_counter() - t

    try:
        times = harness.interleaved(
            [("ours", ours_held), ("baseline", baseline), ("free", ours_free)], reps
        )
    finally:
        store.close()
        bare.rollback()
        bare.autocommit = True
        bare.execute(f'DROP SCHEMA "{SCHEMA}" CASCADE')
        bare.close()

    rate = {k: n / harness.median(v) for k, v in times.items()}
    blocks = f"{reps} interleaved blocks of {n} appends of {len(data)} bytes"
    print(f"{NAME}: {blocks}, {harness.machine()}")
    harness.table(
        ["case", "appends/s", "per append", "block min..max", "vs baseline"],
        [
            [
                label,
                f"{rate[k]:.0f}",
                harness.fmt_s(1 / rate[k]),
                harness.spread(times[k]),
                f"{rate[k] / rate['baseline']:.3f}",
            ]
            for k, label in [
                ("ours", "PostgresStore.append (held run)"),
                ("free", "PostgresStore.append (no hold)"),
                ("baseline", "INSERT + COMMIT, one connection"),
            ]
        ],
    )
    harness.result_line(
        NAME,
        rate["ours"] / rate["baseline"],
        f">={GOAL}",
        f"{rate['ours']:.0f}/s",
        f"{rate['baseline']:.0f}/s",
    )


if __name__ == "__main__":
    main()
