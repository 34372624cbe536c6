"""Retention: prune removes whole old runs and says why it kept each run it matched; pins;
one run deleted by name."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from agentor.engine.events import RUN_END, RUN_START, TOOL_CALL, Event
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.errors import DeleteRefusedError, RunNotFoundError
from agentor.ops.pins import is_pinned, pin, pinned, unpin
from agentor.ops.retention import (
    AGE_UNKNOWN,
    AWAITING,
    CHANGED,
    HAS_KEPT_FORKS,
    HELD,
    NEWEST,
    PINNED,
    UNREADABLE,
    Kept,
    delete_run,
    parse_age,
    parse_statuses,
    prune,
)
from tests.conftest import FIXTURES
from tests.retention_support import DAY, NOW, held_by_another_process, write_run


@pytest.fixture(params=["file", "memory", "pg"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FileStore | MemoryStore]:
    """Each store that deletes and pins: a directory, memory, a database (a fresh schema)."""
    if request.param == "pg":
        yield request.getfixturevalue("pg_stores")()
    else:
        yield FileStore(tmp_path / "runs") if request.param == "file" else MemoryStore()


def kept(report: object) -> dict[str, tuple[str, str]]:
    return {k.run_id: (k.reason, k.detail) for k in report.kept}  # type: ignore[attr-defined]


def removed(report: object) -> list[str]:
    return [r.run_id for r in report.removed]  # type: ignore[attr-defined]


def test_old_runs_are_removed_and_young_ones_left_unmentioned(
    store: FileStore | MemoryStore,
) -> None:
    write_run(store, "old", age_days=40)
    write_run(store, "young", age_days=3)
    report = prune(store, older_than="30d", now=NOW)
    assert removed(report) == ["old"]
    assert report.kept == []
    assert store.list_runs() == ["young"]
    assert report.removed[0].status == "completed"
    assert report.removed[0].last_active == pytest.approx(NOW - 40 * DAY)


def test_a_dry_run_says_the_same_and_touches_nothing(store: FileStore | MemoryStore) -> None:
    write_run(store, "old", age_days=40)
    write_run(store, "young", age_days=3)
    before = {r: store.load(r) for r in store.list_runs()}
    report = prune(store, older_than=timedelta(days=30), dry_run=True, now=NOW)
    assert report.dry_run and removed(report) == ["old"]
    assert {r: store.load(r) for r in store.list_runs()} == before


def test_held_awaiting_pinned_and_forked_runs_are_kept_with_the_reason(
    store: FileStore | MemoryStore, tmp_path: Path
) -> None:
    for run_id in ("held", "plain"):
        write_run(store, run_id, age_days=90, ending=None)
    write_run(store, "awaiting", age_days=90, ending=AWAITING_APPROVAL)
    write_run(store, "pinned", age_days=90)
    write_run(store, "grandparent", age_days=90)
    write_run(store, "parent", age_days=90, forked_from="grandparent")
    write_run(store, "young-fork", age_days=1, forked_from="parent")  # kept: too young
    write_run(store, "lonely-parent", age_days=90)
    write_run(store, "old-fork", age_days=60, forked_from="lonely-parent")  # removed first
    pin(store, "pinned")

    def run_prune() -> tuple[object, object]:
        return (
            prune(store, older_than="30d", dry_run=True, now=NOW),
            prune(store, older_than="30d", now=NOW),
        )

    if isinstance(store, FileStore):
        with held_by_another_process(tmp_path / "runs", "held") as proc:
            reports = run_prune()
        holder = f"held by process {proc.pid}"
    else:
        with store.lock("held"):
            reports = run_prune()
        holder = f"held by process {os.getpid()}"
    for report in reports:  # a dry run says what the real one does
        assert kept(report) == {
            "held": (HELD, holder),
            "awaiting": (AWAITING, "awaiting approval"),
            "pinned": (PINNED, "pinned"),
            "parent": (HAS_KEPT_FORKS, "its fork young-fork is kept"),
            "grandparent": (HAS_KEPT_FORKS, "its fork parent is kept"),
        }
        # Oldest first, a fork before its parent; each removed run was old and free.
        assert removed(report) == ["plain", "old-fork", "lonely-parent"]
    assert sorted(store.list_runs()) == sorted(
        ["held", "awaiting", "pinned", "grandparent", "parent", "young-fork"]
    )


def test_keep_last_keeps_the_newest_of_the_status_asked_for(
    store: FileStore | MemoryStore,
) -> None:
    for i in range(5):
        write_run(store, f"done-{i}", age_days=50 + i)  # done-0 is the newest
    write_run(store, "failed-0", age_days=70, ending="failed")
    write_run(store, "failed-1", age_days=80, ending="failed")
    report = prune(store, older_than="30d", keep_last=2, status="completed", now=NOW)
    assert removed(report) == ["done-4", "done-3", "done-2"]  # oldest first
    assert kept(report) == {
        "done-0": (NEWEST, "one of the 2 newest"),
        "done-1": (NEWEST, "one of the 2 newest"),
    }
    assert sorted(store.list_runs()) == ["done-0", "done-1", "failed-0", "failed-1"]


def test_keep_last_alone_keeps_that_many_runs(store: FileStore | MemoryStore) -> None:
    for i in range(4):
        write_run(store, f"r{i}", age_days=i)
    report = prune(store, keep_last=1, now=NOW)
    assert sorted(removed(report)) == ["r1", "r2", "r3"]
    assert store.list_runs() == ["r0"]


def test_the_status_filter_takes_the_statuses_the_list_shows(
    store: FileStore | MemoryStore,
) -> None:
    write_run(store, "done", age_days=40)
    write_run(store, "broke", age_days=40, ending="failed")
    write_run(store, "cut", age_days=40, ending=None)  # interrupted: nobody holds it
    write_run(store, "limit", age_days=40, ending="max_turns")
    report = prune(store, older_than="30d", status=["failed", "interrupted"], now=NOW)
    assert sorted(removed(report)) == ["broke", "cut"]
    assert sorted(store.list_runs()) == ["done", "limit"]


def test_a_run_with_no_time_is_kept_when_age_is_asked(store: FileStore | MemoryStore) -> None:
    store.append_many("timeless", [Event(TOOL_CALL, name="x")])
    report = prune(store, older_than="1d", now=NOW)
    assert kept(report) == {"timeless": (AGE_UNKNOWN, "its log records no time")}
    assert store.list_runs() == ["timeless"]


def test_a_run_active_again_before_its_deletion_is_kept(tmp_path: Path) -> None:
    """Between reading the runs and deleting one, another process appends to it: the check
    under the store's hold sees the new event and keeps the run."""

    class Busy(FileStore):
        def delete(self, run_id, check=None):  # type: ignore[no-untyped-def]
            write_run(FileStore(self.directory), run_id, age_days=0)  # another writer, now
            return super().delete(run_id, check)

    store = Busy(tmp_path)
    write_run(store, "revived", age_days=40)
    report = prune(store, older_than="30d", now=NOW)
    assert removed(report) == []
    assert kept(report) == {"revived": (CHANGED, "it was active again meanwhile")}
    assert store.list_runs() == ["revived"]


def test_a_run_pinned_or_awaiting_before_its_deletion_is_kept(tmp_path: Path) -> None:
    class Meanwhile(FileStore):
        def delete(self, run_id, check=None):  # type: ignore[no-untyped-def]
            other = FileStore(self.directory)  # another process, between reading and deleting
            if run_id == "pinned-meanwhile":
                other.pin(run_id)
            else:
                other.append(run_id, Event("run_end", status=AWAITING_APPROVAL, ts=NOW - 40 * DAY))
            return super().delete(run_id, check)

    store = Meanwhile(tmp_path)
    write_run(store, "pinned-meanwhile", age_days=40)
    write_run(store, "gated-meanwhile", age_days=40, ending=None)
    report = prune(store, older_than="30d", now=NOW)
    assert removed(report) == []
    assert kept(report) == {
        "pinned-meanwhile": (PINNED, "pinned"),
        "gated-meanwhile": (AWAITING, "awaiting approval"),
    }


def test_an_unreadable_run_is_kept_and_said_so(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    write_run(store, "good", age_days=40)
    (tmp_path / "bad.jsonl").mkdir()  # a directory under a run's name
    report = prune(store, older_than="30d", now=NOW)
    assert removed(report) == ["good"]
    reason, detail = kept(report)["bad"]
    assert reason == UNREADABLE and "not a regular file" in detail


def test_upstream_forks_keep_their_parent_while_pinned(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "runs", ignore=shutil.ignore_patterns("*.md", "*.json"))
    store = FileStore(tmp_path / "runs")
    manifest = __import__("json").loads((FIXTURES / "manifest.json").read_text())
    parent, fork = manifest["completed"]["run_id"], manifest["fork"]["run_id"]
    pin(store, fork)
    report = prune(store, status="completed", dry_run=True)
    assert kept(report)[fork] == (PINNED, "pinned")
    assert kept(report)[parent] == (HAS_KEPT_FORKS, f"its fork {fork} is kept")
    assert parent not in removed(report) and fork not in removed(report)
    unpin(store, fork)
    report = prune(store, status="completed")
    assert removed(report).index(fork) < removed(report).index(parent)
    assert fork not in store.list_runs() and parent not in store.list_runs()


def write_child_named_on_its_run_start(store: Store, run_id: str, parent: str, age: float) -> None:
    """A fork that names its parent on its `run_start` (`forked_from`), as upstream logs may,
    with no `fork` event."""
    t = NOW - age * DAY
    start = Event(RUN_START, run_id=run_id, forked_from=parent, started_at=t - 1, ts=t - 1)
    store.append_many(run_id, [start, Event(RUN_END, status="completed", text="ok", ts=t)])


def test_a_parent_named_on_a_kept_forks_run_start_is_kept(store: FileStore | MemoryStore) -> None:
    write_run(store, "parent", age_days=90)
    write_child_named_on_its_run_start(store, "pinned-child", "parent", age=90)
    write_run(store, "other-parent", age_days=90)
    write_child_named_on_its_run_start(store, "young-child", "other-parent", age=1)
    write_run(store, "lonely-parent", age_days=90)
    write_child_named_on_its_run_start(store, "old-child", "lonely-parent", age=60)
    pin(store, "pinned-child")
    for dry_run in (True, False):
        report = prune(store, older_than="30d", dry_run=dry_run, now=NOW)
        assert kept(report) == {
            "pinned-child": (PINNED, "pinned"),
            "parent": (HAS_KEPT_FORKS, "its fork pinned-child is kept"),
            "other-parent": (HAS_KEPT_FORKS, "its fork young-child is kept"),
        }
        assert removed(report) == ["old-child", "lonely-parent"]
    assert sorted(store.list_runs()) == ["other-parent", "parent", "pinned-child", "young-child"]


def test_pinning_is_told_and_undone(store: FileStore | MemoryStore) -> None:
    write_run(store, "r", age_days=100)
    assert not is_pinned(store, "r")
    assert pin(store, "r") is True
    assert is_pinned(store, "r") and pinned(store) == {"r"}
    assert unpin(store, "r") is True
    assert not is_pinned(store, "r")
    with pytest.raises(RunNotFoundError):
        pin(store, "ghost")


def test_delete_run_refuses_held_and_awaiting_runs_and_removes_a_pinned_one(
    store: FileStore | MemoryStore,
) -> None:
    write_run(store, "awaiting", age_days=1, ending=AWAITING_APPROVAL)
    write_run(store, "busy", age_days=1, ending=None)
    write_run(store, "pinned", age_days=1)
    pin(store, "pinned")
    with pytest.raises(DeleteRefusedError) as refused:
        delete_run(store, "awaiting")
    assert (refused.value.reason, refused.value.detail) == (AWAITING, "awaiting approval")
    assert "awaiting approval" in str(refused.value)
    with store.lock("busy"), pytest.raises(DeleteRefusedError) as refused:
        delete_run(store, "busy")
    assert refused.value.reason == HELD
    delete_run(store, "pinned")  # named by a person: a pin does not stop that
    assert sorted(store.list_runs()) == ["awaiting", "busy"]
    assert pinned(store) == set()
    with pytest.raises(RunNotFoundError):
        delete_run(store, "pinned")


def test_ages_are_a_number_and_a_unit() -> None:
    assert parse_age("30d") == timedelta(days=30)
    assert parse_age("12h") == timedelta(hours=12)
    assert parse_age("90m") == timedelta(minutes=90)
    assert parse_age("45s") == timedelta(seconds=45)
    assert parse_age("2w") == timedelta(weeks=2)
    assert parse_age(" 1.5D ") == timedelta(hours=36)
    assert parse_age(timedelta(0)) == timedelta(0)
    for bad in ("30", "d", "30 days", "-3d", "1mo", "", None, 30):
        with pytest.raises(ValueError, match="use a number and a unit: 30d, 12h, 90m"):
            parse_age(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot be negative"):
        parse_age(timedelta(days=-1))


def test_statuses_are_named_as_the_list_shows_them() -> None:
    assert parse_statuses("completed,failed") == {"completed", "failed"}
    assert parse_statuses(["incomplete"]) == {"incomplete", "running", "interrupted"}
    with pytest.raises(ValueError, match=r"unknown status complete: use one or more of"):
        parse_statuses("complete")
    with pytest.raises(ValueError, match="unknown status"):
        parse_statuses("")


def test_prune_needs_a_criterion_and_sane_numbers(store: FileStore | MemoryStore) -> None:
    write_run(store, "r", age_days=1)
    with pytest.raises(ValueError, match="say what to prune"):
        prune(store)
    for bad in (-1, True, 1.5, "3"):
        with pytest.raises(ValueError, match="keep_last must be a whole number"):
            prune(store, keep_last=bad)  # type: ignore[arg-type]
    assert store.list_runs() == ["r"]


def test_a_store_that_cannot_delete_is_refused_unless_dry(tmp_path: Path) -> None:
    class Plain:  # only the three-method protocol
        def __init__(self) -> None:
            self.inner = MemoryStore()

        def append(self, run_id: str, event: Event) -> None:
            self.inner.append(run_id, event)

        def load(self, run_id: str) -> list[Event]:
            return self.inner.load(run_id)

        def list_runs(self) -> list[str]:
            return self.inner.list_runs()

    plain = Plain()
    write_run(plain.inner, "old", age_days=40)
    with pytest.raises(TypeError, match="cannot delete runs"):
        prune(plain, older_than="30d", now=NOW)
    assert removed(prune(plain, older_than="30d", dry_run=True, now=NOW)) == ["old"]
    with pytest.raises(TypeError, match="keeps no pins"):
        pin(plain, "old")
    assert pinned(plain) == set() and Kept("x", PINNED, "pinned").reason == PINNED


def test_prune_keeps_no_run_in_memory_once_it_has_read_it(tmp_path: Path) -> None:
    """A FileStore reader of many runs (prune reads them all) keeps none of their requests."""
    import tracemalloc

    store = FileStore(tmp_path)
    big = [{"role": "user", "content": "x" * 200_000}]
    for i in range(30):
        store.append_many(f"r{i}", [Event("generation", turn=1, messages=big, ts=NOW - 40 * DAY)])
    reader = FileStore(tmp_path)  # a fresh store, as a prune command has
    tracemalloc.start()
    try:
        report = prune(reader, older_than="30d", dry_run=True, now=NOW)
        retained, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(report.removed) == 30
    assert retained < 1_000_000, f"{retained:,} bytes kept after reading 6 MB of requests"
