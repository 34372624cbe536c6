"""The file under a run log: opened safely, written whole, its torn tail repaired.

`FileStore` keeps the what (runs, locks, encoders); this is the how, one system call at a time.
Files are opened by name relative to a descriptor of the runs directory (`dir_fd`), never
following a symlink: `path` only names them in messages.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

from agentor.engine.log.format import BadLine, LogDecoder, LogEncoder, split_lines

log = logging.getLogger("agentor")

# Opening a log to read it: never through a symlink, and never hanging on a FIFO planted under
# a run's name (O_NONBLOCK). The TUI reads logs with the same flags.
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def open_log(dir_fd: int, path: Path) -> int:
    try:
        fd = os.open(
            path.name,
            os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dir_fd,
        )
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, f"refusing to write through a symlink: {path}") from None
        raise
    try:
        require_regular(fd, path)
    except OSError:
        os.close(fd)
        raise
    return fd


def open_to_read(dir_fd: int, path: Path) -> int:
    try:
        return os.open(path.name, READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, f"refusing to read {path}: it is a symlink") from None
        raise


def require_regular(fd: int, path: Path) -> None:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        raise OSError(errno.EINVAL, f"not a regular file: {path}")


def encoder_for(fd: int, size: int, compact: bool) -> LogEncoder:
    """An encoder that knows the generations in the first `size` bytes (whole lines) of a log."""
    encoder = LogEncoder(compact)
    if size:
        decoder = LogDecoder()
        for line in split_lines(os.pread(fd, size, 0))[0]:
            item = decoder.decode(line)
            if not isinstance(item, BadLine):
                encoder.follow(item)
    encoder.offset = size
    return encoder


def write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    if written == len(data):  # the rule for a regular file; the loop is for the exception
        return
    view = memoryview(data)[written:]
    while view:
        n = os.write(fd, view)
        view = view[n:]


def repair_tail(fd: int, path: Path, dir_fd: int) -> None:
    """If the log ends in a torn line, move that fragment aside so the file is JSONL again."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    end = size
    while True:
        start = max(0, end - 65536)
        cut = os.pread(fd, end - start, start).rfind(b"\n")
        if cut >= 0 or start == 0:
            keep = start + cut + 1 if cut >= 0 else 0
            break
        end = start
    fragment = os.pread(fd, size - keep, keep)
    if not isinstance(LogDecoder().decode(fragment + b"\n"), BadLine):
        # Only the newline is missing: `load` already counts this line as an event; keep it.
        write_all(fd, b"\n")
        return
    aside = path.with_name(path.name + ".torn")
    try:
        # Like the log itself: private, and never written through a symlink planted there.
        afd = os.open(
            aside.name,
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=dir_fd,
        )
        try:
            require_regular(afd, aside)
            write_all(afd, fragment + b"\n")
        finally:
            os.close(afd)
    except OSError as exc:
        log.warning("could not keep the torn line of %s in %s: %s", path, aside, exc)
    os.ftruncate(fd, keep)
    log.warning(
        "%s ended in a torn line (%d bytes); moved it to %s before appending",
        path,
        len(fragment),
        aside,
    )


def same_file(fd: int, dir_fd: int, name: str) -> bool:
    """Whether `name` in the directory still names the file open as `fd` (not removed, not
    replaced by another file since it was opened)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


def remove_log(fd: int, dir_fd: int, path: Path) -> int:
    """Remove a run's log, open (and locked) as `fd`, and its `.torn` leftovers; return the bytes
    freed. The `.torn` file goes first: a crash in between leaves the run whole, to be removed
    again, rather than a log without a run."""
    if not same_file(fd, dir_fd, path.name):
        raise OSError(errno.ESTALE, f"{path} was replaced while it was being deleted; kept")
    freed = os.fstat(fd).st_size
    aside = path.name + ".torn"
    try:
        st = os.stat(aside, dir_fd=dir_fd, follow_symlinks=False)
        os.unlink(aside, dir_fd=dir_fd)  # a symlink planted there is removed, never followed
        freed += st.st_size if stat.S_ISREG(st.st_mode) else 0
    except FileNotFoundError:
        pass
    os.unlink(path.name, dir_fd=dir_fd)
    return freed
