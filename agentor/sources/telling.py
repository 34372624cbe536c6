"""`TellsWhenHeld`: what makes a backend's store say when this process has taken a run, for
`RunSource.resume_store`: a resume records nothing before its first step, so only the store's
lock can tell the run list, at once, that the run is running here.

Each backend's telling store is its store with this mixed in, first
(`agentor.sources.directory.telling`, `agentor.sources.postgres.telling`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import cast

from agentor.engine.store.api import LockingStore


class TellsWhenHeld:
    """Mixed into a `LockingStore` (before it): once `lock` holds a run, each of `held_hooks`
    is called with its id, from the thread that took it, before the holder goes on."""

    held_hooks: list[Callable[[str], None]]

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        # The store this is mixed into holds the lock (the next class in the MRO).
        with cast(LockingStore, super()).lock(run_id):
            for hook in list(self.held_hooks):
                hook(run_id)
            yield
