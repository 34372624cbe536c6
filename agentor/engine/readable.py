"""Whether a run's log can be read as a run at all: `readable_lines`. A store entry named like a
run may be none (a directory or a symlink in a runs directory, a file of random bytes): a
command that copies or pins a run refuses such an entry, in one line, and writes nothing for it.
A log with some bad lines among its events is a run (the bad lines are skipped, as `load`
does); an empty log is a run just being started.
"""

from __future__ import annotations

from agentor.engine.events import Event
from agentor.engine.log.format import BadLine, skipped_lines
from agentor.engine.store.api import Store
from agentor.engine.store.holding import load_lines


class UnreadableRunError(ValueError):
    """The store holds an entry under this run id that cannot be read as a run; `reason` says
    why ("not a regular file: ...", "no event; skipped 81 bad lines; ...")."""

    def __init__(self, run_id: str, reason: str) -> None:
        super().__init__(f"run {run_id} is unreadable ({reason})")
        self.run_id = run_id
        self.reason = reason


def readable_lines(store: Store, run_id: str) -> list[Event | BadLine]:
    """The run's lines in order (`load_lines`); `UnreadableRunError` when the entry cannot be
    opened as a log or holds lines and not one event; `RunNotFoundError` when there is none."""
    try:
        lines = load_lines(store, run_id)
    except OSError as exc:
        raise UnreadableRunError(run_id, exc.strerror or str(exc)) from None
    if lines and not any(isinstance(x, Event) for x in lines):
        bad = [x for x in lines if isinstance(x, BadLine)]
        raise UnreadableRunError(run_id, f"no event; {skipped_lines(bad)}")
    return lines
