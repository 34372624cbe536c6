"""What only a FileStore does with experiments (`ExperimentStore`): a record cut by a crash is
left out and the next one is whole; a symlink in place of its directory is refused. What every
store that keeps experiments does (records in order, for another opening of the store; an unknown
experiment named in one line) is tests/test_store_suite.py's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentor.engine.store.file import FileStore


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


def test_a_line_no_reader_takes_is_left_out_and_big_numbers_read_back_whole(
    tmp_path: Path,
) -> None:
    """Lines someone else wrote into the file: nested past any parser's depth, not UTF-8, not
    an object; each is left out, the records around them read. A number past 64 bits reads
    back as the integer written (orjson would make it a float)."""
    store = FileStore(tmp_path / "runs")
    store.append_experiment("exp-1", {"kind": "definition", "n": 2**70})
    path = tmp_path / "runs" / ".experiments" / "exp-1.jsonl"
    with open(path, "ab") as f:
        f.write(b"[" * 100_000 + b"]" * 100_000 + b"\n")
        f.write(b'{"kind": "pair", "x": "\xff"}\n[1, 2]\n')
    store.append_experiment("exp-1", {"kind": "pair", "i": 1})
    assert store.load_experiment("exp-1") == [
        {"kind": "definition", "n": 2**70},
        {"kind": "pair", "i": 1},
    ]
