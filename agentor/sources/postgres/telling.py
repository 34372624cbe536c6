"""`TellingStore`: the PostgreSQL store of a `PostgresSource`, telling when this process has
taken a run (`RunSource.resume_store`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from agentor.engine.store.pg.store import PostgresStore


class TellingStore(PostgresStore):
    """The schema's store, telling each `resume_store` caller when this process has taken a
    run. One store serves the list, the resumes and the decisions of this app (one pool, one
    lock session): a run it holds is refused to a second taker here too (`RunLockedError`)."""

    def __init__(self, dsn: str, **kwargs: Any) -> None:
        super().__init__(dsn, **kwargs)
        self.held_hooks: list[Callable[[str], None]] = []

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        with super().lock(run_id):
            for hook in list(self.held_hooks):
                hook(run_id)  # from the thread taking the run
            yield
