"""Exclusive `flock` on a run's log: take it patiently, and tell who holds it.

The kernel frees a flock when its holder dies, which is what lets a crashed run be resumed at
once and lets a reader tell *running* from *interrupted*.
"""

from __future__ import annotations

import fcntl
import os
import time


def take_exclusive(fd: int, patience: float) -> bool:
    """Try for `patience` seconds; False if someone else still holds it."""
    deadline = time.monotonic() + patience
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def holder(st: os.stat_result) -> int | None:
    """The pid of the exclusive flock holder of the file `st` describes, read from /proc/locks
    (Linux)."""
    try:
        with open("/proc/locks") as f:
            table = f.read()
    except OSError:
        return None
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for row in table.splitlines():
        parts = row.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; blocked waiters have "->".
        if "->" in parts or len(parts) < 6:
            continue
        if parts[1] == "FLOCK" and parts[3] == "WRITE" and parts[5] == ident:
            try:
                return int(parts[4])
            except ValueError:
                return None
    return None
