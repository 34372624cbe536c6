"""`ExperimentStore`, on every store that keeps experiments (FileStore, MemoryStore,
PostgresStore): records kept in order, durable, readable by another opening of the store; an
unknown experiment is an `ExperimentNotFoundError`; a record cut by a crash is left out and the
next one is whole."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentor import ExperimentNotFoundError
from agentor.engine.store.api import ExperimentStore
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore


class Stores:
    def __init__(self, kind: str, make: Any) -> None:
        self.kind = kind
        self.new = make


@pytest.fixture(params=["file", "memory", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "file":
        yield Stores("file", lambda: FileStore(tmp_path / "runs"))
    elif request.param == "memory":
        memory = MemoryStore()
        yield Stores("memory", lambda: memory)
    else:
        yield Stores("postgres", request.getfixturevalue("pg_stores"))


def test_records_come_back_in_order_to_another_opening_of_the_store(stores: Stores) -> None:
    store = stores.new()
    assert isinstance(store, ExperimentStore)
    assert store.list_experiments() == []
    definition = {"kind": "definition", "id": "exp-1", "name": "ünïcode \u202e", "n": [1, 2.5]}
    store.append_experiment("exp-1", definition)
    store.append_experiment("exp-2", {"kind": "definition", "id": "exp-2"})
    for i in range(3):
        store.append_experiment("exp-1", {"kind": "pair", "i": i, "none": None})
    again = stores.new()
    assert again.list_experiments() == ["exp-1", "exp-2"]
    assert again.load_experiment("exp-1") == [
        definition,
        *({"kind": "pair", "i": i, "none": None} for i in range(3)),
    ]
    assert again.load_experiment("exp-2") == [{"kind": "definition", "id": "exp-2"}]


def test_an_unknown_experiment_is_named_in_one_line(stores: Stores) -> None:
    store = stores.new()
    with pytest.raises(ExperimentNotFoundError, match="no experiment exp-none") as caught:
        store.load_experiment("exp-none")
    assert isinstance(caught.value, KeyError)
    with pytest.raises(ValueError):
        store.append_experiment("../escape", {"kind": "definition"})


def test_a_record_cut_by_a_crash_is_left_out_and_the_next_is_whole(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "runs")
    store.append_experiment("exp-1", {"kind": "definition"})
    path = tmp_path / "runs" / ".experiments" / "exp-1.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"kind": "pair", "cut')  # what a crash mid-write leaves
    assert store.load_experiment("exp-1") == [{"kind": "definition"}]
    store.append_experiment("exp-1", {"kind": "pair", "i": 1})
    assert store.load_experiment("exp-1") == [{"kind": "definition"}, {"kind": "pair", "i": 1}]
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [".experiments"], (
        "no run file: a runs listing never sees an experiment"
    )


def test_a_symlink_in_place_of_the_experiments_directory_is_refused(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "runs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / "runs" / ".experiments")
    with pytest.raises(OSError, match=r"refusing to use \.experiments"):
        store.append_experiment("exp-1", {"kind": "definition"})
    assert list(elsewhere.iterdir()) == []
