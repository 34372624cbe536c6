"""Each store backend against every store protocol it declares, checked by the type checker
(`make test` runs mypy over this file with `agentor` and `tui`): a method whose signature
drifts from `agentor.engine.store.api` fails the check, before any test runs. Never imported
at run time; `tests/test_store_suite.py` checks what the stores do (its `BACKENDS` declare the
same protocols per store, and a test there holds the two lists to each other).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentor.engine.store.api import (
        BatchStore,
        ClaimingStore,
        ClosingStore,
        DeletingStore,
        DirectoryStore,
        ExperimentStore,
        LineKeepingStore,
        LockingStore,
        LookupStore,
        PinningStore,
        SearchingStore,
        ServerStore,
        Store,
        TypeQueryStore,
    )
    from agentor.engine.store.file import FileStore
    from agentor.engine.store.memory import MemoryStore
    from agentor.engine.store.pg.store import PostgresStore

    Backend = FileStore | MemoryStore | PostgresStore

    # What every store is: one function a protocol, so a failure names the protocol (and mypy
    # the member).
    def as_store(store: Backend) -> Store:
        return store

    def as_batch_store(store: Backend) -> BatchStore:
        return store

    def as_locking_store(store: Backend) -> LockingStore:
        return store

    def as_deleting_store(store: Backend) -> DeletingStore:
        return store

    def as_pinning_store(store: Backend) -> PinningStore:
        return store

    def as_lookup_store(store: Backend) -> LookupStore:
        return store

    def as_experiment_store(store: Backend) -> ExperimentStore:
        return store

    # What some are.
    def as_line_keeping_store(store: FileStore | PostgresStore) -> LineKeepingStore:
        return store

    def as_directory_store(store: FileStore) -> DirectoryStore:
        return store

    def as_searching_store(store: PostgresStore) -> SearchingStore:
        return store

    def as_type_query_store(store: PostgresStore) -> TypeQueryStore:
        return store

    def as_claiming_store(store: PostgresStore) -> ClaimingStore:
        return store

    def as_server_store(store: PostgresStore) -> ServerStore:
        return store

    def as_closing_store(store: PostgresStore) -> ClosingStore:
        return store
