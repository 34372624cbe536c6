"""PostgresStore's own: the runs table, reading on from a seq, the change feed, what a worker
can take, migrations, and bad input said in one line. (The store contract common to every
store is tests/test_store_suite.py; fencing and holders that die, tests/test_pg_fencing.py.)"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from agentor import Agentor, function_tool
from agentor.engine import history
from agentor.engine.events import Event
from agentor.engine.history import summarize
from agentor.engine.store.copy import copy_runs
from agentor.engine.store.file import FileStore
from agentor.engine.store.pg.locks import write_and_announce
from agentor.engine.store.pg.rows import BRIEF_COLUMNS, ROW_COLUMNS, USAGE_COLUMNS
from agentor.engine.store.postgres import PostgresStore
from agentor.errors import SchemaVersionError, StoreUnavailableError
from agentor.testing import ScriptedModel
from tests.conftest import FIXTURES, ROOT
from tests.pg_support import SCHEMA, PgStores, append_and_die_before_notifying


def gen(turn: int, n: int) -> Event:
    return Event(
        "generation", turn=turn, messages=[{"role": "user", "content": f"m{i}"} for i in range(n)]
    )


def started(agent: str = "A", prompt: str = "hi") -> Event:
    return Event(
        "run_start",
        agent=agent,
        model="m",
        messages=[{"role": "user", "content": prompt}],
        started_at=time.time(),
    )


# -- the runs table ------------------------------------------------------------------------------


def test_every_summary_field_has_its_column_in_the_same_order() -> None:
    # A new RunSummary field needs a column (a migration) before runs can be listed with it.
    fields = [f.name for f in dataclasses.fields(history.RunSummary)]
    at = fields.index("usage")
    assert list(ROW_COLUMNS) == [*fields[:at], *USAGE_COLUMNS, *fields[at + 1 :]]


async def test_the_runs_table_holds_each_runs_summary_as_replay_makes_it(
    pg_stores: PgStores,
) -> None:
    store = pg_stores()
    copy_runs(FileStore(FIXTURES), store)

    @function_tool
    def lookup(key: str) -> str:
        return key * 3

    model = ScriptedModel([])
    model.replies = [
        model.calls(("lookup", {"key": "a"}), ("lookup", {"key": "b"})),
        ScriptedModel.text("done"),
    ]
    result = await Agentor("Looker", model=model, tools=[lookup], store=store).arun(
        "look a and b up"
    )

    listed = {row.run_id: row for row in pg_stores().list_summaries()}
    assert set(listed) == set(store.list_runs()) and result.run_id in listed
    for run_id, row in listed.items():
        events = store.load(run_id)
        assert row.summary == summarize(run_id, events)
        assert row.last_seq == len(events) and not row.held and row.pending_approvals == 0
    mine = listed[result.run_id]
    assert (mine.summary.tool_calls, mine.summary.turns, mine.summary.first_prompt) == (
        2,
        2,
        "look a and b up",
    )
    assert mine.status == "completed" and mine.claims == 1  # taken once, by the run itself
    newest_first = [r.summary.started_at for r in pg_stores().list_summaries()]
    assert newest_first == sorted(newest_first, reverse=True)
    # A brief listing: the same runs, in the same order, with the brief fields of each.
    whole, brief = pg_stores().list_summaries(), pg_stores().list_summaries(brief=True)
    assert [r.run_id for r in brief] == [r.run_id for r in whole]
    for short, full in zip(brief, whole, strict=True):
        for name in BRIEF_COLUMNS:
            assert getattr(short.summary, name) == getattr(full.summary, name), name
        assert (short.held, short.last_seq, short.status) == (full.held, full.last_seq, full.status)
        assert short.summary.turns == 0 and short.summary.segments == 0  # not read
    with pytest.raises(ValueError, match="every run"):
        pg_stores().list_summaries(brief=True, run_ids=["x"])


def test_a_held_run_is_listed_as_running_and_by_whom(pg_stores: PgStores) -> None:
    store, viewer = pg_stores(), pg_stores()
    store.append("free", started())
    with store.lock("held"):
        store.append("held", started())
        rows = {r.run_id: r for r in viewer.list_summaries()}
        assert (rows["held"].held, rows["held"].status) == (True, "running")
        assert (rows["held"].holder_pid, rows["held"].holder_host) == (
            os.getpid(),
            socket.gethostname(),
        )
        assert (rows["free"].held, rows["free"].status, rows["free"].holder_pid) == (
            False,
            "interrupted",
            None,
        )
        assert viewer.held_runs() == {"held"}
        assert [r.run_id for r in viewer.list_summaries(run_ids=["held"])] == ["held"]
    assert viewer.held_runs() == set()
    assert viewer.list_summaries(run_ids=["held"])[0].status == "interrupted"


def test_pending_approvals_are_counted_until_each_is_decided(pg_stores: PgStores) -> None:
    store = pg_stores()
    store.append_many(
        "r",
        [
            started(),
            Event("approval_request", call_id="c1"),
            Event("approval_request", call_id="c2"),
        ],
    )
    assert store.list_summaries(run_ids=["r"])[0].pending_approvals == 2
    store.append("r", Event("approval", call_id="c1", extra={"decision": "approved"}))
    assert pg_stores().list_summaries(run_ids=["r"])[0].pending_approvals == 1
    assert store.claimable() == []  # a run awaiting a person is never picked up
    store.append("r", Event("approval", call_id="c2", extra={"decision": "rejected"}))
    assert pg_stores().list_summaries(run_ids=["r"])[0].pending_approvals == 0
    assert store.claimable() == ["r"]


def test_claimable_runs_are_free_incomplete_started_ones_oldest_first(pg_stores: PgStores) -> None:
    store = pg_stores()
    store.append("old", started("A"))
    store.append("new", started("B"))
    store.append_many("done", [started("A"), Event("run_end", status="completed")])
    store.append_many("broke", [started("A"), Event("run_end", status="failed")])
    with store.lock("empty"):  # locked and let go before its run_start: nothing to resume
        pass
    assert store.claimable() == ["old", "new"]
    assert store.claimable(agents=["B"]) == ["new"]
    assert store.claimable(statuses=["incomplete", "failed"], limit=2) == ["old", "new"]
    assert store.claimable(statuses=["failed"]) == ["broke"]
    with store.lock("old"):
        assert pg_stores().claimable() == ["new"]


def test_generations_are_stored_compact_and_load_whole(pg_stores: PgStores) -> None:
    store = pg_stores()
    store.append_many("r", [gen(1, 1), gen(2, 3)])
    store.append("r", gen(3, 5))
    stored = [
        bytes(r[0])
        for r in pg_stores.sql("SELECT line FROM {s}.events WHERE run_id = 'r' ORDER BY seq")
    ]
    assert b'"messages":' in stored[0] and all(b'"messages_delta":' in line for line in stored[1:])
    assert [e.messages for e in pg_stores().load("r")] == [
        gen(i, n).messages for i, n in ((1, 1), (2, 3), (3, 5))
    ]


def test_reading_on_from_a_seq_gives_what_load_gives_from_there(pg_stores: PgStores) -> None:
    store = pg_stores()
    store.append_many("r", [started(), gen(1, 2), Event("message", text="a"), gen(2, 4)])
    whole = store.read_events("r")
    assert whole.events == store.load("r") and whole.last_seq == 4
    store.append_many("r", [gen(3, 6), Event("message", text="b")])
    tail = store.read_events("r", whole.last_seq, whole.decoder)
    assert [seq for seq, _ in tail.entries] == [5, 6] and tail.last_seq == 6
    assert tail.events == store.load("r")[4:]
    fresh = pg_stores().read_events("r", 4)  # no decoder: made from the generations before
    assert fresh.events == tail.events
    assert (
        pg_stores().read_events("r", 6).entries == []
        and pg_stores().read_events("r", 6).last_seq == 6
    )
    with pytest.raises(KeyError):
        store.read_events("nope")


def test_lines_are_read_as_stored_from_a_seq_on(pg_stores: PgStores, tmp_path: Path) -> None:
    events = [started(), gen(1, 2), Event("message", text="a"), gen(2, 4)]
    pg_stores().append_many("r", events)
    files = FileStore(tmp_path)
    files.append_many("r", events)
    store = pg_stores()
    lines = store.read_lines("r")
    assert [seq for seq, _ in lines] == [1, 2, 3, 4]
    # As a FileStore writes them: the second generation as its delta, each with its newline.
    assert b"".join(line for _, line in lines) == files.path("r").read_bytes()
    assert store.read_lines("r", 2) == lines[2:] and store.read_lines("r", 4) == []
    with pytest.raises(KeyError):
        store.read_lines("nope")


# -- the change feed -----------------------------------------------------------------------------


def test_each_append_notifies_run_id_and_seq_only(pg_stores: PgStores) -> None:
    store = pg_stores()
    with psycopg.connect(pg_stores.dsn, autocommit=True) as listener:
        listener.execute(f'LISTEN "{SCHEMA}.changes"')
        store.append("r", Event("message", text="x" * 9000))  # more than a payload may hold
        store.append_many("r", [Event("message"), Event("message")])
        payloads = [n.payload for n in listener.notifies(timeout=5, stop_after=2)]
    assert payloads == ["r:1", "r:3"]


def test_a_notification_that_fails_neither_undoes_nor_fails_the_write_before_it(
    pg_stores: PgStores, caplog: pytest.LogCaptureFixture
) -> None:
    """The write and its notification go in one round trip but two transactions: a refused
    notification (here a division by zero in its place) is logged, the write stays committed
    and its result is returned. A refused write is raised, and nothing of it is saved."""
    pg_stores.sql("CREATE TABLE IF NOT EXISTS {s}.probe (n integer PRIMARY KEY)")
    pg_stores.sql("DELETE FROM {s}.probe")
    insert = f'INSERT INTO "{SCHEMA}".probe VALUES (%s) RETURNING n'
    with psycopg.connect(pg_stores.dsn, autocommit=True) as conn:
        assert write_and_announce(conn, insert, (1,), "SELECT 1 / %s", (0,)) == 1
        assert "a change notification was not sent: division by zero" in caplog.text
        with pytest.raises(psycopg.errors.UniqueViolation):
            write_and_announce(conn, insert, (1,), "SELECT %s", (1,))
        assert write_and_announce(conn, insert, (2,), "SELECT %s", (1,)) == 2  # usable still
    assert pg_stores.sql("SELECT n FROM {s}.probe ORDER BY n") == [(1,), (2,)]


def test_the_feed_reports_changes_and_catches_up_after_its_connection_was_cut(
    pg_stores: PgStores,
) -> None:
    store = pg_stores()
    feed = store.changes(poll_interval=60)  # only notifications, unless it reconnects
    try:
        assert feed.wait(0.05) == {}
        store.append("a", Event("message"))
        store.append_many("b", [Event("message"), Event("message")])
        seen: dict[str, int] = {}
        deadline = time.monotonic() + 5
        while seen != {"a": 1, "b": 2} and time.monotonic() < deadline:
            seen.update(feed.wait(1))
        assert seen == {"a": 1, "b": 2}

        assert pg_stores.terminate("feed") == 1
        store.append("a", Event("message"))  # nobody listens: this notification is lost
        store.append("c", Event("message"))
        missed: dict[str, int] = {}
        deadline = time.monotonic() + 10
        while not {"a", "c"} <= set(missed) and time.monotonic() < deadline:
            missed.update(feed.wait(0.5))
        assert missed["a"] == 2 and missed["c"] == 1 and feed.connected
    finally:
        feed.close()


def test_a_notification_lost_between_the_commit_and_it_is_caught_up_by_polling(
    pg_stores: PgStores,
) -> None:
    store = pg_stores()
    deaf = store.changes(poll_interval=60)  # hears notifications only
    feed = store.changes(poll_interval=1.0)
    try:
        with psycopg.connect(pg_stores.dsn, autocommit=True) as listener:
            listener.execute(f'LISTEN "{SCHEMA}.changes"')
            append_and_die_before_notifying(pg_stores.dsn, SCHEMA, "lost")
            assert [e.text for e in store.load("lost")] == ["hi"]  # committed: durable
            assert list(listener.notifies(timeout=0.5)) == []  # and never announced
        assert deaf.wait(1.2) == {}
        deadline = time.monotonic() + 30
        seen: dict[str, int] = {}
        while not seen and time.monotonic() < deadline:
            seen.update(feed.wait(0.1))
        assert seen == {"lost": 1}  # reported by a poll: no notification came
        store.append("lost", Event("message"))  # the next append is announced again
        assert deaf.wait(5) == {"lost": 2}
    finally:
        deaf.close()
        feed.close()


# -- migrations ----------------------------------------------------------------------------------


def test_the_schema_is_versioned_and_migrated_once(pg_stores: PgStores) -> None:
    pg_stores()
    pg_stores()
    versions = pg_stores.sql("SELECT version FROM {s}.schema_version ORDER BY 1")
    assert versions == [(1,), (2,), (3,), (4,)]


def test_a_schema_from_a_newer_version_is_refused_in_one_line_and_left_alone(
    pg_stores: PgStores,
) -> None:
    schema = f"{SCHEMA}_newer"
    PostgresStore(pg_stores.dsn, schema=schema).close()
    pg_stores.sql(
        f"INSERT INTO \"{schema}\".schema_version (version, applied_by) VALUES (7, 'future')"
    )
    with pytest.raises(SchemaVersionError) as refused:
        PostgresStore(pg_stores.dsn, schema=schema)
    message = str(refused.value)
    assert "\n" not in message and "version 7" in message and "up to 4" in message
    assert "upgrade" in message
    assert pg_stores.sql(f'SELECT version FROM "{schema}".schema_version ORDER BY 1') == [
        (1,),
        (2,),
        (3,),
        (4,),
        (7,),
    ]


# -- bad input -----------------------------------------------------------------------------------

SECRET = "s3cret-Pw"


@pytest.mark.parametrize(
    ("dsn", "says"),
    [
        (f"postgresql://postgres:{SECRET} x@127.0.0.1:5432/test", "not a valid PostgreSQL DSN"),
        (f"host=127.0.0.1 password {SECRET}", "not a valid PostgreSQL DSN"),
        (f"postgresql://postgres:{SECRET}@127.0.0.1:1/test", "cannot connect to"),
        # An "@" left unescaped in the password: libpq takes its second half for the host.
        (f"postgresql://postgres:x@{SECRET}@127.0.0.1:5432/test", "cannot connect to"),
        (f"postgresql://postgres:{SECRET}@127.0.0.1:5432/no_such_db_here", "does not exist"),
        (
            f"host=127.0.0.1 port=5432 dbname=test user=no_such_user password='{SECRET}'",
            "no_such_user",
        ),
    ],
)
def test_bad_dsns_are_refused_in_one_line_without_the_password(
    pg_dsn: str, dsn: str, says: str
) -> None:
    began = time.monotonic()
    with pytest.raises(StoreUnavailableError) as refused:
        PostgresStore(dsn, schema=f"{SCHEMA}_bad")
    message = str(refused.value)
    assert says in message and "\n" not in message, message
    assert SECRET not in message and SECRET not in repr(refused.value), message
    assert time.monotonic() - began < 10


def test_the_password_is_never_shown(pg_stores: PgStores) -> None:
    host_part = pg_stores.dsn.split("@", 1)[1]
    store = PostgresStore(f"postgresql://postgres:{SECRET}@{host_part}", schema=SCHEMA)
    try:
        assert SECRET not in repr(store) and SECRET not in store.where
        assert store.where == f"postgresql://postgres:***@{host_part}"
    finally:
        store.close()


def test_a_bad_schema_name_is_refused_before_connecting() -> None:
    with pytest.raises(ValueError, match="invalid schema name"):
        PostgresStore("postgresql://nobody@127.0.0.1:1/x", schema='x"; DROP TABLE y; --')


def test_without_a_server_the_postgres_tests_fail_saying_how_to_get_one() -> None:
    env = {**os.environ, "AGENTOR_TEST_PG": "postgresql://postgres@127.0.0.1:1/test"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_pgstore.py::test_the_schema_is_versioned_and_migrated_once",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout
    said = [line for line in proc.stdout.splitlines() if "need a server" in line]
    assert said and "AGENTOR_TEST_PG=" in said[0] and "pg_ctlcluster" in said[0]
    assert "1 error" in proc.stdout and "skipped" not in proc.stdout


def test_a_store_value_names_a_directory_or_a_database(pg_stores: PgStores, tmp_path: Path) -> None:
    from agentor import open_store
    from agentor.engine.store.pg.dsn import is_dsn

    assert isinstance(open_store(str(tmp_path / "runs")), FileStore)
    assert isinstance(open_store(tmp_path / "runs"), FileStore)
    with open_store(pg_stores.dsn, schema=SCHEMA) as store:
        assert isinstance(store, PostgresStore) and store.schema == SCHEMA
    assert is_dsn("postgres://h/db") and not is_dsn("runs")
    assert is_dsn("host=h") and not is_dsn("./host=h") and not is_dsn("a=b")
