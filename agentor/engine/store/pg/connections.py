"""Connections to the store's database: made with its settings, their failures said in one line.

Every connection is in autocommit: each statement is its own transaction, committed when it
returns (an append is one statement). `connect` makes a dedicated one (the lock session, the
change feed); `make_pool` the pool that appends and reads go through.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import psycopg
from psycopg import conninfo
from psycopg_pool import ConnectionPool

from agentor.engine.store.pg.dsn import (
    KEEPALIVE_COUNT,
    KEEPALIVE_IDLE,
    KEEPALIVE_INTERVAL,
    bad_option,
    connect_options,
    redact,
    scrub,
)
from agentor.errors import MalformedDsnError, PostgresStoreError, StoreUnavailableError

T = TypeVar("T")
POOL_TIMEOUT = 10.0  # seconds an operation waits for a pooled connection before failing


def parse(dsn: str) -> dict[str, Any]:
    """The DSN's parameters; a DSN libpq cannot parse is a one-line error (no password)."""
    if not isinstance(dsn, str):
        raise TypeError(f"a DSN is a str, not {type(dsn).__name__}")
    try:
        params = conninfo.conninfo_to_dict(dsn)
    except psycopg.Error as exc:
        raise MalformedDsnError(
            f"not a valid PostgreSQL DSN ({redact(dsn)}): {scrub(exc, dsn)}"
        ) from None
    why = bad_option(params)
    if why is not None:
        raise MalformedDsnError(f"not a valid PostgreSQL DSN ({redact(dsn)}): {why}")
    return params


def connect(dsn: str, role: str, *, watched: bool = False) -> psycopg.Connection[Any]:
    """A dedicated connection. `watched`: the server probes the client too (TCP keepalives),
    so that a session whose host vanished ends, and its locks with it, within seconds."""
    params = parse(dsn)
    with failures(dsn, "cannot connect to"):
        conn = psycopg.connect(dsn, autocommit=True, **connect_options(params, role))
        if watched:
            conn.execute(
                f"SET tcp_keepalives_idle = {KEEPALIVE_IDLE};"
                f" SET tcp_keepalives_interval = {KEEPALIVE_INTERVAL};"
                f" SET tcp_keepalives_count = {KEEPALIVE_COUNT}"
            )
        return conn


def make_pool(dsn: str, role: str, size: int, timeout: float = POOL_TIMEOUT) -> ConnectionPool[Any]:
    params = parse(dsn)
    kwargs = {"autocommit": True, **connect_options(params, role)}
    pool = ConnectionPool(
        dsn,
        kwargs=kwargs,
        min_size=1,
        max_size=size,
        timeout=timeout,
        name=f"agentor {role}",
        open=False,
    )
    with failures(dsn, "cannot connect to"):
        pool.open(wait=True, timeout=POOL_TIMEOUT)
    return pool


@contextlib.contextmanager
def failures(dsn: str, doing: str) -> Iterator[None]:
    """Database failures as one-line store errors (`store_error`); errors the store raises on
    purpose pass through."""
    try:
        yield
    except psycopg.Error as exc:
        raise store_error(dsn, doing, exc) from None


def store_error(dsn: str, doing: str, exc: psycopg.Error) -> PostgresStoreError:
    """A database failure said in one line naming the database, never its password: a lost or
    refused connection (a pool timeout too) is a `StoreUnavailableError`, anything else a
    `PostgresStoreError`."""
    kind = StoreUnavailableError if isinstance(exc, psycopg.OperationalError) else None
    return (kind or PostgresStoreError)(f"{doing} {redact(dsn)}: {scrub(exc, dsn)}")


def read(pool: ConnectionPool[Any], dsn: str, doing: str, work: Callable[[Any], T]) -> T:
    """`work(connection)` for a read: tried again once on a fresh connection when the first
    was dead (a server restart, a cut connection: the pool checks and replaces its idle ones),
    then a one-line store error."""
    try:
        try:
            with pool.connection() as conn:
                return work(conn)
        except psycopg.OperationalError:
            pool.check()
            with pool.connection() as conn:
                return work(conn)
    except psycopg.Error as exc:
        raise store_error(dsn, doing, exc) from None
