"""The warm listing's fast paths (`agentor.sources.directory.runindex.take_fresh`,
`agentor.sources.directory.lognames`, `agentor.sources.directory.columns` for frozen and partly
missing objects, `logfile.promote_young`): each gives what the plain one-at-a-time way gives, on
the cases the plain way handled one by one (a file gone between listing and checking, a run
listed that the index does not know, odd names)."""

from __future__ import annotations

import dataclasses
import gc
import os
from decimal import Decimal
from pathlib import Path

import pytest

from agentor.ops.pricing import RunCost
from agentor.sources.directory import columns, lognames, runindex
from agentor.sources.logfile import promote_young
from agentor.sources.runrow import ROW_FIELDS, RunRow, newest_first
from tests.test_run_index_file import index_file, listed, runs, saved  # noqa: F401 (fixture)


def test_the_index_is_saved_newest_first_and_read_back_in_that_order(runs) -> None:  # noqa: F811
    directory, _ = runs
    source = saved(directory)
    loaded = runindex.RunIndex(directory).load()
    assert loaded.run_ids == [r.run_id for r in source.rows()]
    assert loaded.run_ids == [r.run_id for r in newest_first(loaded.objects()[0])]
    warm = listed(directory)
    assert list(warm._rows) == loaded.run_ids  # taken in the index's order: one pass to sort
    assert [r.run_id for r in warm.rows()] == loaded.run_ids


def test_take_fresh_rereads_changed_gone_and_unknown_files_and_takes_the_rest(runs) -> None:  # noqa: F811
    directory, _ = runs
    source = saved(directory)
    loaded = runindex.RunIndex(directory).load()
    entries = source._list_dir()
    assert entries is not None and len(entries) >= 4
    gone, grown, replaced, *same = [run_id for run_id, _ in entries]
    where = dict(entries)
    os.unlink(where[gone])  # listed, then gone before it is checked
    with open(where[grown], "ab") as f:
        f.write(b"\n")
    before = os.stat(where[replaced])
    twin = directory / "twin.tmp"
    twin.write_bytes(Path(where[replaced]).read_bytes())
    os.utime(twin, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(twin, where[replaced])  # the same size, bytes and mtime; another inode
    assert os.stat(where[replaced]).st_ino != before.st_ino
    unknown = ("not-in-the-index", str(directory / "not-in-the-index.jsonl"))
    rows: dict[str, RunRow] = {}
    tails: dict[str, runindex.LogTail] = {}
    rest = runindex.take_fresh(loaded, [*entries, unknown], rows, tails)
    assert rest == [
        (gone, where[gone]),
        (grown, where[grown]),
        (replaced, where[replaced]),
        unknown,
    ]
    assert sorted(rows) == sorted(same) and set(tails) == set(same)
    assert list(rows) == [i for i in loaded.run_ids if i in same]  # the index's order
    built, _ = loaded.objects()  # every row the index holds
    for run_id in same:
        assert tails[run_id].path == where[run_id]
        want = built[loaded.run_ids.index(run_id)]
        assert [getattr(rows[run_id], f) for f in ROW_FIELDS] == [
            getattr(want, f) for f in ROW_FIELDS
        ]


def test_unchanged_when_every_file_is_there_and_when_one_is_not(tmp_path: Path) -> None:
    paths = []
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text(name)
        paths.append(str(tmp_path / name))
    keys = [runindex._key_of(p) for p in paths]
    assert runindex.unchanged(paths, keys) == [True, True, True]
    (tmp_path / "b").write_text("bb")
    os.unlink(paths[2])
    assert runindex.unchanged([*paths, None], [*keys, keys[0]]) == [True, False, False, False]


def test_log_entries_lists_the_names_row_id_of_lists_in_their_order() -> None:
    names = [
        "0123456789abcdef0123456789abcdef.jsonl",
        ".agentor-index",
        "bad name!.jsonl",
        "0123456789abcdef0123456789abcdef.jsonl.torn",
        ".hidden.jsonl",
        "notes.txt",
        "run-2.jsonl",
        "fedcba9876543210fedcba9876543210.jsonl",
    ]
    want = [(lognames.row_id_of(n), "/d/" + n) for n in names if lognames.row_id_of(n)]
    assert lognames.log_entries("/d/", names) == want
    assert [row_id for row_id, _ in want] == [
        "0123456789abcdef0123456789abcdef",
        "bad name!.jsonl",
        "run-2",
        "fedcba9876543210fedcba9876543210",
    ]
    assert lognames.log_entries("/d/", []) == []


@dataclasses.dataclass(frozen=True)
class Inner:
    price: Decimal | None = None
    n: int = 0


@dataclasses.dataclass
class Outer:
    name: str
    inner: Inner | None = None
    cost: RunCost | None = None


def test_frozen_and_partly_missing_objects_come_back_as_they_were_built() -> None:
    objs = [
        Outer("a", Inner(Decimal("0.10"), 1), RunCost(Decimal("1.5"), 2, 0)),
        Outer("b", None, None),
        Outer("c", Inner(None, 3), RunCost(None, 0, 4)),
    ]
    back = columns.from_columns(Outer, columns.to_columns(Outer, objs), len(objs))
    assert back == objs
    assert [hash(o.inner) for o in back] == [hash(o.inner) for o in objs]
    with pytest.raises(dataclasses.FrozenInstanceError):
        back[0].cost.priced = 9  # type: ignore[misc,union-attr]
    assert back[2].cost.complete is False and back[0].cost.total == Decimal("1.5")
    all_there = [Outer("x", Inner(Decimal("2"), 1)), Outer("y", Inner(Decimal("3"), 2))]
    cols = columns.to_columns(Outer, all_there)
    assert columns.from_columns(Outer, cols, 2) == all_there
    cols["inner.n"] = [1, "2"]
    with pytest.raises(columns._ShapeError, match="wrong type"):
        columns.from_columns(Outer, cols, 2)


def test_promote_young_moves_new_objects_to_the_oldest_generation_unless_some_are_frozen() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        made = [Inner(Decimal(i), i) for i in range(1000)]
        promote_young()
        assert gc.get_count()[0] < 100  # nothing young left to walk
        oldest = {id(o) for o in gc.get_objects(generation=2)}
        assert all(id(o) in oldest for o in made)
        gc.freeze()
        try:
            frozen = gc.get_freeze_count()
            more = [Inner(None, i) for i in range(100)]
            promote_young()  # someone keeps a frozen set: left alone
            assert gc.get_freeze_count() == frozen
            assert id(more[0]) in {id(o) for o in gc.get_objects(generation=0)}
        finally:
            gc.unfreeze()
    finally:
        if was:
            gc.enable()
