"""One row of the run list (`RunRow`): what the screens show of a run, whatever its source.
The fields are described in `agentor.sources.source`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from agentor.engine.history import RunSummary
from agentor.engine.statuses import INCOMPLETE, INTERRUPTED, RUNNING, UNREADABLE
from agentor.ops.pricing import RunCost


@dataclass(slots=True, eq=False)
class RunRow:
    run_id: str
    summary: RunSummary | None = None
    status: str = UNREADABLE
    error: str | None = None
    complete: bool = False
    modified_at: float = 0.0  # when the run last changed (its log's mtime): sorts unstarted runs
    # A run seen free, then taken (by a resume, a worker): when it was last seen free, which is
    # when its holder began at the earliest. Until a resume records its first step the log
    # alone cannot tell when it began. None: not seen so (`rowread.settle`).
    held_since: float | None = None
    seen_free_at: float | None = None
    # A fork's lineage, from its own `fork` event (`agentor.sources.lineage`): the run it was forked
    # from, the line of that run it was forked at (None: the whole run), what was changed there
    # ("result edited", "model gpt-4o", ...). None for a run that is no fork.
    forked_from: str | None = None
    fork_at: int | None = None
    fork_edit: str | None = None
    # When the fork was made (its own `fork` event's time): a fork sorts by it, among the
    # newest when just made, not at the start its copy of the parent's events keeps.
    forked_at: float | None = None
    # What the run cost, every generation priced (`agentor.sources.rowcost`); None until the row is
    # read whole and priced (a quick row, a row being filled).
    cost: RunCost | None = None
    # Whether the run's latest turn asked a person to approve a call (an `approval_request`
    # after its latest `generation`), so that a listing reads for its waiting calls only the
    # logs that may hold some (`agentor.sources.listing.waiting_by_run`). None: not known (a
    # quick row; a database's row).
    asks_approval: bool | None = None

    @property
    def sort_key(self) -> float:
        """When the run began: a fork's when it was made, another run's its first start
        (none yet: when its log last changed)."""
        if self.forked_at is not None:
            return self.forked_at
        s = self.summary
        if s is not None and s.started_at is not None:
            return s.started_at
        return self.modified_at


# What a row read again takes over from the scratch row it was read into (a row the app may be
# drawing from another thread never shows a half-read summary).
ROW_FIELDS = tuple(f.name for f in fields(RunRow) if f.name not in ("run_id", "held_since"))


def may_be_live(row: RunRow) -> bool:
    """Whether the row's status depends on who holds the run (an incomplete or empty run)."""
    s = row.summary
    return s is not None and (s.events == 0 or s.status == INCOMPLETE)


def note_holder(row: RunRow, before: str, now: float) -> None:
    """Keep `held_since` as the row's status moves from `before` (every source does so after
    it asked who holds the run, at `now`): a run seen free and then taken is marked held since
    the last time it was seen free; it was taken after that, and a segment begun before it is
    not the holder's."""
    if row.status == INTERRUPTED:
        row.held_since, row.seen_free_at = None, now
    elif row.status != RUNNING:
        row.held_since = row.seen_free_at = None
    elif before == INTERRUPTED:
        row.held_since = row.seen_free_at


_RUN_ID, _SORT_KEY = attrgetter("run_id"), attrgetter("sort_key")


def newest_first(rows: list[RunRow]) -> list[RunRow]:
    """`rows` in the run list's order, sorted in place: newest first (`sort_key`), then by id,
    descending (`newest_order`, each row's start asked once; a tuple key a row takes three
    times as long over 100,000 rows)."""
    order = newest_order(list(map(_SORT_KEY, rows)), list(map(_RUN_ID, rows)))
    rows[:] = list(map(rows.__getitem__, order))
    return rows


def newest_order(keys: list[Any], ids: list[str]) -> list[int]:
    """The positions of rows of these sort keys and ids in the run list's order: newest first,
    then by id, descending. One sort by key when no two keys are equal (a listing that comes
    newest first is one run for it: a single pass); else by id, then by key (both stable)."""
    if len(set(keys)) < len(keys):  # rows that start at once: by id among them
        order = sorted(range(len(ids)), key=ids.__getitem__, reverse=True)
        order.sort(key=keys.__getitem__, reverse=True)
        return order
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=True)
