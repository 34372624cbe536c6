"""What only a FileStore does when it deletes a run and keeps pins (its files, another process's
lock, symlinks). What every store that deletes and pins does is tests/test_store_suite.py's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentor.engine.events import RUN_START, Event
from agentor.engine.store import file as store_module
from agentor.engine.store.file import FileStore
from agentor.errors import RunLockedError
from tests.retention_support import held_by_another_process, write_run


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


def test_a_filestore_pin_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "runs")
    write_run(store, "keep-me", age_days=400)
    log = tmp_path / "runs" / "keep-me.jsonl"
    before = log.read_bytes()
    assert store.pin("keep-me") is True
    assert log.read_bytes() == before and store.list_runs() == ["keep-me"]
