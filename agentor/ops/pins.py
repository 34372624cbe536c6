"""Pins: the runs `prune` (agentor.ops.retention) always keeps, marked outside their logs by
the store (`PinningStore`: a FileStore's `.pins` directory, a PostgresStore's `pins` table)."""

from __future__ import annotations

from agentor.engine.store.api import PinningStore, Store
from agentor.engine.store.run_ids import validate_run_id


def pin(store: Store, run_id: str) -> bool:
    """Pin a run so that `prune` keeps it; False if it was pinned already. The run must exist
    (`RunNotFoundError`); its log is left as it is."""
    return _pinning(store).pin(validate_run_id(run_id))


def unpin(store: Store, run_id: str) -> bool:
    """Let `prune` remove the run again; False if it was not pinned."""
    return _pinning(store).unpin(validate_run_id(run_id))


def is_pinned(store: Store, run_id: str) -> bool:
    validate_run_id(run_id)
    return isinstance(store, PinningStore) and run_id in store.pinned()


def pinned(store: Store) -> set[str]:
    """Every pinned run (none, for a store that keeps no pins): one call for a whole list."""
    return store.pinned() if isinstance(store, PinningStore) else set()


def _pinning(store: Store) -> PinningStore:
    if not isinstance(store, PinningStore):
        raise TypeError(f"{store!r} keeps no pins: it has no pin, unpin and pinned methods")
    return store
