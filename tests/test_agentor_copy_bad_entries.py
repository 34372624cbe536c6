"""`agentor copy` from a directory holding entries that are no readable run (a directory, a
symlink, random bytes, each named like a run): each is skipped with one line saying why, the
good runs are copied, the summary counts the skipped, nothing is written for a skipped entry,
into a directory and into a database. The installed console script in subprocesses.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from tests.conftest import FIXTURES
from tests.pg_support import PgStores
from tests.test_agentor_command import agentor

GOOD = ["32e803417cab48f7a26fffcf902194d6", "f6e5c2ab8a234676be5f70006fb045a6"]
A_DIRECTORY = "aaaa" + "0" * 28
A_SYMLINK = "bbbb" + "0" * 28
RANDOM_BYTES = "cccc" + "0" * 28


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    for run_id in GOOD:
        shutil.copy(FIXTURES / f"{run_id}.jsonl", src / f"{run_id}.jsonl")
    (src / f"{A_DIRECTORY}.jsonl").mkdir()
    (tmp_path / "secret").write_text("not a run\n")
    os.symlink(tmp_path / "secret", src / f"{A_SYMLINK}.jsonl")
    (src / f"{RANDOM_BYTES}.jsonl").write_bytes(os.urandom(20_000).replace(b"{", b"("))
    return src


@pytest.fixture(params=["directory", "postgres"])
def destination(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[list[str], Store]]:
    if request.param == "directory":
        yield [str(tmp_path / "dst")], FileStore(tmp_path / "dst")
    else:
        pg: PgStores = request.getfixturevalue("pg_stores")
        schema = pg.schema + "_copy"  # a schema the copy makes (dropped with the session's)
        yield [pg.dsn, "--schema", schema], pg(schema=schema)


def test_entries_that_are_no_readable_run_are_skipped_one_line_each_and_the_rest_copied(
    source: Path, destination: tuple[list[str], Store]
) -> None:
    where, store = destination
    copied = agentor("copy", str(source), *where)
    assert copied.returncode == 0, copied.stderr
    assert copied.stdout.startswith("2 copied, 0 extended, 0 already there, 3 skipped (from ")
    said = copied.stderr.splitlines()
    assert len(said) == 3, copied.stderr
    directory, symlink, random_bytes = said
    assert directory.startswith(f"agentor copy: skipped {A_DIRECTORY}: unreadable in the source")
    assert "not a regular file" in directory
    assert symlink.startswith(f"agentor copy: skipped {A_SYMLINK}: unreadable in the source")
    assert "it is a symlink" in symlink
    assert random_bytes.startswith(
        f"agentor copy: skipped {RANDOM_BYTES}: unreadable in the source (no event; skipped "
    )
    assert sorted(store.list_runs()) == GOOD  # nothing written for a skipped entry
    for run_id in GOOD:
        assert store.load(run_id) == FileStore(source).load(run_id)

    again = agentor("copy", str(source), *where)  # said again, never "already there"
    assert again.stdout.startswith("0 copied, 0 extended, 2 already there, 3 skipped (from ")
    assert sorted(store.list_runs()) == GOOD


def test_a_destination_entry_in_the_way_is_skipped_and_said(source: Path, tmp_path: Path) -> None:
    dst = tmp_path / "dst"
    (dst / f"{GOOD[0]}.jsonl").mkdir(parents=True)
    copied = agentor("copy", str(source), str(dst), "--run", GOOD[0], "--run", GOOD[1])
    assert copied.returncode == 0, copied.stderr
    assert copied.stdout.startswith("1 copied, 0 extended, 0 already there, 1 skipped (from ")
    assert copied.stderr.splitlines() == [
        f"agentor copy: skipped {GOOD[0]}: cannot be written in the destination (Is a directory)"
    ]
    assert (dst / f"{GOOD[0]}.jsonl").is_dir()


def test_a_file_of_random_bytes_is_skipped_as_unreadable_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    (src / f"{RANDOM_BYTES}.jsonl").write_bytes(os.urandom(20_000).replace(b"{", b"("))
    copied = agentor("copy", str(src), str(dst))
    assert copied.returncode == 0, copied.stderr
    assert copied.stdout.startswith("0 copied, 0 extended, 0 already there, 1 skipped (from ")
    [said] = copied.stderr.splitlines()
    assert said.startswith(f"agentor copy: skipped {RANDOM_BYTES}: unreadable in the source")
    assert os.listdir(dst) == []  # no 0-byte log made by taking its lock
