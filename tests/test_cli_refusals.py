"""The `agentor` command refuses what it cannot take in one line, with the exit status its
reference gives (1 a refusal, 2 a usage error), and writes nothing: an entry in a runs
directory that is no log (a directory, a symlink, a FIFO), a warning said once, a usage error
named after the subcommand, a destination that is a file, an empty log.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentor.engine.store.file import FileStore
from tests.test_agentor_command import agentor, awaiting_run, refused

RUN_ID = "a" * 32


def listing(directory: Path) -> list[tuple[str, int, int]]:
    """What a directory holds: each entry's name, kind (mode) and size, as lstat sees them."""
    return sorted((p.name, p.lstat().st_mode, p.lstat().st_size) for p in directory.rglob("*"))


# -- an entry named like a run that is no log ----------------------------------------------------


@pytest.mark.parametrize("kind", ["directory", "symlink", "fifo"])
def test_approve_and_reject_refuse_an_entry_that_is_no_log_in_one_line(
    tmp_path: Path, kind: str
) -> None:
    """A FIFO never blocks the command: nothing writes to it, and a read would wait forever."""
    runs = tmp_path / "runs"
    elsewhere = tmp_path / "elsewhere"
    real = awaiting_run(elsewhere)  # the symlink's target: a run a decision could be written to
    target = FileStore(elsewhere).path(real)
    runs.mkdir()
    entry = runs / f"{RUN_ID}.jsonl"
    if kind == "directory":
        entry.mkdir()
    elif kind == "symlink":
        entry.symlink_to(target)
    else:
        os.mkfifo(entry)
    before, target_bytes = listing(tmp_path), target.read_bytes()
    why = (
        f"refusing to read {entry}: it is a symlink"
        if kind == "symlink"
        else f"not a regular file: {entry}"
    )

    for command, extra in (("approve", ()), ("reject", ("--reason", "no"))):
        line = refused(agentor(command, RUN_ID, "--dir", str(runs), *extra))
        assert line == f"agentor {command}: run {RUN_ID} is unreadable ({why})"

    assert listing(tmp_path) == before
    assert target.read_bytes() == target_bytes
