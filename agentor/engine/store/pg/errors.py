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
