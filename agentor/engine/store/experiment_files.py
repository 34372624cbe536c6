"""Experiments of a runs directory: one append-only JSON-lines file per experiment,
`.experiments/<id>.jsonl`, beside the logs (the `ExperimentStore` of `FileStore`).

Each record is one line, written with one `write` and fsynced before the call returns, so a
record is either whole or, cut by a crash, a last line without its newline that a read leaves
out (and the next append starts on a line of its own). The directory is hidden, so readers
listing run files never see it; as for logs and pins, nothing here follows a symlink.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Mapping

from agentor.engine.log.file_io import write_all
from agentor.engine.log.format import loads_line
from agentor.engine.store.run_ids import validate_run_id
from agentor.errors import ExperimentNotFoundError

EXPERIMENTS = ".experiments"
SUFFIX = ".jsonl"
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_experiments(dir_fd: int, create: bool) -> int | None:
    if create:
        try:
            os.mkdir(EXPERIMENTS, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            pass
    try:
        return os.open(EXPERIMENTS, _DIRECTORY_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise OSError(
                exc.errno,
                f"refusing to use {EXPERIMENTS}: it is not a directory (a symlink or a file)",
            ) from None
        raise


def append_record(dir_fd: int, experiment_id: str, record: Mapping[str, object]) -> None:
    """Append `record` to the experiment's file, durably."""
    name = validate_run_id(experiment_id) + SUFFIX
    data = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    folder = _open_experiments(dir_fd, create=True)
    assert folder is not None
    try:
        fd = os.open(
            name,
            os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=folder,
        )
    finally:
        os.close(folder)
    try:
        size = os.fstat(fd).st_size
        if size and _ends_torn(fd, size):
            data = b"\n" + data  # a crash cut the last record: start on a line of its own
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _ends_torn(fd: int, size: int) -> bool:
    return os.pread(fd, 1, size - 1) != b"\n"


def load_records(dir_fd: int, experiment_id: str, where: object) -> list[dict[str, object]]:
    """Every whole record of the experiment, in order (a cut or unreadable line left out)."""
    name = validate_run_id(experiment_id) + SUFFIX
    folder = _open_experiments(dir_fd, create=False)
    if folder is None:
        raise ExperimentNotFoundError(experiment_id, where)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        raise ExperimentNotFoundError(experiment_id, where) from None
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    records: list[dict[str, object]] = []
    for line in data.split(b"\n")[:-1]:  # the part after the last newline is cut: left out
        try:
            value = loads_line(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


def experiment_ids(dir_fd: int) -> list[str]:
    """Every experiment id in the directory, sorted."""
    folder = _open_experiments(dir_fd, create=False)
    if folder is None:
        return []
    try:
        names = os.listdir(folder)
    finally:
        os.close(folder)
    return sorted(n[: -len(SUFFIX)] for n in names if n.endswith(SUFFIX))
