"""PostgreSQL for the tests: a real server, never skipped, and a schema of this session's own.

`AGENTOR_TEST_PG` names the server (default: the local one with trust auth). Each test session
works in `agentor_test_<pid>` (and schemas named after it), dropped when the session ends, so
sessions running at once on one server never meet. `pg_stores` empties the tables before each
test and closes every store the test made. Without a server every test that needs one FAILS,
saying in one line how to point the tests at one or start one.

tests/conftest.py imports the fixtures, so every test module may use them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from agentor.engine.store.pg.dsn import one_line, redact
from agentor.engine.store.postgres import PostgresStore

DSN = os.environ.get("AGENTOR_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
SCHEMA = f"agentor_test_{os.getpid()}"
HOW = (
    "set AGENTOR_TEST_PG=postgresql://USER@HOST:PORT/DB to use another server, or start "
    "the local one: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start"
)


def admin() -> psycopg.Connection[Any]:
    return psycopg.connect(DSN, autocommit=True, connect_timeout=5)


@pytest.fixture(scope="session")
def pg_dsn() -> Iterator[str]:
    """The test server's DSN, once it answered; drops this session's schemas at the end."""
    try:
        admin().close()
    except psycopg.Error as exc:
        pytest.fail(
            f"the PostgreSQL tests need a server: none at {redact(DSN)} "
            f"({one_line(str(exc))[:200]}); {HOW}",
            pytrace=False,
        )
    yield DSN
    with admin() as conn:
        names = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname = %s OR nspname LIKE %s",
            (SCHEMA, SCHEMA + "\\_%"),
        ).fetchall()
        for (name,) in names:
            conn.execute(f'DROP SCHEMA "{name}" CASCADE')


class PgStores:
    """Makes PostgresStores on the session's schema (emptied for this test); closes them."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.schema = SCHEMA
        self.made: list[PostgresStore] = []

    def __call__(self, **kwargs: Any) -> PostgresStore:
        kwargs.setdefault("schema", self.schema)
        store = PostgresStore(self.dsn, **kwargs)
        self.made.append(store)
        return store

    def close(self) -> None:
        for store in self.made:
            store.close()

    def sql(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        """Run `query` on its own connection (`{s}` is the schema); its rows, if any."""
        with admin() as conn:
            cur = conn.execute(query.replace("{s}", f'"{self.schema}"'), params)
            return cur.fetchall() if cur.description else []

    def terminate(self, role: str, pid: int | None = None) -> int:
        """Cut the connections of role `role` (`lock`, `store`, `feed`) of a process (default
        this one), as a network failure or an administrator would; how many were cut. Returns
        once each is gone (its locks freed): without a timeout the server only signals it."""
        name = f"agentor pid={pid or os.getpid()} {role} %"
        rows = self.sql(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
            " WHERE application_name LIKE %s AND pid <> pg_backend_pid()",
            (name,),
        )
        return len(rows)


@pytest.fixture
def pg_stores(pg_dsn: str) -> Iterator[PgStores]:
    """`pg_stores()` -> a PostgresStore on this session's schema, emptied before the test."""
    stores = PgStores(pg_dsn)
    stores().close()  # makes and migrates the schema the first time
    stores.sql("TRUNCATE {s}.runs, {s}.events, {s}.pins, {s}.experiment_records")
    yield stores
    stores.close()


# A writer that dies between its append's commit and the notification after it (store.py):
# the write is sent alone, and the process ends once it committed, as a SIGKILL (or a network
# cut) at that moment would.
_DIE_BEFORE_NOTIFYING = """
import os, sys
from agentor.engine.events import Event
from agentor.engine.store.pg import store
from agentor.engine.store.postgres import PostgresStore

def write_then_die(conn, sql, params, notify, about):
    conn.execute(sql, params).fetchone()
    os._exit(9)

store.write_and_announce = write_then_die
PostgresStore(sys.argv[1], schema=sys.argv[2]).append(sys.argv[3], Event("message", text="hi"))
"""


def append_and_die_before_notifying(dsn: str, schema: str, run_id: str) -> None:
    """Append one event to `run_id` in another process, which dies right after the commit,
    before it could notify anyone: the event is saved, its notification never sent."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-c", _DIE_BEFORE_NOTIFYING, dsn, schema, run_id],
        cwd=root,
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 9, proc.stderr.decode()
