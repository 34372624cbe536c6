"""The source a store's name gives, opened to read: `open_source(spec, schema)`, a
`DirectorySource` for a directory or a `PostgresSource` for a DSN (`pg.dsn.is_dsn`). Used by
`agentor-tui` and by the `agentor` commands that read (`ls`, `show`), so both list the same
rows.

Read-only: nothing is made. A directory must be there (FileStore would make it); a schema
that holds no store is refused (`SchemaNotFoundError`), never created: only a writer of runs
makes one, so that a mistyped `--schema` creates nothing. The database driver is imported only
for a DSN.

Each caller says the refusals its own way (its exit status, its words around the message);
what `open_source` raises, every message one line and never a password:

- `StoreSpecError`: `schema` given with a directory, or a schema name PostgreSQL cannot take;
- `FileNotFoundError` / `NotADirectoryError`: the directory is missing / is something else;
- `ImportError`: a DSN, and no database driver installed (`DRIVER_HINT` says what to install);
- what `PostgresStore` raises for a database it cannot use: `MalformedDsnError` (libpq cannot
  parse the DSN), `SchemaNotFoundError`, `SchemaVersionError`, `StoreUnavailableError`.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable

from agentor.engine.store.pg.dsn import is_dsn, validate_schema
from agentor.errors import StoreSpecError
from agentor.sources.source import RunSource

DEFAULT_SCHEMA = "agentor"


def open_source(
    spec: str, schema: str | None = None, *, clock: Callable[[], float] = time.time
) -> RunSource:
    """The source of the store `spec` names, to read (see the module for what it raises):
    a DSN's runs in `schema` (None: DEFAULT_SCHEMA), or a directory's."""
    check_schema(spec, schema)
    if is_dsn(spec):
        from agentor.sources.postgres.source import PostgresSource  # the driver, only now

        return PostgresSource(
            spec, schema=DEFAULT_SCHEMA if schema is None else schema, clock=clock
        )
    if not os.path.isdir(spec):
        if os.path.exists(spec):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", spec)
        raise FileNotFoundError(errno.ENOENT, "no such directory", spec)
    from agentor.sources.directory.source import DirectorySource

    return DirectorySource(spec, clock)


def check_schema(spec: str, schema: str | None) -> None:
    """`StoreSpecError` when `schema` cannot go with the store `spec` names: given with a
    directory, or no name PostgreSQL takes (None: the default, always good)."""
    if not is_dsn(spec):
        if schema is not None:
            raise StoreSpecError(f"--schema is for a PostgreSQL store; {spec} is a directory")
        return
    if schema is not None:
        try:
            validate_schema(schema)
        except ValueError as exc:
            raise StoreSpecError(f"--schema: {exc}") from None
