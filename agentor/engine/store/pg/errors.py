"""What a PostgresStore says when it cannot do its job: one line each, never a password.

`RunLockedError`, `RunLostError` and `RunNotFoundError` are the engine's own (engine/store.py):
every store raises them. These are about the database itself.
"""

from __future__ import annotations


class PostgresStoreError(RuntimeError):
    """The database cannot be used as a store. The message is one line, with no password."""


class StoreUnavailableError(PostgresStoreError):
    """A bad DSN, a server that cannot be reached, refused credentials, a missing database; or a
    connection lost in the middle of an operation."""


class SchemaVersionError(PostgresStoreError):
    """The schema was made by a newer agentor than this one: refused, nothing is changed."""


class MalformedDsnError(StoreUnavailableError):
    """A DSN libpq cannot parse: the caller's mistake (a command's usage error), not the
    server's."""


class SchemaNotFoundError(PostgresStoreError):
    """The schema holds no store and the store was opened to read (`create=False`): nothing
    was made. Only a writer makes a schema, so that a mistyped `--schema` creates none."""
