"""`TellingStore`: the PostgreSQL store of a `PostgresSource`, telling when this process has
taken a run (`RunSource.resume_store`, `agentor.sources.telling`)."""

from __future__ import annotations

from typing import Any

from agentor.engine.store.pg.store import PostgresStore
from agentor.sources.telling import TellsWhenHeld


class TellingStore(TellsWhenHeld, PostgresStore):
    """The schema's store, telling each `resume_store` caller when this process has taken a
    run. One store serves the list, the resumes and the decisions of this app (one pool, one
    lock session): a run it holds is refused to a second taker here too (`RunLockedError`)."""

    def __init__(self, dsn: str, **kwargs: Any) -> None:
        super().__init__(dsn, **kwargs)
        self.held_hooks = []
