"""Operating a PostgresStore: deleting a run (under its hold, in one transaction), pins in the
database (schema version 2, migrated from 1), search done in the database with the file
search's hits; and `agentor prune`, `pin`, `unpin`, `export`, `search` on a DSN."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentor.engine.events import TOOL_RESULT, Event
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.copy import copy_runs
from agentor.engine.store.file import FileStore
from agentor.engine.store.matching import matcher_for
from agentor.engine.store.postgres import PostgresStore
from agentor.errors import RunLockedError, RunNotFoundError
from agentor.ops import retention
from agentor.ops.run_export import export
from agentor.ops.run_search import search
from tests import test_reliability_fuzz as fz
from tests.pg_support import SCHEMA, PgStores
from tests.retention_support import held_by_another_process, write_run
from tests.test_agentor_command import agentor, refused
from tests.test_agentor_ops_command import SAMPLES, hit_line

SECRET = "s3cret-Pw"


def rows(pg: PgStores, table: str) -> list[str]:
    """The run ids that have rows in `table`, sorted."""
    return sorted({r[0] for r in pg.sql(f"SELECT run_id FROM {{s}}.{table}")})


def on_db(pg: PgStores, *args: str) -> list[str]:
    return [*args, "--store", pg.dsn, "--schema", pg.schema]


# -- the store -----------------------------------------------------------------------------------


def test_delete_checks_under_the_hold_and_removes_events_row_and_pin(pg_stores: PgStores) -> None:
    store = pg_stores()
    now = time.time()
    write_run(store, "doomed", age_days=40, now=now)
    write_run(store, "other", age_days=40, now=now)
    store.pin("doomed")
    size = pg_stores.sql("SELECT sum(octet_length(line)) FROM {s}.events WHERE run_id = 'doomed'")
    seen: list[list[str]] = []

    def check(events: list[Event]) -> None:
        seen.append([e.type for e in events])
        assert store.is_locked("doomed")  # read under the run's hold

    feed = store.changes()
    try:
        feed.wait(0.1)
        assert store.delete("doomed", check) == size[0][0]
        told: dict[str, int] = {}
        deadline = time.monotonic() + 10
        while "doomed" not in told and time.monotonic() < deadline:
            told.update(feed.wait(0.5))
        # A live view hears of it, reads the run again and finds it gone.
        assert "doomed" in told and store.list_summaries(run_ids=["doomed"]) == []
    finally:
        feed.close()
    assert seen == [["run_start", "generation", "run_end"]]
    assert rows(pg_stores, "events") == rows(pg_stores, "runs") == ["other"]
    assert rows(pg_stores, "pins") == [] and store.pinned() == set()
    assert not store.is_locked("doomed")

    with pytest.raises(RunNotFoundError):
        store.delete("doomed")
    assert rows(pg_stores, "runs") == ["other"]  # no row made for the unknown run

    def refuse(events: list[Event]) -> None:
        raise retention.DeleteRefusedError("other", "awaiting_approval", "awaiting approval")

    with pytest.raises(retention.DeleteRefusedError):
        store.delete("other", refuse)
    assert len(store.load("other")) == 3


def test_a_run_another_connection_holds_is_not_deleted(pg_stores: PgStores) -> None:
    store = pg_stores()
    write_run(store, "busy", age_days=40, now=time.time())
    with held_by_another_process(pg_stores.dsn, "busy", pg_stores.schema) as holder:
        with pytest.raises(RunLockedError) as locked:
            store.delete("busy")
        assert locked.value.pid == holder.pid
        with pytest.raises(retention.DeleteRefusedError) as refused_:
            retention.delete_run(store, "busy")
        assert refused_.value.detail == f"held by process {holder.pid}"
    assert len(store.load("busy")) == 3 and rows(pg_stores, "runs") == ["busy"]


def test_pins_are_rows_of_the_database_and_go_with_their_run(pg_stores: PgStores) -> None:
    store, other = pg_stores(), pg_stores()
    write_run(store, "a", age_days=1)
    assert (store.pin("a"), store.pin("a")) == (True, False)
    assert other.pinned() == {"a"}  # another connection sees it: it is in the database
    with pytest.raises(RunNotFoundError):
        store.pin("nope")
    assert rows(pg_stores, "pins") == ["a"]
    assert (other.unpin("a"), other.unpin("a")) == (True, False)
    assert store.pinned() == set()


def test_an_older_schema_is_migrated_and_keeps_its_runs(pg_stores: PgStores) -> None:
    schema = f"{SCHEMA}_v1"
    with PostgresStore(pg_stores.dsn, schema=schema) as store:
        write_run(store, "kept", age_days=3)
    # What version 1 was: no pins table, no experiments, one version recorded (version 3 only
    # replaces two functions: it is applied again over them).
    admin = pg_stores.sql
    admin(f'DROP TABLE "{schema}".pins')
    admin(f'DROP TABLE "{schema}".experiment_records')
    admin(f'DELETE FROM "{schema}".schema_version WHERE version >= 2')
    with PostgresStore(pg_stores.dsn, schema=schema) as store:
        versions = admin(f'SELECT version FROM "{schema}".schema_version ORDER BY 1')
        assert versions == [(1,), (2,), (3,), (4,)]
        assert [e.type for e in store.load("kept")] == ["run_start", "generation", "run_end"]
        assert store.pin("kept") and store.pinned() == {"kept"}


def sample_stores(tmp_path: Path, pg: PgStores) -> tuple[FileStore, PostgresStore]:
    """The sample runs in a directory and, copied, in the database (with a run of escapes)."""
    runs = tmp_path / "runs"
    shutil.copytree(SAMPLES, runs)
    files = FileStore(runs)
    write_run(files, "evil", age_days=1, now=time.time())
    evil = 'weather\x1b[2J report\x07 \u202e°C "quoted" back\\slash'
    files.append("evil", Event(TOOL_RESULT, call_id="c1", name="get\x1b[31mweather", result=evil))
    db = pg()
    report = copy_runs(files, db)
    assert len(report.copied) == len(files.list_runs())
    return files, db


QUERIES = [
    ("oslo", False),
    ("Oslo", False),
    ("Weather Agent", False),
    ("weather", False),
    ("°C", False),
    ('"quoted" back\\slash', False),
    ("get_weather", False),
    ("Hel+sinki", True),
    ("(?i)LONDON|paris", True),
    ("[0-9]{3}", True),
    ("report.?.? ", True),
]


def test_search_in_the_database_finds_what_the_file_search_finds(
    tmp_path: Path, pg_stores: PgStores
) -> None:
    files, db = sample_stores(tmp_path, pg_stores)
    for query, regex in QUERIES:
        in_files = list(search(files, query, regex=regex))
        in_db = list(db.search(query, regex=regex))
        assert in_db == in_files, query
        assert in_db or query == "°C", query  # the queries do find something
    assert list(search(db, "oslo")) == list(search(files, "oslo"))  # through ops.search too
    with pytest.raises(ValueError, match="not a regular expression"):
        db.search("(", regex=True)


def test_only_lines_holding_the_query_leave_the_database(pg_stores: PgStores) -> None:
    store = pg_stores(pool_size=1)
    for i in range(50):
        write_run(
            store, f"r{i:02d}", age_days=1, prompt=f"prompt {i}" + (" Needle" if i == 7 else "")
        )
    sql, params = store._search_sql(matcher_for("needle", False, None))
    sent = pg_stores.sql(sql, params)  # what the search asks the database for
    assert {(r[0], r[1]) for r in sent} == {("r07", 1), ("r07", 2)}
    assert [(h.run_id, h.line, h.type) for h in store.search("needle")] == [
        ("r07", 1, "run_start"),
        ("r07", 2, "generation"),
    ]
    given_up = store.search("prompt")  # a reader that stops after the first hit
    assert next(given_up).run_id == "r00"
    given_up.close()
    assert len(store.list_runs()) == 50  # the one connection is free again


FUZZ_QUERIES = [("Oslo", False), ("a", False), ("é", False), ('"', False), ("\\", False),
                ("null", False), ("\x1b", False), ("1", False), (".", True), ("[0-9]+", True),
                ("^$", True), ("(?i)OSLO", True)]  # fmt: skip


def check_against_the_file(pg: PgStores, store: PostgresStore, data: bytes) -> None:
    """`data` as one run's lines in the database (each a row, seq = its line number, stored as
    it is, however bad) and in a directory: the database's search finds what the file's does."""
    directory = fz.scratch() / "pg-search"
    directory.mkdir(exist_ok=True)
    (directory / "fuzz.jsonl").write_bytes(data)
    pg.sql("DELETE FROM {s}.events")
    pg.sql("DELETE FROM {s}.runs")
    pg.sql("INSERT INTO {s}.runs (run_id) VALUES ('fuzz')")
    for n, line in enumerate(data.split(b"\n"), 1):
        if line:
            pg.sql(
                "INSERT INTO {s}.events (run_id, seq, type, line) VALUES ('fuzz', %s, 'x', %s)",
                (n, line + b"\n"),
            )
    for query, regex in FUZZ_QUERIES:
        assert list(store.search(query, regex=regex)) == list(
            search(directory, query, regex=regex)
        ), (query, data[:300])


@settings(fz.CI, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fz.mutated_logs() | fz.any_json_lines | st.binary(max_size=2000))
def test_the_database_search_over_the_fuzz_corpus_is_the_files(
    pg_stores: PgStores, data: bytes
) -> None:
    store = getattr(pg_stores, "fuzz_store", None)  # one store for every example
    if store is None:
        store = pg_stores.fuzz_store = pg_stores()  # type: ignore[attr-defined]
    check_against_the_file(pg_stores, store, data)


def test_the_database_search_over_every_base_log_of_the_fuzz_corpus(pg_stores: PgStores) -> None:
    store = pg_stores()
    for data in fz.base_logs():
        check_against_the_file(pg_stores, store, data)


# -- the commands on a DSN -----------------------------------------------------------------------


def test_prune_on_a_database_keeps_held_pinned_awaiting_and_forked_runs(
    pg_stores: PgStores,
) -> None:
    store = pg_stores()
    now = time.time()
    write_run(store, "old-done", age_days=40, now=now)
    write_run(store, "old-pinned", age_days=50, now=now)
    write_run(store, "old-awaiting", age_days=60, ending=AWAITING_APPROVAL, now=now)
    write_run(store, "old-held", age_days=70, now=now)
    write_run(store, "old-parent", age_days=80, now=now)
    write_run(store, "young-fork", age_days=2, forked_from="old-parent", now=now)
    store.pin("old-pinned")
    with held_by_another_process(pg_stores.dsn, "old-held", pg_stores.schema) as holder:
        proc = agentor(*on_db(pg_stores, "prune", "--older-than", "30d"))
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert lines[0] == "removed  old-done      completed  last active 40d ago"
        kept = {ln.split()[1]: ln.split(None, 2)[2] for ln in lines if ln.startswith("kept")}
        assert kept == {
            "old-held": f"held by process {holder.pid}",
            "old-awaiting": "awaiting approval",
            "old-pinned": "pinned",
            "old-parent": "its fork young-fork is kept",
        }
        size = lines[-1].split("freed ")[1].split(" in ")[0]
        assert lines[-1] == (
            f"removed 1 run, kept 4; freed {size} in {pg_stores.dsn} (schema {pg_stores.schema})"
        )
        assert size.endswith(" B") and int(size.split()[0]) > 300
    left = ["old-awaiting", "old-held", "old-parent", "old-pinned", "young-fork"]
    assert rows(pg_stores, "runs") == rows(pg_stores, "events") == left
    assert rows(pg_stores, "pins") == ["old-pinned"]

    proc = agentor(*on_db(pg_stores, "prune", "--older-than", "30d", "--dry-run", "--json"))
    doc = json.loads(proc.stdout)
    assert [r["run_id"] for r in doc["removed"]] == ["old-held"]  # free now; a dry run only
    assert doc["dry_run"] is True and doc["freed"] is None
    assert rows(pg_stores, "runs") == left


def test_pin_unpin_export_and_search_on_a_database(tmp_path: Path, pg_stores: PgStores) -> None:
    files, _ = sample_stores(tmp_path, pg_stores)
    run_id = "c0f1f8ee98b55cb8bc6b29804e73ad07"
    proc = agentor(*on_db(pg_stores, "pin", "c0f1f8"))
    assert (proc.returncode, proc.stdout) == (0, f"pinned {run_id}: prune keeps it\n")
    assert rows(pg_stores, "pins") == [run_id]
    listed = json.loads(agentor(*on_db(pg_stores, "ls", "--json")).stdout)
    assert [r["run_id"] for r in listed if r["pinned"]] == [run_id]
    proc = agentor(*on_db(pg_stores, "unpin", run_id))
    assert (proc.returncode, proc.stdout) == (0, f"unpinned {run_id}: prune may remove it again\n")
    assert rows(pg_stores, "pins") == []
    assert "no run nosuchrun in" in refused(agentor(*on_db(pg_stores, "pin", "nosuchrun")))

    for fmt in ("md", "html"):  # the same run reads the same from either store
        proc = agentor(*on_db(pg_stores, "export", run_id, "--format", fmt))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == export(files, run_id, fmt)
    out = tmp_path / "run.json"
    proc = agentor(*on_db(pg_stores, "export", run_id, "-o", str(out)))
    assert proc.returncode == 0 and json.loads(out.read_text())["events"]

    for query, regex in QUERIES:
        flags = ["--regex"] if regex else []
        in_db = agentor("search", pg_stores.dsn, "--schema", pg_stores.schema, query, *flags)
        in_dir = agentor("search", str(files.directory), query, *flags)
        assert (in_db.returncode, in_db.stdout) == (in_dir.returncode, in_dir.stdout), query
    assert in_db.stdout.splitlines() == [
        hit_line(h) for h in search(files, "report.?.? ", regex=True)
    ]
    assert "\x1b" not in in_db.stdout and "␛[2J" in in_db.stdout
    proc = agentor("search", pg_stores.dsn, "--schema", pg_stores.schema, "zzz-nowhere", "--json")
    assert (proc.returncode, proc.stdout) == (1, "[]\n")


def test_a_database_that_does_not_answer_is_one_line_without_the_password(
    pg_stores: PgStores,
) -> None:
    user, _, rest = pg_stores.dsn.removeprefix("postgresql://").partition("@")
    dead = f"postgresql://{user}:{SECRET}@127.0.0.1:1/{rest.split('/', 1)[1]}"
    for args, status in (
        (["prune", dead, "--older-than", "30d"], 1),
        (["pin", "abc", "--store", dead], 1),
        (["export", "abc", "--store", dead], 1),
        (["search", dead, "weather"], 2),
    ):
        line = refused(agentor(*args), status)
        assert "cannot connect to" in line and SECRET not in line, line
        assert line.startswith(f"agentor {args[0]}: ")
