"""Finding the runs a worker may take, and waking it when there may be new ones.

Two ways, by what the store offers (`agentor.engine.store.api`):

- `ClaimFinder` (a `ClaimingStore`, such as a PostgresStore): `claimable()`, one query per agent
  name (a database's over its runs table, held runs left out by the server's lock table);
  woken by the store's change feed (a database's `LISTEN`: a new run or a released one is seen
  within milliseconds, notifications lost while disconnected are caught up by the feed's
  polling).
- `ScanFinder` (any other store that locks runs, such as a FileStore): the store's runs, each
  log read again only when it changed (a `DirectoryStore`: its log's size and mtime), held ones
  left out by a lock probe (they are not read at all). A `DirectoryStore`'s directory is watched
  with watchfiles (inotify: a new or appended log wakes the worker within about 20 ms, 100 ms
  while many logs are being written); other stores are only polled.

Neither can see a holder die (a killed worker writes nothing; its lock just goes away), so the
worker also asks again every `poll_interval` seconds: a crashed run is picked up within that.

A worker with no free slot has no use for wakes, and each costs: every append of every run is
an inotify event for each worker's watch, a notification for each worker's feed. So a finder
rests while the worker is full (the watch at once; the feed once that has lasted `FEED_REST`,
as slots free and fill again all the time near a fleet's end); the worker looks as soon as a
slot frees.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from agentor.engine.events import RUN_START, Event
from agentor.engine.history import event_time
from agentor.engine.store.api import ClaimingStore, DirectoryStore, LockingStore, RunFeed, Store
from agentor.fleet.claims import Wanted

log = logging.getLogger("agentor")

Wake = Callable[[set[str] | None], None]  # the runs that changed, when known
WAKE_GAP = 0.02  # seconds: a burst of changes wakes the worker once per gap, not per change
WATCH_DEBOUNCE_MS, WATCH_STEP_MS = 100, 20  # watchfiles: latest yield in a burst, quiet wait
FEED_REST = 1.0  # seconds without a free slot after which a worker's change feed is closed


@dataclass(frozen=True)
class Candidate:
    """A run a worker may take, for the agent of `agent`'s name. `mark` is what the finder saw
    of the run: a run skipped once is not tried again until its mark changes."""

    run_id: str
    agent: str
    mark: object = None


class Finder(Protocol):
    how: str  # how it is woken, for the worker's first line

    def candidates(self, limit: int) -> list[Candidate]:
        """Up to `limit` free runs the worker may take, least recently touched first."""
        ...

    def watch(self, wake: Wake, stop: threading.Event, wanted: threading.Event) -> None:
        """Call `wake` when runs may have changed, until `stop` is set (in a thread). While
        `wanted` is clear (the worker has no free slot) the finder may rest: the worker looks
        anyway as soon as a slot frees."""
        ...


def finder_for(store: Store, wanted: Wanted) -> Finder:
    if isinstance(store, ClaimingStore):
        return ClaimFinder(store, wanted)
    if not isinstance(store, LockingStore):
        raise TypeError(f"a worker needs a store that locks runs; {store!r} does not")
    return ScanFinder(store, wanted)


class ClaimFinder:
    how = "LISTEN/NOTIFY"

    def __init__(self, store: ClaimingStore, wanted: Wanted) -> None:
        self.store = store
        self.wanted = wanted

    def candidates(self, limit: int) -> list[Candidate]:
        found = []
        for name in sorted(self.wanted.agents):
            ids = self.store.claimable(statuses=self.wanted.statuses, agents=[name], limit=limit)
            found += [Candidate(run_id, name) for run_id in ids]
        return found

    def watch(self, wake: Wake, stop: threading.Event, wanted: threading.Event) -> None:
        """Listen while `wanted`. Once the worker has had no free slot for `FEED_REST` seconds
        the feed is closed: its database session would still be woken by every append of
        every worker (each an interrupt, a read of the notification queue, a send). A new
        feed starts from then on: the worker looks at once when a slot frees anyway."""
        feed: RunFeed | None = None
        full_since: float | None = None
        try:
            while not stop.is_set():
                if not wanted.is_set():
                    now = time.monotonic()
                    full_since = now if full_since is None else full_since
                    if feed is not None and now - full_since >= FEED_REST:
                        feed.close()
                        feed = None
                    wanted.wait(0.25)
                    continue
                full_since = None
                if feed is None:
                    try:
                        feed = self.store.changes()
                    except Exception as exc:  # a store error, one line: try again soon
                        log.warning("the change feed cannot start: %s", exc)
                        stop.wait(1.0)
                        continue
                changed = feed.wait(0.25)
                if changed:
                    wake(set(changed))
                    stop.wait(WAKE_GAP)
        finally:
            if feed is not None:
                feed.close()


@dataclass(frozen=True)
class _Seen:
    mark: object
    why_not: str | None
    agent: str
    last_at: float


class ScanFinder:
    def __init__(self, store: LockingStore, wanted: Wanted) -> None:
        self.store = store
        self.wanted = wanted
        self.how = "watchfiles" if isinstance(store, DirectoryStore) else "polling"
        self._seen: dict[str, _Seen] = {}

    def candidates(self, limit: int) -> list[Candidate]:
        found: list[tuple[float, str, Candidate]] = []
        ids = self.store.list_runs()
        for gone in self._seen.keys() - set(ids):
            del self._seen[gone]
        for run_id in ids:
            seen = self._look(run_id)
            if seen is None or seen.why_not is not None or self.store.is_locked(run_id):
                continue
            found.append((seen.last_at, run_id, Candidate(run_id, seen.agent, seen.mark)))
        found.sort(key=lambda f: (f[0], f[1]))
        return [c for _, _, c in found[:limit]]

    def _look(self, run_id: str) -> _Seen | None:
        """What the run is, read again only when it changed; None while someone holds it."""
        mark = self._mark(run_id)
        seen = self._seen.get(run_id)
        if seen is not None and mark is not None and seen.mark == mark:
            return seen
        if self.store.is_locked(run_id):
            return None  # being written: read it once it is let go
        try:
            events: list[Event] = self.store.load(run_id)
        except (KeyError, OSError, ValueError):
            return None
        agent = next((e.agent for e in events if e.type == RUN_START and e.agent), "")
        times = [t for e in events[-3:] if (t := event_time(e)) is not None]
        seen = _Seen(mark, self.wanted.why_not(events), agent, max(times, default=0.0))
        if mark is not None:
            self._seen[run_id] = seen
        return seen

    def _mark(self, run_id: str) -> object:
        if not isinstance(self.store, DirectoryStore):
            return None
        try:
            st = os.stat(self.store.path(run_id), follow_symlinks=False)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns)

    def watch(self, wake: Wake, stop: threading.Event, wanted: threading.Event) -> None:
        """Watch the directory while `wanted`: every append of every run is an inotify event,
        ~100 us of the watch thread's CPU each (a fourth of a busy worker's CPU in
        bench/fleet.py); a worker with no free slot has no use for them."""
        store = self.store
        if not isinstance(store, DirectoryStore):
            stop.wait()
            return
        import watchfiles

        def is_log(change: Any, path: str) -> bool:
            return path.endswith(".jsonl")

        resting = _Either(stop, wanted)
        while not stop.is_set():
            if not wanted.is_set():
                resting.wait()  # until a slot frees, or stop
                continue
            try:
                for _ in watchfiles.watch(
                    store.directory,
                    watch_filter=is_log,
                    debounce=WATCH_DEBOUNCE_MS,
                    step=WATCH_STEP_MS,
                    stop_event=resting,
                    rust_timeout=500,
                    recursive=False,
                    raise_interrupt=False,
                ):
                    wake(None)
            except Exception as exc:  # the directory went away, inotify ran out: poll meanwhile
                log.warning("watching %s failed (%s): polling only", store.directory, exc)
                with contextlib.suppress(Exception):
                    stop.wait(5.0)


class _Either:
    """`stop` set, or `wanted` cleared: what ends a watch (watchfiles asks `is_set()`); `wait()`
    is for the other way round, until `wanted` is set again or `stop`."""

    def __init__(self, stop: threading.Event, wanted: threading.Event) -> None:
        self.stop = stop
        self.wanted = wanted

    def is_set(self) -> bool:
        return self.stop.is_set() or not self.wanted.is_set()

    def wait(self) -> None:
        while not self.stop.is_set() and not self.wanted.wait(0.25):
            pass
