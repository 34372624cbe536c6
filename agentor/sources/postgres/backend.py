"""The PostgreSQL backend's entry in the registry (`agentor.backends`): a `--store` value that is
a DSN (a `postgresql://` URL, or libpq's `key=value` pairs: `is_dsn`) names a schema of a
database, its write store a PostgresStore and its read side a `PostgresSource`. The driver
(psycopg) is imported when one of them is opened; without it, an `ImportError` that says what to
install."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentor.engine.store.pg.dsn import is_dsn, redact, scrub, validate_schema
from agentor.errors import StoreSpecError

if TYPE_CHECKING:
    from agentor.engine.store.pg.store import PostgresStore
    from agentor.sources.postgres.source import PostgresSource

DEFAULT_SCHEMA = "agentor"
T = TypeVar("T")


class PostgresBackend:
    """Runs in a schema of a PostgreSQL database (see the registry for what each method
    promises)."""

    name = "postgresql"
    default_schema: str | None = DEFAULT_SCHEMA

    def names(self, spec: str | os.PathLike[str]) -> bool:
        return isinstance(spec, str) and is_dsn(spec)  # a path object is never a DSN

    def check_schema(self, spec: str, schema: str | None) -> None:
        if schema is not None:
            try:
                validate_schema(schema)
            except ValueError as exc:
                raise StoreSpecError(f"--schema: {exc}") from None

    def open_store(
        self,
        spec: str | os.PathLike[str],
        schema: str | None = None,
        *,
        create: bool = False,
        writer: bool = False,
        pool_size: int | None = None,
    ) -> PostgresStore:
        store_class = _with_driver(_store_class)
        options: dict[str, Any] = {} if pool_size is None else {"pool_size": pool_size}
        schema = schema or DEFAULT_SCHEMA
        return store_class(os.fspath(spec), schema=schema, create=create or writer, **options)

    def open_source(
        self, spec: str, schema: str | None = None, *, clock: Callable[[], float] = time.time
    ) -> PostgresSource:
        source_class = _with_driver(_source_class)
        return source_class(spec, schema=schema or DEFAULT_SCHEMA, clock=clock)

    def shown(self, spec: str) -> str:
        return redact(spec)

    def key(self, spec: str, schema: str | None) -> Hashable:
        return (self.name, spec, schema or DEFAULT_SCHEMA)

    def local_directory(self, spec: str) -> Path | None:
        return None

    def state_name(self, spec: str, schema: str | None) -> str:
        return f"{scrub(spec, spec)}\0{schema or DEFAULT_SCHEMA}"


def _store_class() -> type[PostgresStore]:
    from agentor.engine.store.pg.store import PostgresStore

    return PostgresStore


def _source_class() -> type[PostgresSource]:
    from agentor.sources.postgres.source import PostgresSource

    return PostgresSource


def _with_driver(load: Callable[[], T]) -> T:
    """What `load` imports; an `ImportError` saying what to install when psycopg is missing."""
    try:
        return load()
    except ImportError as exc:
        if exc.name is None or not exc.name.startswith("psycopg"):
            raise
        from agentor.engine.store.postgres import DRIVER_HINT

        raise ImportError(f"{DRIVER_HINT} ({exc})") from None


POSTGRES = PostgresBackend()
