"""What a run list, a live view and a worker fleet read from a PostgresStore.

A mixin of `PostgresStore` (agentor.engine.store.pg.store), kept apart so that each module reads in
one sitting: it
uses the store's queries (`_q`), its pool (`_read`) and its DSN. The TUI's Postgres source and
`agentor worker` are built on these methods:

- a list: `list_summaries()` (one query; each row's liveness from the server's lock table),
  then `list_summaries(run_ids=...)` for the runs a change named, `held_runs()` now and then
  (a holder that dies frees its runs without writing anything);
- a live view: `changes()` (a feed of `run_id: seq`), then `read_events(run_id, seq, decoder)`
  (or `read_lines(run_id, seq)`: the lines as they are stored, for a reader that shows them);
- a worker: `claimable()` then `Agentor.resume(run_id)`, whose `lock` is the claim.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from agentor.engine.statuses import INCOMPLETE
from agentor.engine.store.pg.connections import T, connect
from agentor.engine.store.pg.feed import POLL_INTERVAL, ChangeFeed
from agentor.engine.store.pg.queries import Queries
from agentor.engine.store.pg.rows import RunListing, brief_listing_from_row, listing_from_row
from agentor.engine.store.run_ids import validate_run_id
from agentor.errors import RunNotFoundError


class RunListings:
    _q: Queries
    _dsn: str
    schema: str

    def _read(self, doing: str, work: Callable[[Any], T]) -> T:
        raise NotImplementedError

    def list_summaries(
        self,
        *,
        run_ids: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        brief: bool = False,
    ) -> list[RunListing]:
        """The run list, newest first, from the runs table in one query: each run's summary,
        whether it is held now (and by whom), its pending approvals. `run_ids` or `statuses`
        narrow it (a live list reads back just the runs a change named).

        `brief` (every run, not narrowed): summaries with only what a list shows before its
        counts (`rows.BRIEF_COLUMNS`: status, agent, model, times, prompt, error, events),
        the rest left at the defaults; a quarter of the time of a whole listing, for a list
        that fills in the counts afterwards (`list_summaries(run_ids=...)`, a page a time)."""
        if brief:
            if run_ids is not None or statuses is not None:
                raise ValueError("a brief listing lists every run")
            with _collector_paused():
                return list(map(brief_listing_from_row, self.brief_rows()))
        if run_ids is not None:
            query, params = self._q.listing_of, ([validate_run_id(r) for r in run_ids],)
        elif statuses is not None:
            query, params = self._q.listing_status, (list(statuses),)
        else:
            query, params = self._q.listing_all, None
        with _collector_paused():  # 100,000 rows of small objects: no use collecting them
            return self._read(
                "cannot list the runs of",
                # fetchall: the rows in one call (iterating calls the cursor once a row)
                lambda c: list(
                    map(listing_from_row, c.execute(query, params, binary=True).fetchall())
                ),
            )

    def brief_rows(self) -> list[tuple[Any, ...]]:
        """The brief listing as the server sends it, newest first: a tuple a run, its values
        in the order of `rows.BRIEF_COLUMNS` then `rows.LISTING_EXTRA` (`BRIEF_HELD`,
        `BRIEF_LAST_SEQ` index the two a live list needs; `rows.brief_from_row` makes the
        summary). For a reader making its own objects of 100,000 runs, in one pass."""
        with _collector_paused():
            return self._read(
                "cannot list the runs of",
                lambda c: c.execute(self._q.listing_brief, binary=True).fetchall(),
            )

    def read_lines(self, run_id: str, after_seq: int = 0) -> list[tuple[int, bytes]]:
        """The run's events after `after_seq` as stored: (seq, line), in order, each line as a
        FileStore writes it (a compact generation as its delta, the newline included).
        `read_events` decodes them; a viewer that shows what was written reads these.
        `RunNotFoundError` for an unknown run."""
        validate_run_id(run_id)
        query = self._q.lines_after
        rows = self._read(
            f"cannot read run {run_id} from",
            lambda c: c.execute(query, (after_seq, run_id), binary=True).fetchall(),
        )
        if not rows:
            raise RunNotFoundError(run_id, self)
        return [(seq, bytes(line)) for seq, line in rows if line is not None]

    def held_runs(self) -> set[str]:
        """The runs some process holds right now (one scan of the server's lock table)."""
        return self._read(
            "cannot read the locks of", lambda c: {r[0] for r in c.execute(self._q.held_all)}
        )

    def claimable(
        self,
        *,
        statuses: Sequence[str] = (INCOMPLETE,),
        agents: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[str]:
        """Runs a worker may take, least recently touched first: of `statuses` (the engine's,
        from the log: `incomplete` by default; add `failed`, `max_turns` to retry those), with
        a `run_start` recorded, no approval pending, held by nobody, of one of `agents` (by
        the name on their first run_start) if given. Taking one is `lock` (what
        `Agentor.resume` does): `RunLockedError` then means another worker was first."""
        agents = list(agents) if agents is not None else None
        params = (list(statuses), agents, agents, limit)
        return self._read(
            "cannot list the runs of",
            lambda c: [r[0] for r in c.execute(self._q.claimable, params)],
        )

    def changes(self, *, poll_interval: float = POLL_INTERVAL) -> ChangeFeed:
        """A feed of the runs that change (its own connection, LISTENing): see
        agentor.engine.store.pg.feed."""
        q = self._q
        return ChangeFeed(
            lambda: connect(self._dsn, f"feed {self.schema}"),
            q.listen,
            q.changes_since,
            q.horizon,
            poll_interval,
        )


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Building a big list allocates without freeing: every collection the allocations
    trigger walks all of it for nothing (it halves the time of a 100,000-run listing)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
