"""Holding runs: session-level advisory locks on one dedicated connection per store.

Why a lock session, not a lease: a lease needs a heartbeat, and a holder whose heartbeat
thread outlives its work (or whose work outlives its heartbeat) is the classic split brain.
A session-level advisory lock is released by the server the moment the holder's session
ends: the process exits or is killed (its socket closes), its connection is cut
(`pg_terminate_backend`, a restart), or, for a host that vanished, when TCP keepalives give up
(`dsn.KEEPALIVE_*`: about 11 seconds). Nothing has to expire.

The lock key is two int4s: the schema's oid (so schemas in one database never collide) and the
run's `lock_key` (its row's identity). One session holds every run the store holds; appends
go through other connections, so they prove the hold instead: `take` gives each hold a new
token, and the append function refuses a writer whose token is no longer the run's, or whose
run nobody holds (agentor.engine.store.pg.schema). That is the fence: a writer that lost the run
cannot append.

PgBouncer: the lock session must be a real session. Behind transaction pooling, a session
lock is taken on whichever server connection served that transaction and stays there after the
client moves on: another client may then own it, and a crash frees nothing. Point the store at
the server or at a session-pooling PgBouncer.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg

from agentor.engine.store.file import LOCK_PATIENCE
from agentor.errors import RunLockedError, RunLostError

log = logging.getLogger("agentor")


@dataclass(frozen=True)
class Hold:
    """A run this process took: its lock key, the token its appends prove the hold with, and
    which lock session took it (a hold of an earlier, ended session is lost)."""

    run_id: str
    key: int
    token: uuid.UUID
    session: int


class Holds:
    """The runs this store holds, on its lock session (made when first needed, made again
    after it was lost: the runs it held are lost with it, and stay so)."""

    def __init__(
        self,
        connect: Callable[[], psycopg.Connection[Any]],
        take_sql: str,
        release_sql: str,
        taken_sql: str,
    ) -> None:
        self._connect = connect
        self._take_sql = take_sql
        self._release_sql = release_sql
        self._taken_sql = taken_sql  # notifies a take, after its commit
        self._conn: psycopg.Connection[Any] | None = None
        self._session = 0  # counts lock sessions: a Hold of an older one is lost
        self._held: dict[str, Hold] = {}
        self._mutex = threading.Lock()  # the lock session is used by one thread at a time
        self._host = socket.gethostname()

    def take(self, run_id: str) -> Hold:
        """Take the run, retrying for `LOCK_PATIENCE` (a reader's momentary probe, a holder just
        letting go); `RunLockedError` naming the holder if it stays taken."""
        deadline = time.monotonic() + LOCK_PATIENCE
        while True:
            with self._mutex:
                if run_id in self._held:
                    raise RunLockedError(run_id, os.getpid(), self._host)
                taken, key, token, pid, host = self._take(run_id)
                if taken:
                    hold = Hold(run_id, key, token, self._session)
                    self._held[run_id] = hold
                    return hold
            if time.monotonic() >= deadline:
                raise RunLockedError(run_id, pid, host)
            time.sleep(0.02)

    def _take(self, run_id: str) -> tuple[Any, ...]:
        params = (run_id, os.getpid(), self._host)
        for attempt in (1, 2):
            conn = self._session_conn()
            try:
                row: tuple[Any, ...] | None = conn.execute(self._take_sql, params).fetchone()
                assert row is not None  # a SELECT of a function: one row
                if row[0]:
                    announce(conn, self._taken_sql, (run_id, run_id))
                return row
            except psycopg.OperationalError:
                # A session that died since its last use (or with the take: its lock with it):
                # once more.
                self._end_session()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def release(self, hold: Hold) -> None:
        """Let the run go (when this session still holds it; a lost hold is only forgotten)."""
        with self._mutex:
            if self._is_current(hold):
                del self._held[hold.run_id]
            if hold.session != self._session or self._conn is None:
                return
            try:
                self._conn.execute(self._release_sql, (hold.key, hold.run_id, hold.run_id))
            except psycopg.OperationalError:
                self._end_session()  # the server freed every lock of the session with it

    def hold_of(self, run_id: str) -> Hold | None:
        """This store's hold on the run, if it took it; `RunLostError` if the session that took
        it has ended (its appends would be refused anyway: this says so without asking)."""
        with self._mutex:
            hold = self._held.get(run_id)
            if hold is not None and hold.session != self._session:
                raise RunLostError(run_id, "its database session ended")
            return hold

    def holds(self, run_id: str) -> bool:
        with self._mutex:
            return run_id in self._held

    def lost(self, hold: Hold) -> None:
        """The server refused a write of this hold: another session has the run now. Appends of
        this hold are refused from now on without asking (the hold is of no session)."""
        with self._mutex:
            if self._is_current(hold):
                self._held[hold.run_id] = Hold(hold.run_id, hold.key, hold.token, -1)

    def close(self) -> None:
        with self._mutex:
            self._end_session()

    def _is_current(self, hold: Hold) -> bool:
        """Whether `hold` (or its lost form) is this store's hold on its run now."""
        current = self._held.get(hold.run_id)
        return current is not None and current.token == hold.token

    def _session_conn(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._conn = self._connect()
        return self._conn

    def _end_session(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._session += 1


def announce(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...]) -> None:
    """Notify listeners of a change already committed, in a transaction of its own (`conn` is in
    autocommit). A notification the server refuses (its queue full) is only logged: the change
    is saved, and the feed's polling reports it all the same (agentor.engine.store.pg.feed). A lost
    connection is
    raised: what it means (a lock session gone, an append to confirm) is the caller's."""
    try:
        conn.execute(sql, params)
    except psycopg.OperationalError:
        raise
    except psycopg.Error as exc:
        log.warning("a change notification was not sent: %s", exc)


def write_and_announce(
    conn: psycopg.Connection[Any],
    sql: str,
    params: tuple[Any, ...],
    notify: str,
    about: tuple[Any, ...],
) -> Any:
    """Run `sql` (one statement that writes and commits: `conn` is in autocommit) and then
    `notify` in a transaction of its own, in one round trip: both are sent in pipeline mode with
    a Sync between them, so the write commits on its own (its commit waits for no notification
    lock, agentor.engine.store.pg.schema version 3) and the notification follows it. `notify` reads
    what it announces
    from the table (the run's last seq), so it is right whatever the write did. Returns the
    write's first column. The write's error is raised; the notification's only logged (the
    change is saved, and the feed's polling reports it all the same), unless the connection
    was lost."""
    cur = conn.cursor()
    try:
        with conn.pipeline() as pipe:
            cur.execute(sql, params)
            pipe._enqueue_sync()  # psycopg's own Sync, sent without waiting for it
            conn.execute(notify, about)
    except psycopg.OperationalError:
        raise
    except psycopg.Error as exc:
        if cur.pgresult is None or cur.pgresult.status != psycopg.pq.ExecStatus.TUPLES_OK:
            raise
        log.warning("a change notification was not sent: %s", exc)
    row = cur.fetchone()
    assert row is not None  # the write returns one row
    return row[0]
