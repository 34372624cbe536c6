"""Entries of a runs directory that are no readable run (a directory, a symlink, random bytes,
each named like a run) met by `agentor prune` and `agentor pin`: prune says a file's bad lines
in one line, not one a line; pin refuses in one line (exit 1, as its other refusals) and
writes no pin. The installed console script in subprocesses.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentor.engine.store.file import FileStore
from tests.conftest import FIXTURES
from tests.test_agentor_command import agentor, refused

GOOD = "32e803417cab48f7a26fffcf902194d6"
A_DIRECTORY = "aaaa" + "0" * 28
A_SYMLINK = "bbbb" + "0" * 28
RANDOM_BYTES = "cccc" + "0" * 28


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(FIXTURES / f"{GOOD}.jsonl", runs / f"{GOOD}.jsonl")
    (runs / f"{A_DIRECTORY}.jsonl").mkdir()
    (tmp_path / "secret").write_text("not a run\n")
    os.symlink(tmp_path / "secret", runs / f"{A_SYMLINK}.jsonl")
    # Random bytes with many newlines: many bad lines, not one event.
    (runs / f"{RANDOM_BYTES}.jsonl").write_bytes(os.urandom(20_000).replace(b"{", b"\n"))
    return runs


def test_prune_says_a_file_of_bad_lines_in_one_line(runs: Path) -> None:
    pruned = agentor("prune", str(runs), "--older-than", "1s", "--dry-run")
    assert pruned.returncode == 0, pruned.stderr
    about = [line for line in pruned.stderr.splitlines() if RANDOM_BYTES in line]
    assert len(about) == 1, pruned.stderr
    assert about[0].startswith(f"run {RANDOM_BYTES}: skipped ")
    assert " bad lines; the first: line 1 (byte 0): " in about[0]


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (A_DIRECTORY, "not a regular file"),
        (A_SYMLINK, "it is a symlink"),
        (RANDOM_BYTES, "no event; skipped "),
    ],
    ids=["directory", "symlink", "random bytes"],
)
def test_pin_refuses_an_entry_that_is_no_readable_run(runs: Path, entry: str, why: str) -> None:
    line = refused(agentor("pin", entry, "--store", str(runs)), 1)
    assert line.startswith(f"agentor pin: cannot pin {entry}: it is no readable run (")
    assert why in line
    assert FileStore(runs).pinned() == set()
    pinned = agentor("pin", GOOD, "--store", str(runs))
    assert pinned.returncode == 0 and pinned.stdout == f"pinned {GOOD}: prune keeps it\n"
    assert FileStore(runs).pinned() == {GOOD}


def test_the_store_pins_no_directory_or_symlink_named_like_a_run(runs: Path) -> None:
    store = FileStore(runs)
    for entry in (A_DIRECTORY, A_SYMLINK):
        with pytest.raises(OSError):
            store.pin(entry)
    assert store.pinned() == set()
