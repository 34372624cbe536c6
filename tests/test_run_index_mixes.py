"""The run index keeps every mix of rows the app may save: filled and priced, filled and
unpriced (a model no price is known for), quick rows not read whole yet, interrupted runs, rows
with a bad line, garbage named like a run, a directory named like a run. Saved and listed
again, every row of a file that has not changed comes from the index, as it was saved.

The app saves while it fills (`IndexSaver`), so an index holds some rows priced and some not:
a nested object (`RunRow.cost`, `LogTail.first_bad`) held by only some rows has columns shorter
than the table, and such a column of one repeated value was read back at the table's length
and the whole index refused ("column 'total' is missing or of another length").
"""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest

from agentor.sources.directory import source as directory_source
from agentor.sources.directory.rowread import TAIL_FIELDS
from agentor.sources.directory.source import DirectorySource
from agentor.sources.runrow import ROW_FIELDS
from tests.conftest import FIXTURES
from tests.test_run_index_file import index_file

COMPLETED = FIXTURES / "32e803417cab48f7a26fffcf902194d6.jsonl"  # gpt-4o-mini: priced
CRASHED = FIXTURES / "b9ba499c543548d886efde61e1f1c8e3.jsonl"  # no run_end: interrupted
# Read whole by the fill (priced or not), or left as quick rows; then what no fill changes.
FILLED = ("priced", "unpriced", "interrupted", "bad_line")
KINDS = (*FILLED, "quick", "garbage", "directory")
MIXES = [m for n in range(1, len(KINDS) + 1) for m in itertools.combinations(KINDS, n)]
COPIES = 2  # two rows of each kind: a column over one kind holds one value repeated


def make(kind: str, path: Path) -> None:
    if kind in ("priced", "quick"):
        shutil.copy(COMPLETED, path)
    elif kind == "unpriced":
        path.write_bytes(COMPLETED.read_bytes().replace(b"gpt-4o-mini", b"no-such-model-x1"))
    elif kind == "interrupted":
        shutil.copy(CRASHED, path)
    elif kind == "bad_line":
        path.write_bytes(COMPLETED.read_bytes() + b"\xff\xfe torn by a crash\n")
    elif kind == "garbage":
        path.write_bytes(bytes(range(256)) * 8)  # no newline-free text, no event
    elif kind == "directory":
        path.mkdir()


def run_id(kind: str, copy: int) -> str:
    return f"{KINDS.index(kind):02d}{copy}{'a' * 29}"


def directory_of(tmp_path: Path, mix: tuple[str, ...]) -> tuple[Path, list[Path]]:
    """The runs of `mix` in a new directory, and the paths of the quick ones (made aside)."""
    runs, aside = tmp_path / "runs", tmp_path / "aside"
    runs.mkdir()
    aside.mkdir()
    quick = []
    for kind, copy in itertools.product(mix, range(COPIES)):
        name = f"{run_id(kind, copy)}.jsonl"
        if kind == "quick":
            make(kind, aside / name)
            quick.append(aside / name)
        else:
            make(kind, runs / name)
    return runs, quick


@pytest.mark.parametrize("mix", MIXES, ids=["+".join(m) for m in MIXES])
def test_every_mix_of_rows_comes_back_from_the_index_as_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mix: tuple[str, ...]
) -> None:
    monkeypatch.setattr(directory_source, "TAIL_BYTES", 0)  # files added later: quick rows
    runs, quick = directory_of(tmp_path, mix)
    saving = DirectorySource(runs)
    saving.scan()
    saving.fill()  # every row so far read whole and priced
    for path in quick:  # then more arrive, listed quickly, not filled yet: a save mid-fill
        os.rename(path, runs / path.name)
    saving.refresh()
    assert sum(r.cost is None and r.summary is not None for r in saving.rows()) == len(quick)
    saving.save_index()

    warm = DirectorySource(runs)
    warm.scan()
    assert warm.index.problem is None and warm.index.path == index_file(runs)
    indexed = [r for r in saving.rows() if r.summary is not None]
    assert warm.from_index == len(indexed) == COPIES * len(set(mix) - {"directory"})
    assert warm.lines_decoded == 0
    assert warm.index_stale == ("directory" in mix)  # what is not indexed is read again
    if "directory" not in mix:
        assert warm.bytes_read == 0  # only what is not indexed is read again
    assert [r.run_id for r in warm.rows()] == [r.run_id for r in saving.rows()]
    for row in saving.rows():
        back = warm.get(row.run_id)
        assert back is not None
        for name in ROW_FIELDS:
            if name != "seen_free_at":  # when this listing saw the run free: now
                assert getattr(back, name) == getattr(row, name), (row.run_id, name)
        tail, back_tail = saving._tails[row.run_id], warm._tails[row.run_id]
        for name in (*TAIL_FIELDS, "path"):
            assert getattr(back_tail, name) == getattr(tail, name), (row.run_id, name)


def test_each_kind_of_row_is_the_kind_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(directory_source, "TAIL_BYTES", 0)
    runs, quick = directory_of(tmp_path, KINDS)
    source = DirectorySource(runs)
    source.scan()
    source.fill()
    for path in quick:
        os.rename(path, runs / path.name)
    source.refresh()
    rows = {kind: source.get(run_id(kind, 0)) for kind in KINDS}
    assert rows["priced"].cost.total > 0 and rows["priced"].cost.unpriced == 0
    assert rows["unpriced"].cost.total is None and rows["unpriced"].cost.unpriced > 0
    assert rows["interrupted"].status == "interrupted"
    assert rows["bad_line"].error.startswith("1 bad line")
    assert not rows["quick"].complete and rows["quick"].cost is None
    assert rows["garbage"].status == "unreadable" and rows["garbage"].summary is not None
    assert rows["directory"].status == "unreadable" and rows["directory"].summary is None


def test_the_reported_case_many_quick_rows_ten_filled(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    for k in range(400):  # more than SCAN_WHOLE_FILES: quick rows, as at 100,000
        shutil.copy(COMPLETED, runs / f"{k:032x}.jsonl")
    saving = DirectorySource(runs)
    saving.scan()
    assert len(saving.fill(max_rows=10)) == 10
    saving.save_index()
    warm = DirectorySource(runs)
    warm.scan()
    assert warm.index.problem is None
    assert warm.from_index == 400 and warm.bytes_read == 0
    assert sum(r.cost is not None for r in warm.rows()) == 10
