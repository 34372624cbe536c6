"""Copying runs between stores (a directory and a database, either way): `copy_runs`.

Ids and events are kept: the destination loads what the source loads. A run being written in
the source (someone holds it) is skipped, so no half-written step is copied; a run held in the
destination is skipped too. Copying again is safe: a run already there is left alone, one whose
copy is a beginning of the source's (the source went on, or an earlier copy was cut short) gets
the rest, and one that differs is skipped and said so, never overwritten. An entry of the
source that is no readable log (a directory or a symlink named like a run, an empty file, a
file of no event at all) is skipped and said so, and nothing is written for it; the rest is
copied.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentor.engine.events import Event
from agentor.engine.log.format import LogEncoder
from agentor.engine.store.api import BatchStore, LockingStore, Store
from agentor.engine.store.holding import readable_lines
from agentor.engine.store.run_ids import validate_run_id
from agentor.errors import RunLockedError, UnreadableRunError

# Events written to the destination per append: a 100,000-event run is not one statement.
BATCH = 2000


@dataclass
class CopyReport:
    """What `copy_runs` did with each run."""

    copied: list[str] = field(default_factory=list)  # new in the destination
    extended: list[str] = field(default_factory=list)  # the destination had a beginning of it
    unchanged: list[str] = field(default_factory=list)  # already there, the same
    skipped: dict[str, str] = field(default_factory=dict)  # run id -> why

    def notices(self) -> list[str]:
        """One line per skipped run, for a command to print."""
        return [f"skipped {run_id}: {why}" for run_id, why in self.skipped.items()]

    def __str__(self) -> str:
        parts = [
            f"{len(self.copied)} copied",
            f"{len(self.extended)} extended",
            f"{len(self.unchanged)} already there",
            f"{len(self.skipped)} skipped",
        ]
        return ", ".join(parts)


def copy_runs(src: Store, dst: Store, run_ids: Iterable[str] | None = None) -> CopyReport:
    """Copy `run_ids` (default: every run of `src`) from `src` to `dst`; see the module."""
    report = CopyReport()
    ids = src.list_runs() if run_ids is None else [validate_run_id(r) for r in run_ids]
    for run_id in ids:
        why = _held(src, run_id, "being written in the source")
        if why is None:
            try:
                why = _copy_one(src, dst, run_id, report)
            except KeyError:
                why = "no such run in the source"
        if why is not None:
            report.skipped[run_id] = why
    return report


def _copy_one(src: Store, dst: Store, run_id: str, report: CopyReport) -> str | None:
    try:
        lines = readable_lines(src, run_id)
    except UnreadableRunError as exc:
        return f"unreadable in the source ({exc.reason})"
    if not lines:  # a log killed before its first line: no run to copy, and none is made
        return "empty in the source (no event): nothing to copy"
    events = [x for x in lines if isinstance(x, Event)]
    try:
        with _holding(dst, run_id):
            try:
                there = dst.load(run_id)
            except KeyError:
                there = None
            have = _lines(there or [])
            want = _lines(events)
            if there is not None and have == want:
                report.unchanged.append(run_id)
                return None
            if want[: len(have)] != have:
                return "the destination has a different run under this id (left as it is)"
            for start in range(len(have), len(events), BATCH):
                _append(dst, run_id, events[start : start + BATCH])
            (report.extended if have else report.copied).append(run_id)
    except RunLockedError as exc:
        return f"being written in the destination ({_holder(exc)})"
    except OSError as exc:  # a directory or a symlink there under the run's name
        return f"cannot be written in the destination ({exc.strerror or exc})"
    return None


def _held(store: Store, run_id: str, what: str) -> str | None:
    if isinstance(store, LockingStore) and store.is_locked(run_id):
        pid = store.lock_holder(run_id)
        return f"{what} (by process {pid})" if pid else what
    return None


def _holder(exc: RunLockedError) -> str:
    where = f" on {exc.host}" if exc.host else ""
    return f"by process {exc.pid}{where}" if exc.pid else "by another process"


def _holding(store: Store, run_id: str) -> contextlib.AbstractContextManager[None]:
    if isinstance(store, LockingStore):
        return store.lock(run_id)
    return contextlib.nullcontext()


def _append(store: Store, run_id: str, events: list[Event]) -> None:
    if isinstance(store, BatchStore):
        store.append_many(run_id, events)
    else:
        for e in events:
            store.append(run_id, e)


def _lines(events: list[Event]) -> list[bytes]:
    """Events as full-form lines: equal lines are equal events, field order included (and
    a NaN equals itself, as an event's `==` would not say)."""
    encoder = LogEncoder(compact=False)
    return [encoder.encode(e) for e in events]
