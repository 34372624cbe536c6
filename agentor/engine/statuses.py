"""Every status a run can have, named once.

The engine derives a run's status from its log alone (`replay.status`: only the last segment
decides). Whoever can also see the run's lock (the TUI, the `agentor` command) tells an
incomplete run that a live process holds (*running*) from one nobody holds (*interrupted*).
A `run_end` may name a status this version does not know: it is shown as it is.
"""

from __future__ import annotations

# From the log.
COMPLETED = "completed"
FAILED = "failed"
MAX_TURNS = "max_turns"
AWAITING_APPROVAL = "awaiting_approval"  # paused at a gated tool call, until a person decides
INCOMPLETE = "incomplete"  # no run_end yet: running or interrupted, by the lock
# A replay (`novel="stop"`) ended at the first tool call its recording has no answer for: its
# run_end names the call; nothing ran, and a resume has nothing to do (agentor.forking).
DIVERGED = "diverged"

# From the log and the lock.
RUNNING = "running"
INTERRUPTED = "interrupted"
# Seen by a reader only: a file that is no readable log, and (the TUI's own) a resume in this
# process that was stopped and waits for a running tool before it lets the run go.
UNREADABLE = "unreadable"
STOPPING = "stopping"

# Ends a resume continues (a new segment, from where the run stopped).
RESUMABLE_ENDS = frozenset({FAILED, MAX_TURNS})


def live_status(status: str, held: bool, empty: bool = False) -> str:
    """A run's status as whoever can see its lock tells it: an incomplete run is *running*
    while a live process holds it (`held`), else *interrupted*; any other status as it is.

    `empty`: the run has no event yet (its log holds no whole line, its row no summary
    written): *running* while held (a run being created, before its first line lands), else
    *unreadable* (nothing to show or resume). The one rule every reader (the run sources,
    `agentor ls/show`, `agentor prune`) tells liveness by."""
    if empty:
        return RUNNING if held else UNREADABLE
    if status != INCOMPLETE:
        return status
    return RUNNING if held else INTERRUPTED
