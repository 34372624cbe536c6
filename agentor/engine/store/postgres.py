"""The PostgreSQL store: `PostgresStore(dsn, *, schema="agentor")`, for runs shared by many
processes on many machines (FileStore is the one-machine default).

Importing this module is cheap and needs no driver: psycopg (the optional extra,
`pip install 'agentor-tui[postgres]'`) is imported when `PostgresStore` is first named.
The store itself lives in `agentor.engine.store.pg` (schema, locks, change feed, rows).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from agentor.engine.store.pg.dsn import is_dsn, redact

if TYPE_CHECKING:
    from agentor.engine.store.file import FileStore
    from agentor.engine.store.pg.store import PostgresStore

__all__ = ["PostgresStore", "is_dsn", "open_store", "redact"]

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


def open_store(
    spec: str | os.PathLike[str], *, schema: str = "agentor"
) -> FileStore | PostgresStore:
    """The store a `--store` value names: a DSN (a `postgresql://` URL, or libpq's
    `key=value` pairs: `is_dsn`) is a PostgresStore (in `schema`), anything else a FileStore
    directory."""
    if isinstance(spec, str) and is_dsn(spec):
        store_class: type[PostgresStore] = __getattr__("PostgresStore")
        return store_class(spec, schema=schema)
    from agentor.engine.store.file import FileStore

    return FileStore(spec)
