"""Retention: prune old runs, pin the ones to keep, delete one run.

`prune(store, older_than=..., keep_last=..., status=...)` removes whole runs (a FileStore also
their `.torn` leftovers and pins) and says, for every run it matched but kept, why:

- *held*: a live process holds it (running or resuming it); the store's lock says so, and the
  store holds the run itself while it deletes, so one taken meanwhile is kept too;
- *awaiting approval*: its last segment ended waiting for a person's decision;
- *pinned*: `pin(store, run_id)` marks it, outside its log;
- *has forks that are kept*: a kept run names it in `forked_from` (on a `fork` or `run_start`
  event); forks are removed before their parents, and a parent whose fork could not be removed
  is kept;
- *one of the newest*: `keep_last=N` keeps the N newest of the runs the status filter matches;
- *age unknown*: `older_than` was asked and its log records no time.

A run's age is the time since its last event (when it last did anything). Runs that match no
criterion are not mentioned. `dry_run=True` reports the same and touches nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta

from agentor.durations import parse_age as parse_age  # the one rule of ages (`ls --since`)
from agentor.engine.events import FORK, RUN_START, Event
from agentor.engine.history import event_time, status
from agentor.engine.statuses import (
    AWAITING_APPROVAL,
    COMPLETED,
    DIVERGED,
    FAILED,
    INCOMPLETE,
    INTERRUPTED,
    MAX_TURNS,
    RUNNING,
    live_status,
)
from agentor.engine.store.api import DeletingStore, LockingStore, Store
from agentor.engine.store.run_ids import validate_run_id
from agentor.errors import DeleteRefusedError, RunLockedError, RunNotFoundError

# Pins have their own module; retention's callers find them here too.
from agentor.ops.pins import is_pinned as is_pinned
from agentor.ops.pins import pin as pin
from agentor.ops.pins import pinned
from agentor.ops.pins import unpin as unpin

# Why a run was kept (`Kept.reason`); `Kept.detail` says it for people.
HELD = "held"
AWAITING = "awaiting_approval"
PINNED = "pinned"
HAS_KEPT_FORKS = "has_kept_forks"
NEWEST = "newest"
AGE_UNKNOWN = "age_unknown"
UNREADABLE = "unreadable"
NOT_DELETED = "not_deleted"
CHANGED = "changed"  # its log said otherwise once read under the store's hold

# What `status=` may name: the statuses the run list shows (`incomplete` is either of the two
# that follow from it: running or interrupted).
STATUSES = (
    COMPLETED,
    FAILED,
    MAX_TURNS,
    INTERRUPTED,
    RUNNING,
    AWAITING_APPROVAL,
    INCOMPLETE,
    DIVERGED,
)


def parse_statuses(value: str | Iterable[str]) -> frozenset[str]:
    """`status` as a set: "completed,failed" or an iterable of names from `STATUSES`."""
    names = value.split(",") if isinstance(value, str) else list(value)
    out = frozenset(n.strip() for n in names if isinstance(n, str) and n.strip())
    bad = sorted(out - set(STATUSES)) + [repr(n) for n in names if not isinstance(n, str)]
    if bad or not out:
        raise ValueError(
            f"unknown status {', '.join(bad) or repr(value)}: use one or more of "
            + ", ".join(STATUSES)
        )
    if INCOMPLETE in out:
        out = out | {RUNNING, INTERRUPTED}
    return out


@dataclass(frozen=True)
class RunFacts:
    """What retention reads from a run: its status as the list shows it, when it last did
    anything, and the runs it was forked from."""

    run_id: str
    status: str
    last_active: float | None
    parents: frozenset[str]
    holder: int | None = None  # the pid holding it, when held and it can be told
    held: bool = False


@dataclass(frozen=True)
class Removed:
    run_id: str
    status: str
    last_active: float | None


@dataclass(frozen=True)
class Kept:
    run_id: str
    reason: str  # HELD, AWAITING, PINNED, HAS_KEPT_FORKS, NEWEST, AGE_UNKNOWN, ...
    detail: str  # the reason for people: "held by process 4242"


@dataclass
class PruneReport:
    """What `prune` removed (or, with `dry_run`, would remove) and what it matched but kept."""

    removed: list[Removed] = field(default_factory=list)
    kept: list[Kept] = field(default_factory=list)
    dry_run: bool = False
    freed: int = 0  # bytes, where the store tells (a FileStore does)


def _deleting(store: Store) -> DeletingStore:
    if not isinstance(store, DeletingStore):
        raise TypeError(f"{store!r} cannot delete runs: it has no delete method")
    return store


# -- what a run is -------------------------------------------------------------------------------


def facts_of(store: Store, run_id: str, events: list[Event]) -> RunFacts:
    """A run's status as the list shows it (the log's, with running or interrupted from the
    store's lock), its last activity, and the runs it names in `forked_from`."""
    held = isinstance(store, LockingStore) and store.is_locked(run_id)
    holder = store.lock_holder(run_id) if held and isinstance(store, LockingStore) else None
    run_status = live_status(status(events), held)
    parents = frozenset(
        e.forked_from
        for e in events
        if e.type in (FORK, RUN_START) and e.forked_from and e.forked_from != run_id
    )
    return RunFacts(run_id, run_status, last_active(events), parents, holder, held)


def last_active(events: list[Event]) -> float | None:
    """When the run last did anything: its latest event time (None when it records none)."""
    times = [t for e in events if (t := event_time(e)) is not None and math.isfinite(t)]
    return max(times, default=None)


def _held_detail(pid: int | None) -> str:
    return f"held by process {pid}" if pid else "held by a live process"


def _protection(facts: RunFacts, pins: set[str]) -> Kept | None:
    """Why a run that matched must be kept whatever else is decided, if it must."""
    if facts.held:
        return Kept(facts.run_id, HELD, _held_detail(facts.holder))
    if facts.status == AWAITING_APPROVAL:
        return Kept(facts.run_id, AWAITING, "awaiting approval")
    if facts.run_id in pins:
        return Kept(facts.run_id, PINNED, "pinned")
    return None


# -- deleting one run ----------------------------------------------------------------------------


def delete_refusal(store: Store, run_id: str, run_status: str) -> DeleteRefusedError | None:
    """What `delete_run` would refuse now, asked before a person is asked to confirm: held by a
    live process (the store's lock), or awaiting approval (`run_status`, the status the caller
    read). None: nothing stands in the way now; `delete_run` still checks under the hold."""
    if isinstance(store, LockingStore) and store.is_locked(run_id):
        return DeleteRefusedError(run_id, HELD, _held_detail(store.lock_holder(run_id)))
    if run_status == AWAITING_APPROVAL:
        return _awaiting(run_id)
    return None


def _awaiting(run_id: str) -> DeleteRefusedError:
    return DeleteRefusedError(run_id, AWAITING, "awaiting approval")


def delete_run(store: Store, run_id: str) -> int | None:
    """Delete one run, as a person asked for it by name (pinned or not). Refused with
    `DeleteRefusedError` (its `reason` and `detail`) when a live process holds it or it is
    awaiting approval, as the log says under the store's hold. Returns the bytes freed, where
    the store tells; an unknown run is a `RunNotFoundError`."""
    deleting = _deleting(store)
    validate_run_id(run_id)

    def check(events: list[Event]) -> None:  # under the store's hold: held by nobody else
        if status(events) == AWAITING_APPROVAL:
            raise _awaiting(run_id)

    try:
        return deleting.delete(run_id, check)
    except RunLockedError as exc:
        raise DeleteRefusedError(run_id, HELD, _held_detail(exc.pid)) from None


# -- prune ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Criteria:
    statuses: frozenset[str] | None
    cutoff: float | None  # runs last active before this (epoch seconds) are old enough
    keep_last: int | None


def prune(
    store: Store,
    *,
    older_than: timedelta | str | None = None,
    keep_last: int | None = None,
    status: str | Iterable[str] | None = None,
    dry_run: bool = False,
    now: float | None = None,
) -> PruneReport:
    """Remove whole runs last active longer ago than `older_than` ("30d", "12h", "90m" or a
    timedelta), beyond the `keep_last` newest, of the statuses named (`status`, e.g.
    "completed,failed"); runs held, awaiting approval, pinned or with kept forks stay (see the
    module). At least one criterion is needed: prune never empties a store unasked. `now`
    (epoch seconds) is for tests. Each removal is checked again under the store's hold against
    what the log then says (a run active again meanwhile is kept)."""
    criteria = _criteria(older_than, keep_last, status, now)
    deleting = None if dry_run else _deleting(store)
    report = PruneReport(dry_run=dry_run)
    facts = _read_every_run(store, report)
    pins = pinned(store)
    doomed: dict[str, RunFacts] = {}
    for f in _matching(facts, criteria, report):
        kept = _protection(f, pins)
        if kept is not None:
            report.kept.append(kept)
        else:
            doomed[f.run_id] = f
    children: dict[str, set[str]] = {}
    for f in facts.values():
        for parent in f.parents:
            children.setdefault(parent, set()).add(f.run_id)
    gone: set[str] = set()
    for f in _children_first(doomed, children):
        alive = sorted(children.get(f.run_id, set()) - gone)
        if alive:
            report.kept.append(Kept(f.run_id, HAS_KEPT_FORKS, f"its fork {alive[0]} is kept"))
            continue
        if deleting is None or _delete_one(store, deleting, f, criteria, report):
            gone.add(f.run_id)
            report.removed.append(Removed(f.run_id, f.status, f.last_active))
    return report


def _criteria(
    older_than: timedelta | str | None,
    keep_last: int | None,
    status: str | Iterable[str] | None,
    now: float | None,
) -> _Criteria:
    if older_than is None and keep_last is None and status is None:
        raise ValueError(
            "say what to prune: older_than, keep_last or status (prune never empties a store "
            "unasked)"
        )
    if keep_last is not None and (
        not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 0
    ):
        raise ValueError(f"keep_last must be a whole number, 0 or more: {keep_last!r}")
    cutoff = None
    if older_than is not None:
        cutoff = (time.time() if now is None else now) - parse_age(older_than).total_seconds()
    statuses = parse_statuses(status) if status is not None else None
    return _Criteria(statuses, cutoff, keep_last)


def _words(exc: Exception) -> str:
    """Why, in words: an OSError's own text without its "[Errno 22]"."""
    return (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)


def _read_every_run(store: Store, report: PruneReport) -> dict[str, RunFacts]:
    facts: dict[str, RunFacts] = {}
    for run_id in store.list_runs():
        try:
            facts[run_id] = facts_of(store, run_id, store.load(run_id))
        except KeyError:
            continue  # removed since it was listed
        except (OSError, ValueError) as exc:
            report.kept.append(Kept(run_id, UNREADABLE, f"could not be read: {_words(exc)}"))
    return facts


def _matching(facts: dict[str, RunFacts], c: _Criteria, report: PruneReport) -> list[RunFacts]:
    """The runs the criteria select, before protections; those kept by `keep_last` or for an
    unknown age go to the report."""
    of_status = [f for f in facts.values() if c.statuses is None or f.status in c.statuses]
    # Newest first; runs with no time at all count as the oldest.
    of_status.sort(key=lambda f: (f.last_active is not None, f.last_active or 0.0), reverse=True)
    out = []
    for rank, f in enumerate(of_status):
        if c.cutoff is not None:
            if f.last_active is None:
                report.kept.append(Kept(f.run_id, AGE_UNKNOWN, "its log records no time"))
                continue
            if f.last_active >= c.cutoff:
                continue  # young enough: not a candidate, not mentioned
        if c.keep_last is not None and rank < c.keep_last:
            report.kept.append(Kept(f.run_id, NEWEST, f"one of the {c.keep_last} newest"))
            continue
        out.append(f)
    return out


def _children_first(doomed: dict[str, RunFacts], children: dict[str, set[str]]) -> list[RunFacts]:
    """The doomed runs, each after every doomed fork of it (oldest first where free): a parent
    is only removed once its forks are."""
    waiting = {r: len(children.get(r, set()) & doomed.keys()) for r in doomed}
    ready = sorted((r for r, n in waiting.items() if n == 0), key=lambda r: _age_key(doomed[r]))
    out: list[RunFacts] = []
    while ready:
        run_id = ready.pop(0)
        out.append(doomed[run_id])
        del waiting[run_id]
        for parent in sorted(doomed[run_id].parents & waiting.keys()):
            waiting[parent] -= 1
            if waiting[parent] == 0:
                ready.append(parent)
    # Forks naming each other in a loop (a hand-edited log): in any order.
    out.extend(doomed[r] for r in sorted(waiting, key=lambda r: _age_key(doomed[r])))
    return out


def _age_key(f: RunFacts) -> tuple[float, str]:
    return (f.last_active if f.last_active is not None else float("-inf"), f.run_id)


def _delete_one(
    store: Store, deleting: DeletingStore, f: RunFacts, c: _Criteria, report: PruneReport
) -> bool:
    """Delete a doomed run if its log, read under the store's hold, still says so."""

    def check(events: list[Event]) -> None:
        run_status = status(events)
        if run_status == AWAITING_APPROVAL:
            raise _awaiting(f.run_id)
        shown = live_status(run_status, held=False)  # we hold it: nobody else does
        if c.statuses is not None and shown not in c.statuses:
            raise DeleteRefusedError(f.run_id, CHANGED, f"it became {shown} meanwhile")
        last = last_active(events)
        if c.cutoff is not None and (last is None or last >= c.cutoff):
            raise DeleteRefusedError(f.run_id, CHANGED, "it was active again meanwhile")
        if f.run_id in pinned(store):
            raise DeleteRefusedError(f.run_id, PINNED, "pinned")

    try:
        freed = deleting.delete(f.run_id, check)
    except DeleteRefusedError as exc:
        report.kept.append(Kept(f.run_id, exc.reason, exc.detail))
        return False
    except RunLockedError as exc:
        report.kept.append(Kept(f.run_id, HELD, _held_detail(exc.pid)))
        return False
    except RunNotFoundError:
        return True  # removed by someone else meanwhile: gone all the same
    except OSError as exc:
        report.kept.append(Kept(f.run_id, NOT_DELETED, f"could not be deleted: {_words(exc)}"))
        return False
    report.freed += freed or 0
    return True
