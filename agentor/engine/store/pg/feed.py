"""Which runs changed: LISTEN on the schema's channel, polling as the fallback.

Each append and each take of a run is followed by a `NOTIFY` with `run_id:seq` and nothing
else (a payload is limited to 8000 bytes, and data belongs in the tables), and a release
does one: the reader fetches what is new itself (`PostgresStore.read_events` from its last
seq, `list_summaries` for the row). The writer notifies in a statement of its own once its
write has committed (agentor.engine.store.pg.store says why); a notification is delivered to every
session
listening when that statement commits. So one is lost when the writer dies (or its
connection drops) between its commit and its notification, and for a session that is not
listening then: before it listened, or while its connection was down. So the feed also
polls: after every (re)connection, and every `poll_interval` seconds in case one was missed
all the same. Polling reads the runs written by transactions from a horizon on (the oldest
transaction still running at the previous poll, `changed_xid`, not indexed: a scan of
`runs`): a write that commits after a poll always has an xid at or after that poll's
horizon, so no change is missed, and few are reported twice.

Delivery is at least once: a run may be reported again with a seq already seen (the reader
compares), and a reported seq may be older than the run's newest (it reads on to the end).
A take or release is reported with the run's current seq: liveness changed, not the log.
A holder that died frees its runs with no write at all: `PostgresStore.held_runs` says which
runs are held now, and a list polls it (as the directory view re-probes its locks).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import psycopg

from agentor.engine.store.pg.dsn import one_line

POLL_INTERVAL = 5.0  # seconds between safety polls while notifications flow


class ChangeFeed:
    """`wait(timeout)` -> {run_id: seq} of the runs that changed since the last call.

    Not thread-safe: one reader (a TUI's watcher thread, a worker's loop). `error` says why the
    feed is not connected right now (None while it is); `wait` reconnects by itself.
    """

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        listen_sql: str,
        poll_sql: str,
        horizon_sql: str,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        self._connect = connect
        self._listen_sql = listen_sql
        self._poll_sql = poll_sql
        self.poll_interval = poll_interval
        self._conn: psycopg.Connection[Any] | None = None
        self.error: str | None = None
        self._last_poll = 0.0
        conn = self._open()
        # The starting point: changes committed from now on (listening already).
        horizon = conn.execute(horizon_sql).fetchone()
        assert horizon is not None  # a SELECT of a function: one row
        self._horizon: str = horizon[0]
        self._last_poll = time.monotonic()

    def wait(self, timeout: float) -> dict[str, int]:
        """Changes since the last call, waiting up to `timeout` seconds for the first one."""
        changes: dict[str, int] = {}
        deadline = time.monotonic() + timeout
        if self._conn is None and not self._reconnect(changes):
            time.sleep(max(0.0, deadline - time.monotonic()))
            return changes
        assert self._conn is not None
        try:
            if not changes:
                wait = max(0.0, min(deadline, self._last_poll + self.poll_interval))
                for note in self._conn.notifies(
                    timeout=max(0.0, wait - time.monotonic()), stop_after=1
                ):
                    _add(changes, note.payload)
            for note in self._conn.notifies(timeout=0.0):  # whatever else has arrived
                _add(changes, note.payload)
            if time.monotonic() >= self._last_poll + self.poll_interval:
                self._poll(changes)
        except psycopg.OperationalError as exc:
            self._drop(exc)
        return changes

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> ChangeFeed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._conn is not None

    def _open(self) -> psycopg.Connection[Any]:
        conn = self._connect()
        conn.execute(self._listen_sql)
        self._conn = conn
        self.error = None
        return conn

    def _reconnect(self, changes: dict[str, int]) -> bool:
        """Listen again, then poll from the old horizon: what was written while the feed was
        away is reported now."""
        try:
            self._open()
            self._poll(changes)
        except Exception as exc:  # a store error (one line) or the driver's
            self._drop(exc)
            return False
        return True

    def _poll(self, changes: dict[str, int]) -> None:
        assert self._conn is not None
        rows = self._conn.execute(self._poll_sql, (self._horizon,)).fetchall()
        for horizon, run_id, seq in rows:
            self._horizon = horizon
            if run_id is not None:
                changes[run_id] = max(seq, changes.get(run_id, seq))
        self._last_poll = time.monotonic()

    def _drop(self, exc: BaseException) -> None:
        self.error = one_line(str(exc)) or type(exc).__name__
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn = None


def _add(changes: dict[str, int], payload: str) -> None:
    run_id, _, seq = payload.rpartition(":")
    if run_id and seq.lstrip("-").isdigit():
        changes[run_id] = max(int(seq), changes.get(run_id, int(seq)))
