"""Pins of a runs directory: one empty marker file per pinned run, `.pins/<run id>`.

A pinned run is one retention keeps (agentor.ops.retention). Pins live beside the logs, never in
them, so pinning leaves a log's bytes as they were. A marker per run makes pinning and unpinning
single, atomic file operations: two processes pinning at once cannot lose each other's pin, as
they could rewriting one shared list. The directory is hidden, so readers that list run files
never see it. Like the logs, nothing here follows a symlink: `.pins` is opened relative to the
runs directory's descriptor, refusing a symlink in its place, and so is every marker.
"""

from __future__ import annotations

import errno
import os

PINS = ".pins"
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_pins(dir_fd: int, create: bool) -> int | None:
    """A descriptor of `.pins` in the runs directory; None when it is missing (and not made)."""
    if create:
        try:
            os.mkdir(PINS, 0o700, dir_fd=dir_fd)
        except FileExistsError:
            pass
    try:
        return os.open(PINS, _DIRECTORY_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise OSError(
                exc.errno, f"refusing to use {PINS}: it is not a directory (a symlink or a file)"
            ) from None
        raise


def add_pin(dir_fd: int, run_id: str) -> bool:
    """Pin `run_id` (a valid id); False if it was pinned already."""
    pins = _open_pins(dir_fd, create=True)
    assert pins is not None
    try:
        fd = os.open(
            run_id,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=pins,
        )
    except FileExistsError:
        return False
    finally:
        os.close(pins)
    os.close(fd)
    return True


def remove_pin(dir_fd: int, run_id: str) -> bool:
    """Unpin `run_id` (a valid id); False if it was not pinned."""
    pins = _open_pins(dir_fd, create=False)
    if pins is None:
        return False
    try:
        os.unlink(run_id, dir_fd=pins)  # unlink never follows a symlink: it removes the name
    except FileNotFoundError:
        return False
    finally:
        os.close(pins)
    return True


def pin_names(dir_fd: int) -> set[str]:
    """The names of every marker in `.pins` (the caller keeps those that are run ids)."""
    pins = _open_pins(dir_fd, create=False)
    if pins is None:
        return set()
    try:
        with os.scandir(pins) as it:
            return {entry.name for entry in it}
    finally:
        os.close(pins)
