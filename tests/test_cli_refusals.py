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
        assert line == f"agentor {command}: cannot read run {RUN_ID}: {why}"

    assert listing(tmp_path) == before
    assert target.read_bytes() == target_bytes


# -- wording and exit statuses ---------------------------------------------------------------------


def test_a_decision_on_a_log_with_bad_lines_warns_of_them_once(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_id = awaiting_run(runs)
    with FileStore(runs).path(run_id).open("ab") as log:
        log.write(b"\xff\xfe not a line of JSON\n" * 3)

    proc = agentor("approve", run_id, "--dir", str(runs), "--by", "alice")

    assert proc.returncode == 0, proc.stderr
    [warning] = proc.stderr.splitlines()
    assert warning.startswith(f"run {run_id}: skipped 3 bad lines; the first: line 8 (byte ")
    assert proc.stdout.splitlines()[0].startswith("approved ")


def test_an_unknown_option_is_blamed_on_the_subcommand(tmp_path: Path) -> None:
    assert refused(agentor("approve", "--json", "X"), 2) == (
        "agentor approve: error: unrecognized arguments: --json (see agentor approve --help)"
    )
    assert refused(agentor("search", str(tmp_path), "Lisbon", "-x"), 2) == (
        "agentor search: error: unrecognized arguments: -x (see agentor search --help)"
    )


def test_submit_under_an_id_taken_by_another_input_says_what_to_do_in_commands(
    tmp_path: Path,
) -> None:
    (tmp_path / "runs").mkdir()
    store = ("--store", str(tmp_path / "runs"), "--agent", "tests/approvalkit.py:make_agent")
    made = agentor("submit", "Book Rome", *store, "--run-id", "job-7")
    assert (made.returncode, made.stdout) == (0, "job-7\n"), made.stderr
    size = (tmp_path / "runs" / "job-7.jsonl").stat().st_size

    line = refused(agentor("submit", "Book Oslo", *store, "--run-id", "job-7"))

    assert line == (
        "agentor submit: run job-7 exists and was started with a different input: "
        "agentor resume job-7 --agent SPEC continues it, or give another --run-id"
    )
    assert (tmp_path / "runs" / "job-7.jsonl").stat().st_size == size


def test_copy_into_a_file_says_it_is_not_a_directory(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    awaiting_run(runs)
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")

    line = refused(agentor("copy", str(runs), str(a_file)))

    assert line == f"agentor copy: not a directory: {a_file}"
    assert a_file.read_text() == "mine\n"


def test_prune_says_why_an_entry_could_not_be_read_in_words(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    entry = runs / f"{RUN_ID}.jsonl"
    entry.mkdir()

    proc = agentor("prune", str(runs), "--older-than", "0s")

    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0].split() == [
        "kept",
        RUN_ID,
        "could",
        "not",
        "be",
        "read:",
        "not",
        "a",
        "regular",
        "file:",
        str(entry),
    ]
    assert "[Errno" not in proc.stdout + proc.stderr
    assert refused(agentor("prune", str(runs), "--older-than", "999999999999d"), 2) == (
        "agentor prune: error: an age too long: '999999999999d'; at most 999999999d"
    )
    assert entry.is_dir()


def test_a_dsn_libpq_parses_but_would_refuse_is_a_usage_error(tmp_path: Path) -> None:
    """libpq reads `postgresql://:::bad` as port '::bad' and refuses it only on connecting."""
    for dsn, why in (
        ("postgresql://:::bad", "invalid integer value '::bad' for connection option 'port'"),
        ("host=127.0.0.1 port=99999", "invalid port number '99999'"),
    ):
        line = refused(agentor("ls", dsn, cwd=tmp_path), 2)
        assert line == f"agentor ls: error: not a valid PostgreSQL DSN ({dsn}): {why}"


def test_copy_skips_an_empty_log_with_a_line_and_writes_nothing(tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    (src / f"{RUN_ID}.jsonl").touch()  # a log killed before its first line

    proc = agentor("copy", str(src), str(dst))

    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"agentor copy: skipped {RUN_ID}: empty in the source (no event): nothing to copy"
    ]
    assert proc.stdout == (
        f"0 copied, 0 extended, 0 already there, 1 skipped (from {src} to {dst})\n"
    )
    assert list(dst.iterdir()) == []
