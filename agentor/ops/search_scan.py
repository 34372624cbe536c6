"""Which run logs hold a needle: the raw-byte prefilter of a search (agentor.ops.run_search), and
the second process that runs it over half of a big runs directory.

A search over a big directory starts this module's file as a script (`python -I FILE DIR
NEEDLE_HEX FOLD`) in a fresh interpreter, and writes to its standard input the names of the
logs it is to scan, one a line: it prints the name of each that holds the needle (lower-cased
first when FOLD is 1), one a line, and exits. The searching process scans the other names
meanwhile, then decodes only the logs printed. Being a script with only the standard library,
it starts in ~20 ms and imports nothing of the caller: not agentor, not the caller's main
module (as multiprocessing would).
"""

from __future__ import annotations

import os
import re
import stat
import sys

# A run log's name: a run id (agentor.engine.store.run_ids.RUN_ID_RE) and ".jsonl" (a test checks).
RUN_FILE = re.compile(r"[A-Za-z0-9_-]{1,128}\.jsonl")
FIRST = 64 << 10  # bytes of a log read at once: most logs are shorter (one read each)
CHUNK = 8 << 20  # longer logs are read on this many bytes at a time
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO cannot hang us


def run_files(dir_fd: int) -> list[str]:
    """Names of the run logs, in order. No stat per name: what is not a regular file is
    refused when opened or read (O_NOFOLLOW, a read error, a fstat)."""
    return sorted(filter(RUN_FILE.fullmatch, os.listdir(dir_fd)))


def holds(dir_fd: int, name: str, needle: bytes, fold: bool) -> bool:
    """Whether the log `name` holds `needle` anywhere (in its lower-cased bytes when `fold`),
    read in pieces that overlap by the needle's length less one."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return False  # removed since it was listed, a symlink, or not ours to read
    try:
        data = os.read(fd, FIRST)
        eof = len(data) < FIRST  # a short read of a regular file: its end (for now)
        if not eof and not stat.S_ISREG(os.fstat(fd).st_mode):
            return False  # a device planted under a run's name could be read forever
        keep = len(needle) - 1
        while True:
            if needle in (data.lower() if fold else data):
                return True
            if eof:
                return False
            more = os.read(fd, CHUNK)
            eof = len(more) < CHUNK
            data = (data[-keep:] if keep else b"") + more
    except OSError:
        return False  # not a file after all (a directory, a FIFO without a writer)
    finally:
        os.close(fd)


def open_directory(directory: str) -> int:
    """A descriptor of the runs directory, refusing a symlink in its place (as FileStore does:
    the path was resolved once, when the store or the search was made)."""
    return os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)


def main(argv: list[str]) -> int:
    directory, needle_hex, fold = argv[1:4]
    needle = bytes.fromhex(needle_hex)
    names = sys.stdin.buffer.read().decode("utf-8", "surrogateescape").split("\n")
    dir_fd = open_directory(directory)
    out = sys.stdout
    for name in names:
        if RUN_FILE.fullmatch(name) and holds(dir_fd, name, needle, fold == "1"):
            out.write(name + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
