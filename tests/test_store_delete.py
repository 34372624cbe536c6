"""Stores delete whole runs (never one a live process holds) and keep pins outside the logs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentor.engine.events import RUN_START, Event
from agentor.engine.store import file as store_module
from agentor.engine.store.api import DeletingStore, PinningStore
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.errors import RunLockedError, RunNotFoundError
from tests.retention_support import held_by_another_process, write_run


@pytest.fixture(params=["file", "memory", "pg"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FileStore | MemoryStore]:
    """Each store that deletes and pins: a directory, memory, a database (a fresh schema)."""
    if request.param == "pg":
        yield request.getfixturevalue("pg_stores")()
    else:
        yield FileStore(tmp_path / "runs") if request.param == "file" else MemoryStore()


def test_both_stores_delete_and_pin(store: FileStore | MemoryStore) -> None:
    assert isinstance(store, DeletingStore)
    assert isinstance(store, PinningStore)


def test_a_deleted_run_is_gone_and_the_others_stay(store: FileStore | MemoryStore) -> None:
    write_run(store, "old", age_days=40)
    write_run(store, "other", age_days=40)
    before = store.load("other")
    store.delete("old")
    assert store.list_runs() == ["other"]
    with pytest.raises(RunNotFoundError):
        store.load("old")
    assert store.load("other") == before


def test_deleting_an_unknown_run_says_so(store: FileStore | MemoryStore) -> None:
    with pytest.raises(RunNotFoundError):
        store.delete("nobody")
    with pytest.raises(ValueError, match="invalid run id"):
        store.delete("../etc/passwd")


def test_a_run_held_in_this_process_is_not_deleted(store: FileStore | MemoryStore) -> None:
    write_run(store, "busy", age_days=1, ending=None)
    with store.lock("busy"), pytest.raises(RunLockedError):
        store.delete("busy")
    assert len(store.load("busy")) == 2


def test_a_check_that_raises_keeps_the_run(store: FileStore | MemoryStore) -> None:
    write_run(store, "kept", age_days=1)
    seen: list[list[Event]] = []

    def refuse(events: list[Event]) -> None:
        seen.append(events)
        raise RuntimeError("not this one")

    with pytest.raises(RuntimeError, match="not this one"):
        store.delete("kept", refuse)
    assert [e.type for e in seen[0]] == ["run_start", "generation", "run_end"]
    assert store.list_runs() == ["kept"]


def test_pins_are_kept_outside_the_logs(store: FileStore | MemoryStore, tmp_path: Path) -> None:
    write_run(store, "keep-me", age_days=400)
    log = tmp_path / "runs" / "keep-me.jsonl"
    before = log.read_bytes() if isinstance(store, FileStore) else None
    assert store.pin("keep-me") is True
    assert store.pin("keep-me") is False  # already pinned
    assert store.pinned() == {"keep-me"}
    if isinstance(store, FileStore):
        assert log.read_bytes() == before
        assert store.list_runs() == ["keep-me"]  # the marker is no run
    assert store.unpin("keep-me") is True
    assert store.unpin("keep-me") is False
    assert store.pinned() == set()
    with pytest.raises(RunNotFoundError):
        store.pin("nobody")


def test_deleting_a_pinned_run_removes_its_pin(store: FileStore | MemoryStore) -> None:
    write_run(store, "pinned", age_days=1)
    store.pin("pinned")
    store.delete("pinned")
    assert store.pinned() == set()
    write_run(store, "pinned", age_days=0)  # a new run under the same id starts unpinned
    assert store.pinned() == set()


def test_a_filestore_deletes_the_torn_leftovers_and_says_what_it_freed(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    write_run(store, "torn", age_days=3)
    with open(tmp_path / "torn.jsonl", "ab") as f:
        f.write(b'{"type": "tool_ca')  # a crash mid-line
    store.append("torn", Event(RUN_START, ts=1.0))  # moves the fragment aside
    assert (tmp_path / "torn.jsonl.torn").exists()
    size = (tmp_path / "torn.jsonl").stat().st_size + (tmp_path / "torn.jsonl.torn").stat().st_size
    assert store.delete("torn") == size
    assert sorted(os.listdir(tmp_path)) == []


def test_a_run_held_by_another_process_is_not_deleted(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    write_run(store, "held", age_days=100, ending=None)
    before = (tmp_path / "held.jsonl").read_bytes()
    with held_by_another_process(tmp_path, "held") as proc:
        with pytest.raises(RunLockedError) as refused:
            store.delete("held")
        assert refused.value.pid == proc.pid
        assert (tmp_path / "held.jsonl").read_bytes() == before
    store.delete("held")  # the holder is gone: the run is free
    assert store.list_runs() == []


def test_a_lock_taken_while_the_run_was_deleted_holds_the_new_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A named run started as prune deletes its old log: the lock opened the old file, which
    was removed before the lock was granted. Its events must reach the log that exists."""
    store = FileStore(tmp_path)
    write_run(store, "job-7", age_days=100)
    real = store_module._flock_patiently
    deleted = []

    def deleted_while_waiting(fd: int, run_id: str) -> None:
        if not deleted:  # the deleter, holding the lock, removes the file; then lets go
            deleted.append(run_id)
            FileStore(tmp_path).delete(run_id)
        real(fd, run_id)

    monkeypatch.setattr(store_module, "_flock_patiently", deleted_while_waiting)
    with store.lock("job-7"):
        store.append("job-7", Event(RUN_START, run_id="job-7", ts=2.0))
    assert deleted == ["job-7"]
    assert [e.type for e in FileStore(tmp_path).load("job-7")] == ["run_start"]


def test_a_pins_directory_swapped_for_a_symlink_is_refused(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store = FileStore(runs)
    write_run(store, "r1", age_days=1)
    (runs / ".pins").symlink_to(elsewhere)
    with pytest.raises(OSError, match="not a directory"):
        store.pin("r1")
    with pytest.raises(OSError, match="not a directory"):
        store.pinned()
    assert list(elsewhere.iterdir()) == []


def test_a_pin_marker_planted_as_a_symlink_is_never_followed(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "runs")
    write_run(store, "r1", age_days=1)
    target = tmp_path / "precious"
    target.write_text("keep")
    (tmp_path / "runs" / ".pins").mkdir()
    (tmp_path / "runs" / ".pins" / "r1").symlink_to(target)
    assert store.pin("r1") is False  # the name is taken; nothing is written through it
    assert store.unpin("r1") is True  # removes the link, not what it points to
    assert target.read_text() == "keep"
