"""What operating a PostgresStore for months needs: deleting runs, pins, and search, in the
database (agentor.ops: retention, pins, search).

A mixin of `PostgresStore` (agentor.engine.store.pg.store), kept apart so that each module reads in
one sitting: it
uses the store's pool (`_read`), its DSN, its lock (`lock`) and its reader (`read_events`).

- `delete(run_id, check)` (`DeletingStore`): under the run's hold (a run another session holds
  is a `RunLockedError`), its events are read and given to `check`; then its events, its row
  in `runs` and its pin go in one transaction, which also tells the change feed (`run_id:0`).
  Returns the bytes of its lines (what its log would have held).
- `pin`, `unpin`, `pinned` (`PinningStore`): rows of the `pins` table (schema version 2), one
  statement each; a pin goes with its run.
- `search(query, regex=, ignore_case=)` (`SearchingStore`): the database looks for the
  query's plain part in the stored lines (as the file search looks in the raw bytes) and sends
  only the lines holding it, row by row as they come (libpq's single-row mode: memory stays
  flat, and the server may scan in parallel, as a cursor forbids), run by run in the order of
  their ids (bytewise, as a directory's file names sort) and by seq; each is then decoded and
  matched as a FileStore's line is, so a run gives the same hits in both stores (`Hit.line` is
  the event's seq, as the TUI numbers it). A query without such a part (a regex of classes
  only) streams every line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import psycopg

from agentor.engine.events import Event
from agentor.engine.store.pg.connections import T, store_error
from agentor.engine.store.pg.queries import channel_of
from agentor.engine.store.pg.schema import quote_schema
from agentor.engine.store.run_ids import validate_run_id
from agentor.errors import RunNotFoundError

if TYPE_CHECKING:
    import contextlib

    from psycopg_pool import ConnectionPool

    from agentor.engine.store.matching import Hit, Matcher


class RunUpkeep:
    schema: str
    _dsn: str
    _pool: ConnectionPool[Any]

    def _read(self, doing: str, work: Callable[[Any], T]) -> T:
        raise NotImplementedError

    def lock(self, run_id: str) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    def read_events(self, run_id: str) -> Any:
        raise NotImplementedError

    # -- deleting ------------------------------------------------------------------------------

    def delete(self, run_id: str, check: Callable[[list[Event]], None] | None = None) -> int:
        """Remove the run (its events, its row, its pin) in one transaction, holding it; return
        the bytes of its lines. `check` as in `DeletingStore`: it sees the events read under the
        hold, and an exception from it keeps the run."""
        validate_run_id(run_id)
        if not self._exists(run_id):  # `lock` would make a row for an unknown run
            raise RunNotFoundError(run_id, self)
        with self.lock(run_id):
            events = self.read_events(run_id).events  # bad lines skipped quietly, as a file's
            if check is not None:
                check(events)
            return self._read(
                f"cannot delete run {run_id} from", lambda conn: self._drop(conn, run_id)
            )

    def _exists(self, run_id: str) -> bool:
        sql = f"SELECT EXISTS (SELECT FROM {self._s}.runs WHERE run_id = %s::text)"
        exists: bool = self._read(
            f"cannot read run {run_id} from", lambda c: c.execute(sql, (run_id,)).fetchone()[0]
        )
        return exists

    def _drop(self, conn: Any, run_id: str) -> int:
        """One statement in autocommit, so one transaction and one round trip: the events, the
        row (its pin with it), and a notification; the bytes of the lines."""
        s = self._s
        freed = conn.execute(
            f"WITH gone AS (DELETE FROM {s}.events WHERE run_id = %s::text"
            " RETURNING octet_length(line) AS n),"
            f" r AS (DELETE FROM {s}.runs WHERE run_id = %s::text)"
            " SELECT coalesce(sum(n), 0)::bigint, pg_notify(%s::text, %s::text) FROM gone",
            (run_id, run_id, channel_of(self.schema), f"{run_id}:0"),
        ).fetchone()[0]
        return int(freed)

    # -- pins ----------------------------------------------------------------------------------

    def pin(self, run_id: str) -> bool:
        """Pin an existing run (`RunNotFoundError` if unknown); False if it was pinned already."""
        validate_run_id(run_id)
        s = self._s
        sql = (
            f"WITH r AS (SELECT run_id FROM {s}.runs WHERE run_id = %s::text),"
            f" added AS (INSERT INTO {s}.pins (run_id) SELECT run_id FROM r"
            " ON CONFLICT (run_id) DO NOTHING RETURNING 1)"
            " SELECT EXISTS (SELECT FROM r), EXISTS (SELECT FROM added)"
        )
        known, added = self._read(
            f"cannot pin run {run_id} in", lambda c: c.execute(sql, (run_id,)).fetchone()
        )
        if not known:
            raise RunNotFoundError(run_id, self)
        return bool(added)

    def unpin(self, run_id: str) -> bool:
        """False if the run was not pinned."""
        validate_run_id(run_id)
        sql = f"DELETE FROM {self._s}.pins WHERE run_id = %s::text RETURNING 1"
        row = self._read(
            f"cannot unpin run {run_id} in", lambda c: c.execute(sql, (run_id,)).fetchone()
        )
        return row is not None

    def pinned(self) -> set[str]:
        sql = f"SELECT run_id FROM {self._s}.pins"
        return self._read("cannot read the pins of", lambda c: {r[0] for r in c.execute(sql)})

    # -- search --------------------------------------------------------------------------------

    def search(
        self, query: str, *, regex: bool = False, ignore_case: bool | None = None
    ) -> Iterator[Hit]:
        """Every event whose text matches `query`, as agentor.ops.run_search finds them in a
        directory (see the module); a bad query is a `ValueError` at once."""
        from agentor.engine.store.matching import matcher_for

        return self._search(matcher_for(query, regex, ignore_case))

    def _search(self, matcher: Matcher) -> Iterator[Hit]:
        from agentor.engine.store.matching import line_hit

        sql, params = self._search_sql(matcher)
        try:
            with self._pool.connection() as conn, conn.cursor() as cur:
                for run_id, seq, line in cur.stream(sql, params, binary=True):
                    hit = line_hit(run_id, seq, bytes(line), matcher)
                    if hit is not None:
                        yield hit
        except psycopg.Error as exc:
            raise store_error(self._dsn, "cannot search", exc) from None

    def _search_sql(self, matcher: Matcher) -> tuple[str, tuple[Any, ...]]:
        """The lines that may match, ordered. The needle is printable ASCII without a backslash
        (search.py): `encode(line, 'escape')` leaves such bytes as they are (it escapes only
        NUL, backslashes and bytes above 127), so folding it to lower case finds what the file
        search finds in a log's lower-cased bytes (in the "C" collation: ASCII only, and twice
        as fast as the database's own)."""
        where = ""
        params: tuple[Any, ...] = ()
        if matcher.needle is not None and matcher.fold:
            where = "WHERE strpos(lower(encode(line, 'escape') COLLATE \"C\"), %s::text) > 0"
            params = (matcher.needle.decode("ascii"),)
        elif matcher.needle is not None:
            where = "WHERE position(%s::bytea IN line) > 0"
            params = (matcher.needle,)
        order = ' ORDER BY run_id COLLATE "C", seq'
        return f"SELECT run_id, seq, line FROM {self._s}.events {where}{order}", params

    @property
    def _s(self) -> str:
        return quote_schema(self.schema)
