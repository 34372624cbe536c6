"""Taking a run from a store: its events (or its lines), and its lock.

Whoever changes a run holds its lock while it does (a `LockingStore`): a process running or
resuming it for as long as that takes, a person's decision for the moment it takes to read the
log and append one event. A store without a lock is used as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Iterator

from agentor.engine.events import Event
from agentor.engine.log.format import BadLine, skipped_lines
from agentor.engine.store.api import LineKeepingStore, LockingStore, Store
from agentor.errors import RunLockedError, RunNotFoundError, UnreadableRunError

# How long a decision waits for a run held by someone else before it is refused: long enough
# for other deciders (each holds the run for one read and one append), far shorter than a run.
DECISION_PATIENCE = 2.0


def load_run(store: Store, run_id: str) -> list[Event]:
    """A run's events; an unknown id is a `RunNotFoundError` naming the store (whatever the
    store raised: the protocol only asks for a KeyError)."""
    try:
        return store.load(run_id)
    except RunNotFoundError:
        raise
    except KeyError as exc:
        if exc.args != (run_id,):  # a store's own bug, not a missing run
            raise
        raise RunNotFoundError(run_id, store) from None


def load_if_any(store: Store, run_id: str) -> list[Event]:
    """A run's events, or [] when the store has no such run."""
    try:
        return store.load(run_id)
    except KeyError:
        return []


@contextlib.asynccontextmanager
async def holding(store: Store | None, run_id: str | None) -> AsyncIterator[None]:
    """Hold the run for a run or a resume (`RunLockedError` if someone else does). Taking the
    lock runs in a thread; a cancel while it is taken gives it back once it is."""
    if not isinstance(store, LockingStore) or run_id is None:
        yield
        return
    cm = store.lock(run_id)
    taking = asyncio.ensure_future(asyncio.to_thread(cm.__enter__))
    try:
        await asyncio.shield(taking)
    except asyncio.CancelledError:
        # The thread may still get the lock after we stop waiting: give it back then.
        taking.add_done_callback(
            lambda f: f.cancelled() or f.exception() or cm.__exit__(None, None, None)
        )
        raise
    try:
        yield
    finally:
        cm.__exit__(None, None, None)  # closing a descriptor: quick, and must not be skipped


@contextlib.contextmanager
def holding_briefly(store: Store, run_id: str, patience: float | None = None) -> Iterator[None]:
    """Hold the run for a short change (a decision), waiting up to `patience` seconds
    (`DECISION_PATIENCE`) for others making short changes; `RunLockedError` naming the holder
    after that."""
    if not isinstance(store, LockingStore):
        yield
        return
    deadline = time.monotonic() + (DECISION_PATIENCE if patience is None else patience)
    while True:
        cm = store.lock(run_id)
        try:
            cm.__enter__()
            break
        except RunLockedError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)
    try:
        yield
    finally:
        cm.__exit__(None, None, None)


def load_lines(store: Store, run_id: str) -> list[Event | BadLine]:
    """A run's lines in order, unreadable ones as `BadLine`s (line N is item N - 1: the
    numbering the TUI shows). A store that keeps no unreadable lines gives its events."""
    if not isinstance(store, LineKeepingStore):
        return list(load_run(store, run_id))
    try:
        events, bad = store.load_with_errors(run_id)
    except RunNotFoundError:
        raise
    except KeyError:
        raise RunNotFoundError(run_id, store) from None
    return _merged(events, bad)


def _merged(events: list[Event], bad: list[BadLine]) -> list[Event | BadLine]:
    """Events and bad lines back in the order of the file (bad lines know their number)."""
    out: list[Event | BadLine] = []
    rest = iter(events)
    for line in sorted(bad, key=lambda b: b.lineno):
        out.extend(itertools.islice(rest, max(0, line.lineno - 1 - len(out))))
        out.append(line)
    out.extend(rest)
    return out


def readable_lines(store: Store, run_id: str) -> list[Event | BadLine]:
    """Whether an entry named like a run is one: a directory or a symlink in a runs directory, a
    file of random bytes are none (a command that copies or pins runs refuses them). The run's
    lines in order (`load_lines`); `UnreadableRunError` when the entry cannot be
    opened as a log or holds lines and not one event; `RunNotFoundError` when there is none."""
    try:
        lines = load_lines(store, run_id)
    except OSError as exc:
        raise UnreadableRunError(run_id, exc.strerror or str(exc)) from None
    if lines and not any(isinstance(x, Event) for x in lines):
        bad = [x for x in lines if isinstance(x, BadLine)]
        raise UnreadableRunError(run_id, f"no event; {skipped_lines(bad)}")
    return lines
