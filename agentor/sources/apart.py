"""Work done in a forked process beside this one, on another core: what a one-shot reader
(`agentor ls`) may hand off when the machine has cores to spare (`forkable`).

A fork copies only the thread that makes it: none is made while another thread runs (a lock one
holds would stay held in the copy), nor where `os.fork` does not exist or is not safe to use
without an `exec` (macOS: its system libraries), nor when this process may run on one CPU alone
(the two would take turns). The forked process never returns to its
caller's code: it ends (`os._exit`) once its work is done, whatever happens (no `atexit`, no
buffer flushed twice).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass


def cpus() -> int:
    """The CPUs this process may run on."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13
    if count is not None:
        return int(count() or 1)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def forkable() -> bool:
    """Whether work may be forked off now: `os.fork` exists (not on macOS), no other thread
    runs, and this process may use more than one CPU."""
    if not hasattr(os, "fork") or sys.platform == "darwin":
        return False
    return threading.active_count() == 1 and cpus() > 1


def fork_off(work: Callable[[], None]) -> int | None:
    """Run `work` in a forked process, which then ends (status 0 when `work` returned, 1 when
    it raised); its pid, or None when none could be forked (this process does the work then)."""
    try:
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)
    return pid


@dataclass
class Apart:
    """A forked process doing work for this one (`fork_off`)."""

    pid: int

    def wait(self) -> bool:
        """Wait for it to end: whether its work was done (it returned)."""
        _, status = os.waitpid(self.pid, 0)
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
