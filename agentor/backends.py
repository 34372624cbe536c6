"""The store backends, and the one place that tells them apart: a store spec (a `--store` value:
a directory path, a `postgresql://` URL or libpq's `key=value` pairs; or a path object) names a
backend (`backend_for`), which opens its write store (`store_named`, and `open_store`, the public
face) and its read side (`open_source`); the read side gives the store a resume in this process
writes to, telling the list once it holds a run (`RunSource.resume_store`, made with
`agentor.sources.telling`). Nobody else asks what kind of store a spec names; what a store
object can do is asked of the store API's protocols (`agentor.engine.store.api`).

Each backend is one package of the read side (`agentor.sources.directory`,
`agentor.sources.postgres`) holding its entry here (its `backend` module, a `Backend`), beside
its write store (`agentor.engine.store`). `BACKENDS` lists them in the order a spec is tried:
the first that `names` it is its backend, so the directory, which names any path, comes last.
Adding a backend is docs/backends.md.

Opening reads, and makes nothing unless asked: a directory must be there (FileStore would make
it), and a schema that holds no store is refused (`SchemaNotFoundError`) unless the caller writes
new runs (`writer`) or makes the store (`create`). What `store_named` and `open_source` raise,
every message one line and never a password; each caller says the refusal its own way:

- `StoreSpecError`: an option that cannot go with the spec (a schema given with a directory, a
  schema name PostgreSQL cannot take); `MalformedDsnError`: a DSN libpq cannot parse;
- `FileNotFoundError` / `NotADirectoryError`: the directory is missing / is something else;
  another `OSError`: it cannot be used (permissions);
- `ImportError`: the backend's driver is not installed (the message says what to install);
- `PostgresStoreError`: a database that cannot be used (`StoreUnavailableError`,
  `SchemaNotFoundError`, `SchemaVersionError`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from agentor.engine.store.api import Store
from agentor.sources.directory.backend import DIRECTORY
from agentor.sources.postgres.backend import POSTGRES

if TYPE_CHECKING:
    from agentor.engine.store.file import FileStore
    from agentor.engine.store.pg.store import PostgresStore
    from agentor.sources.source import RunSource


class Backend(Protocol):
    """One kind of store: how a spec names it, and how its stores and sources are opened."""

    name: str  # "directory", "postgresql"
    default_schema: str | None  # the schema a spec means when none is given; None: no schemas

    def names(self, spec: str | os.PathLike[str]) -> bool:
        """Whether `spec` names a store of this backend (by its form: nothing is opened)."""
        ...

    def check_schema(self, spec: str, schema: str | None) -> None:
        """`StoreSpecError` when `schema` cannot go with the store `spec` names (None: the
        default, always good)."""
        ...

    def open_store(
        self,
        spec: str | os.PathLike[str],
        schema: str | None = None,
        *,
        create: bool = False,
        writer: bool = False,
        pool_size: int | None = None,
    ) -> Store:
        """The write store (see the module for what it raises). `schema` is not checked here
        (`check_schema`); None: the default. `create`: make what is missing; `writer`: the
        caller writes new runs, and a backend may make what those need (a schema); `pool_size`:
        connections, for a backend that keeps some."""
        ...

    def open_source(
        self, spec: str, schema: str | None = None, *, clock: Callable[[], float] = time.time
    ) -> RunSource:
        """The read side, to read: nothing is made (see the module for what it raises)."""
        ...

    def shown(self, spec: str) -> str:
        """`spec` as it may be printed (a DSN without its password)."""
        ...

    def key(self, spec: str, schema: str | None) -> Hashable:
        """Which store `spec` and `schema` name: two specs with one key are one store."""
        ...

    def local_directory(self, spec: str) -> Path | None:
        """The local directory `spec` names (its runs' files are there, and a reader may keep
        its own files beside them), or None: the store is elsewhere (a server)."""
        ...

    def state_name(self, spec: str, schema: str | None) -> str:
        """The store named without secrets, always alike: what a reader that keeps its own
        files elsewhere (its user's state directory) names them after."""
        ...


# The order a spec is tried in: the directory names any path, so it comes last.
BACKENDS: tuple[Backend, ...] = (POSTGRES, DIRECTORY)


def backend_for(spec: str | os.PathLike[str]) -> Backend:
    """The backend `spec` names."""
    return next(b for b in BACKENDS if b.names(spec))


def check_schema(spec: str, schema: str | None) -> None:
    """`StoreSpecError` when `schema` cannot go with the store `spec` names: given with a
    directory, or no name PostgreSQL takes (None: the default, always good)."""
    backend_for(spec).check_schema(spec, schema)


def store_named(
    spec: str,
    schema: str | None = None,
    *,
    create: bool = False,
    writer: bool = False,
    pool_size: int | None = None,
) -> Store:
    """The write store `spec` names, `schema` checked first (see the module for what it
    raises); `create`, `writer`, `pool_size` as `Backend.open_store` takes them."""
    backend = backend_for(spec)
    backend.check_schema(spec, schema)
    return backend.open_store(spec, schema, create=create, writer=writer, pool_size=pool_size)


def open_source(
    spec: str, schema: str | None = None, *, clock: Callable[[], float] = time.time
) -> RunSource:
    """The source of the store `spec` names, to read (see the module for what it raises): a
    DSN's runs in `schema` (None: the default), or a directory's."""
    backend = backend_for(spec)
    backend.check_schema(spec, schema)
    return backend.open_source(spec, schema, clock=clock)


def open_store(
    spec: str | os.PathLike[str], *, schema: str = "agentor"
) -> FileStore | PostgresStore:
    """The store a `--store` value names: a DSN (a `postgresql://` URL, or libpq's
    `key=value` pairs: `is_dsn`) is a PostgresStore (in `schema`), anything else a FileStore
    directory."""
    store = backend_for(spec).open_store(spec, schema, create=True)
    return cast("FileStore | PostgresStore", store)  # what BACKENDS open


def same_store(a: str, a_schema: str | None, b: str, b_schema: str | None) -> bool:
    """Whether two specs (each with its schema) name one store."""
    backend = backend_for(a)
    return backend is backend_for(b) and backend.key(a, a_schema) == backend.key(b, b_schema)


def shown(spec: str) -> str:
    """`spec` as it may be printed (a DSN without its password)."""
    return backend_for(spec).shown(spec)
