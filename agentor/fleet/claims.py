"""A worker's claim on a run, and the attempts whose worker died.

A worker claims a run by resuming it: the engine takes the run's lock, and that lock is the
claim (a `flock` for a FileStore, a session advisory lock for a PostgresStore), so two workers
never run one run. `ClaimingStore` wraps the store a worker's agents write to; once the lock
is taken it reads the run again and decides, while nobody else can change the run:

- the run is no longer the fleet's to run (finished, waiting for a decision, failed without
  `retry_failed`, given up, another agent's, nothing to resume, the worker is stopping):
  `_NotClaimed`, nothing written;
- `max_attempts` attempts at it died with their worker since it last ended a segment: a
  `run_end` (failed, "gave up after K attempts"), then `_GaveUp`: one poison run cannot take
  the fleet down;
- else a `claim` event (the worker, its pid and host, the attempt's number), and the resume
  goes on. If the hold ends without a `run_end` (the worker stopped the run at a turn's end,
  or the resume raised), a `release` event says so before the lock is let go.

Where the attempt count lives, and why: in the run's log, as those two events. A claim with
neither a `run_end` nor a `release` after it is an attempt whose worker died (killed, out of
memory, its host gone). The count is then written under the claim itself, so racing workers
cannot miscount; it is the same for every store (a FileStore has nowhere else to keep it, and
PostgreSQL's `runs.claims` counts every take of the lock, approvals, copies and resumes from the
TUI included, and cannot tell a crash from a clean stop); and it travels with the run
(`copy_runs`), where whoever reads the log sees which worker took the run when. A worker cut
off from the database (its run was taken over: `RunLostError`) cannot write its release, so
its attempt counts as one that died.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from agentor.engine.approval.pending import pending_calls
from agentor.engine.events import CLAIM, RELEASE, RUN_END, RUN_START, Event
from agentor.engine.history import last_run_end, status
from agentor.engine.statuses import (
    AWAITING_APPROVAL,
    COMPLETED,
    FAILED,
    INCOMPLETE,
    MAX_TURNS,
    RESUMABLE_ENDS,
)
from agentor.engine.store.api import BatchStore, LockingStore, Store
from agentor.errors import RunLockedError, RunLostError
from agentor.literal import literal_line

log = logging.getLogger("agentor")

MAX_ATTEMPTS = 3
GAVE_UP = "gave_up"  # the field of a run_end the fleet wrote when it gave up on the run
ATTEMPT = "attempt"  # the field of a claim: its number since the run last ended a segment


class _NotClaimed(Exception):
    """The worker took the run's lock, found the run not its to run, and let it go unwritten."""

    def __init__(self, run_id: str, why: str) -> None:
        self.run_id = run_id
        self.why = why
        super().__init__(f"run {run_id}: not claimed: {why}")


class _GaveUp(Exception):
    """The worker ended the run as failed: too many attempts at it died with their worker."""

    def __init__(self, run_id: str, error: str) -> None:
        self.run_id = run_id
        self.error = error
        super().__init__(f"run {run_id}: {error}")


@dataclass(frozen=True)
class Wanted:
    """Which runs a worker takes: of its agents' names, incomplete ones, ones whose every
    approval is decided, and failed / max_turns ones with `retry_failed`."""

    agents: frozenset[str]
    retry_failed: bool = False

    @property
    def statuses(self) -> tuple[str, ...]:
        """The log statuses of the runs it may take (`PostgresStore.claimable`'s)."""
        extra = (FAILED, MAX_TURNS) if self.retry_failed else ()
        return (INCOMPLETE, AWAITING_APPROVAL, *extra)

    def why_not(self, events: list[Event]) -> str | None:
        """Why the run these events describe is not for this worker; None if it is."""
        if not any(e.type == RUN_START and e.messages for e in events):
            return "nothing to resume: no prompt recorded"
        state = status(events)
        if state == COMPLETED:
            return "completed"
        if pending_calls(events):
            return "waiting for a decision on a tool call"
        end = last_run_end(events)
        if end is not None and end.extra.get(GAVE_UP) is not None:
            return f"given up: {end.error}"
        if state not in self.statuses:
            return state if state in RESUMABLE_ENDS else f"ended {state}"
        agent = next((e.agent for e in events if e.type == RUN_START and e.agent), None)
        if agent not in self.agents:
            return f"written by {agent or 'no agent'}, not by one of this worker's agents"
        return None


@dataclass(frozen=True)
class Attempts:
    """The attempts at a run since it last ended a segment: how many died with their worker,
    and the claim of the last of those (who, where)."""

    died: int
    last_died: Event | None


def attempts(events: Iterable[Event]) -> Attempts:
    """Count the claims that neither a `run_end` nor a `release` followed. Read under the
    run's lock: the claim still open at the end is one whose worker is gone too."""
    died, last, open_claim = 0, None, None
    for e in events:
        if e.type == CLAIM:
            if open_claim is not None:
                died, last = died + 1, open_claim
            open_claim = e
        elif e.type == RUN_END:
            died, last, open_claim = 0, None, None
        elif e.type == RELEASE:
            open_claim = None
    if open_claim is not None:
        died, last = died + 1, open_claim
    return Attempts(died, last)


def gave_up_error(tries: Attempts) -> str:
    where = ""
    if tries.last_died is not None:
        claim = tries.last_died
        where = f" (the last one by {claim.by or 'a worker'}, process {claim.pid} on {claim.host})"
    return f"gave up after {tries.died} attempts: each one's worker died while running it{where}"


@dataclass
class Claims:
    """What a worker's claims share: who it is, what it takes, when to give up, whether it is
    stopping; `on_claim(run_id, attempt)` is told of each claim (from the lock's thread)."""

    wanted: Wanted
    max_attempts: int = MAX_ATTEMPTS
    worker: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    stopping: threading.Event = field(default_factory=threading.Event)
    on_claim: Callable[[str, int], None] | None = None

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")

    def marker(self, kind: str, *, note: str | None = None, attempt: int | None = None) -> Event:
        """A claim or release event of this worker."""
        return Event(
            kind,
            by=self.worker,
            pid=os.getpid(),
            host=socket.gethostname(),
            note=note,
            ts=time.time(),
            extra={ATTEMPT: attempt} if attempt is not None else {},
        )


def marker_words(e: Event) -> str:
    """What a `claim` or `release` says, as `agentor show` and the TUI's timeline write it:
    `by w1 (process 26135 on vm), attempt 1`; `by w1 (process 26135 on vm): why it let go`.
    Every field comes from a log (a worker names itself): each is made literal here."""
    who = literal_line(e.by or "a worker", 80)
    pid = e.pid if e.pid is not None else "?"
    line = f"by {who} (process {pid} on {literal_line(e.host or '?', 80)})"
    if e.type == CLAIM:
        attempt = e.extra.get(ATTEMPT)
        return line if attempt is None else f"{line}, attempt {literal_line(str(attempt), 20)}"
    return f"{line}: {literal_line(e.note, 400)}" if e.note else line


class ClaimingStore:
    """The store a worker's agents write to: `store` itself, whose `lock` is a claim (see the
    module). Every other method is the wrapped store's."""

    def __init__(self, store: Store, claims: Claims) -> None:
        if not isinstance(store, LockingStore):
            raise TypeError(f"a worker needs a store that locks runs; {store!r} does not")
        self.store = store
        self.claims = claims
        self._ended: dict[str, bool] = {}  # runs claimed now -> whether a run_end was written
        self._mutex = threading.Lock()

    def __repr__(self) -> str:
        return repr(self.store)

    def append(self, run_id: str, event: Event) -> None:
        self.append_many(run_id, (event,))

    def append_many(self, run_id: str, events: Iterable[Event]) -> None:
        todo = list(events)
        if isinstance(self.store, BatchStore):
            self.store.append_many(run_id, todo)
        else:
            for e in todo:
                self.store.append(run_id, e)
        if any(e.type == RUN_END for e in todo):
            with self._mutex:
                if run_id in self._ended:
                    self._ended[run_id] = True

    def load(self, run_id: str) -> list[Event]:
        return self.store.load(run_id)

    def list_runs(self) -> list[str]:
        return self.store.list_runs()

    def is_locked(self, run_id: str) -> bool:
        return self.store.is_locked(run_id)

    def lock_holder(self, run_id: str) -> int | None:
        return self.store.lock_holder(run_id)

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        """Claim the run (see the module): `RunLockedError` at once when someone holds it (a
        plain lock would wait a moment first: another worker was simply quicker)."""
        store = self.store
        if store.is_locked(run_id):
            raise RunLockedError(run_id, store.lock_holder(run_id))
        with store.lock(run_id):
            attempt = self._claim(run_id)
            with self._mutex:
                self._ended[run_id] = False
            if self.claims.on_claim is not None:
                self.claims.on_claim(run_id, attempt)
            try:
                yield
            finally:
                with self._mutex:
                    ended = self._ended.pop(run_id)
                if not ended:
                    self._release(run_id)

    def _claim(self, run_id: str) -> int:
        """Under the lock: the attempt's number, its claim written; or refuse (see the module)."""
        try:
            events = self.store.load(run_id)
        except KeyError:
            raise _NotClaimed(run_id, "no such run") from None
        if self.claims.stopping.is_set():
            raise _NotClaimed(run_id, "this worker is stopping")
        why = self.claims.wanted.why_not(events)
        if why is not None:
            raise _NotClaimed(run_id, why)
        tries = attempts(events)
        if tries.died >= self.claims.max_attempts:
            error = gave_up_error(tries)
            end = Event(RUN_END, status=FAILED, error=error, ended_at=time.time())
            end.extra[GAVE_UP] = tries.died
            end.by = self.claims.worker
            self.store.append(run_id, end)
            raise _GaveUp(run_id, error)
        attempt = tries.died + 1
        self.store.append(run_id, self.claims.marker(CLAIM, attempt=attempt))
        return attempt

    def _release(self, run_id: str) -> None:
        # The engine ends its hold with no word of why (a lock's exit gets no exception).
        if self.claims.stopping.is_set():
            note = "the worker is stopping: it let the run go"
        else:
            note = "the resume ended without ending the run (the worker's output says why)"
        try:
            self.store.append(run_id, self.claims.marker(RELEASE, note=note))
        except RunLostError:
            pass  # another worker has the run: this attempt counts as one that died
        except Exception as exc:  # the run is let go all the same; it counts as died
            log.warning("run %s: could not record its release: %s", run_id, exc)
