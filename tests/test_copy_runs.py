"""`copy_runs`: runs between a directory and a database, either way, ids and events kept; runs
being written are skipped with a notice; copying again never overwrites."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agentor.engine.events import Event
from agentor.engine.log.format import LogEncoder
from agentor.engine.store.copy import copy_runs
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from tests.conftest import FIXTURES
from tests.pg_support import PgStores


def lines(events: list[Event]) -> list[bytes]:
    encoder = LogEncoder(compact=False)
    return [encoder.encode(e) for e in events]


def test_runs_go_from_a_directory_to_a_database_and_back_unchanged(
    pg_stores: PgStores, tmp_path: Path
) -> None:
    shutil.copytree(FIXTURES, tmp_path / "upstream")
    source = FileStore(tmp_path / "upstream")
    database = pg_stores()
    there = copy_runs(source, database)
    back = copy_runs(pg_stores(), FileStore(tmp_path / "back"))
    assert sorted(there.copied) == sorted(back.copied) == source.list_runs()
    assert str(back) == "8 copied, 0 extended, 0 already there, 0 skipped"
    returned = FileStore(tmp_path / "back")
    for run_id in source.list_runs():
        assert lines(returned.load(run_id)) == lines(source.load(run_id))


def test_a_run_being_written_is_skipped_with_a_notice_and_the_rest_copied(
    pg_stores: PgStores, tmp_path: Path
) -> None:
    source = pg_stores()
    source.append("done", Event("message", text="finished"))
    target = FileStore(tmp_path / "runs")
    with source.lock("busy"):
        source.append("busy", Event("message", text="half"))
        report = copy_runs(pg_stores(), target)
    assert report.copied == ["done"]
    busy = f"being written in the source (by process {os.getpid()})"
    assert report.notices() == [f"skipped busy: {busy}"]
    assert target.list_runs() == ["done"]
    with target.lock("done"):
        report = copy_runs(FileStore(tmp_path / "runs"), pg_stores(), ["done"])
    assert report.skipped == {"done": busy}


def test_copying_again_adds_what_is_new_and_never_overwrites(tmp_path: Path) -> None:
    source, target = FileStore(tmp_path / "a"), MemoryStore()
    source.append_many("grows", [Event("message", text="1"), Event("message", text="2")])
    source.append("other", Event("message", text="mine"))
    target.append("other", Event("message", text="someone else's"))
    first = copy_runs(source, target)
    assert first.copied == ["grows"] and "other" in first.skipped
    assert [e.text for e in target.load("other")] == ["someone else's"]

    assert copy_runs(source, target, ["grows"]).unchanged == ["grows"]
    source.append("grows", Event("message", text="3"))
    assert copy_runs(source, target, ["grows"]).extended == ["grows"]
    assert [e.text for e in target.load("grows")] == ["1", "2", "3"]
    assert copy_runs(source, target, ["missing"]).skipped == {
        "missing": "no such run in the source"
    }


def test_a_run_held_in_the_destination_is_skipped(pg_stores: PgStores, tmp_path: Path) -> None:
    source = FileStore(tmp_path / "runs")
    source.append("r", Event("message"))
    target = pg_stores()
    with target.lock("r"):
        report = copy_runs(source, pg_stores())
    assert report.skipped["r"].startswith("being written in the destination (by process")
    assert copy_runs(source, target).copied == ["r"]
