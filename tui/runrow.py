"""One row of the run list (`RunRow`) and how its status and error are told from its summary.

Never imports textual. The fields are described in `tui.runs`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

from agentor.engine.logformat import BadLine
from agentor.engine.replay import RunSummary

# Named once, in the engine; the app shows STOPPING over *running* while a resume it runs was
# stopped and waits for its tool threads to end (`tui.resume`).
from agentor.engine.statuses import (  # noqa: F401 - importable from here by the TUI
    INCOMPLETE,
    INTERRUPTED,
    RUNNING,
    STOPPING,
    UNREADABLE,
)
from agentor.engine.store import RUN_ID_RULE, SUFFIX


@dataclass(slots=True, eq=False)
class RunRow:
    run_id: str
    file: str  # the log's path as a string (`path` makes a Path of it on demand)
    summary: RunSummary | None = None
    status: str = UNREADABLE
    error: str | None = None
    complete: bool = False
    mtime: float = 0.0
    size: int = 0
    # Tailing state: where the next read starts (the end of the last whole line read), which
    # file that was, the line number there and the first bad line seen (for `error`).
    offset: int = field(default=0, repr=False)
    inode: int = field(default=0, repr=False)
    lineno: int = field(default=0, repr=False)
    first_bad: BadLine | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return Path(self.file)

    @property
    def sort_key(self) -> float:
        s = self.summary
        if s is not None and s.started_at is not None:
            return s.started_at
        return self.mtime


# What a re-read row takes over from a scratch row (see RunIndex._reload).
ROW_FIELDS = tuple(f.name for f in fields(RunRow) if f.name not in ("run_id", "file"))


def bad_name(row: RunRow) -> None:
    """A `*.jsonl` file whose name is no run id: the engine can neither load nor resume it,
    so it is not read; its row says why (`row.run_id` is the whole file name)."""
    stem = row.run_id[: -len(SUFFIX)]
    row.status, row.complete = UNREADABLE, True
    row.error = f"not a valid run id: {stem!r} ({RUN_ID_RULE})"
    with contextlib.suppress(OSError):
        st = os.lstat(row.file)
        row.mtime, row.size = st.st_mtime, st.st_size


def may_be_live(row: RunRow) -> bool:
    """Whether the row's status depends on the lock (an incomplete or empty run)."""
    s = row.summary
    return s is not None and (s.events == 0 or s.status == INCOMPLETE)


def settle(row: RunRow, locked: Callable[[str], bool]) -> None:
    """The row's status and error from its summary, plus the lock for incomplete runs.

    `locked(run_id)` asks the store whether a live process holds the run.
    """
    s = row.summary
    if s is None:
        row.status = UNREADABLE
        return
    bad = None
    if s.bad_lines and row.first_bad is not None:
        n = s.bad_lines
        fb = row.first_bad
        bad = f"{n} bad line{'s' if n != 1 else ''}; first at byte {fb.offset}: {fb.reason}"
    if s.events == 0:
        if bad:
            row.status, row.error = UNREADABLE, "no events: " + bad
        elif locked(row.run_id):
            row.status, row.error = RUNNING, None  # created by a starting run
        else:
            row.status = UNREADABLE
            row.error = "empty file" if row.size == 0 else "no complete line"
        return
    row.error = bad
    if s.status == INCOMPLETE:
        row.status = RUNNING if locked(row.run_id) else INTERRUPTED
    else:
        row.status = s.status
