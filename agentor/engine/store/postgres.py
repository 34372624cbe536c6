"""The PostgreSQL store: `PostgresStore(dsn, *, schema="agentor")`, for runs shared by many
processes on many machines (FileStore is the one-machine default).

Importing this module is cheap and needs no driver: psycopg (the optional extra,
`pip install 'agentor-tui[postgres]'`) is imported when `PostgresStore` is first named.
The store itself lives in `agentor.engine.store.pg` (schema, locks, change feed, rows); which
`--store` value names one is the registry's (`agentor.backends`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentor.engine.store.pg.dsn import redact

if TYPE_CHECKING:
    from agentor.engine.store.pg.store import PostgresStore

__all__ = ["PostgresStore", "redact"]

DRIVER_HINT = "PostgresStore needs psycopg: pip install 'agentor-tui[postgres]'"


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":
        try:
            from agentor.engine.store.pg.store import PostgresStore
        except ImportError as exc:
            if exc.name is None or not exc.name.startswith("psycopg"):
                raise
            raise ImportError(f"{DRIVER_HINT} ({exc})") from None
        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
