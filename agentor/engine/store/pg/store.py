"""PostgresStore: runs in a PostgreSQL schema, shared by processes on many machines.

The whole store interface (`append`, `append_many`, `load`, `list_runs`, the locking protocol)
and the capabilities of `agentor.engine.store.api` it declares (`load_with_errors`, `has_run`,
`events_of_type` here); what a run list, a live view and a worker fleet read: `list_summaries`,
`held_runs`, `changes`, `read_events`, `claimable` (agentor.engine.store.pg.listings); and what
operating it needs:
`delete`, `pin`, `unpin`, `pinned`, `search` (agentor.engine.store.pg.upkeep).

Cost model. An append is one statement in autocommit, so one commit: the append function
(agentor.engine.store.pg.schema) checks the writer's hold, inserts the event rows and updates the
run's summary
row, in one transaction. A second statement, in a transaction of its own, notifies listeners,
sent in the same round trip (pipeline mode, a Sync between the two: `locks.write_and_announce`):
PostgreSQL serializes the commits of notifying transactions (a database-wide lock held through
the commit's WAL flush), so appends that notified in their own transaction could not commit
together (group commit); a transaction that only notifies writes nothing and flushes nothing.
A notification lost between the two (the process dies, the connection drops) is caught up by
the change feed's polling (agentor.engine.store.pg.feed). What it needs from the run (its last seq,
the encoder's
last request, the summary to fold into) is cached per run after one read, and the function
refuses a stale cache (another writer appended since): the cache is read again and the append
retried. A listing is one query over `runs` (and one scan of `pg_locks` for liveness). A load is
one indexed range read of `events`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import psycopg

from agentor.engine.events import Event
from agentor.engine.history import RunSummary, fold
from agentor.engine.log.format import BadLine, LogDecoder, LogEncoder
from agentor.engine.store.pg.connections import (
    POOL_TIMEOUT,
    T,
    connect,
    failures,
    make_pool,
    read,
    store_error,
)
from agentor.engine.store.pg.dsn import redact, validate_schema
from agentor.engine.store.pg.listings import RunListings
from agentor.engine.store.pg.locks import Hold, Holds, write_and_announce
from agentor.engine.store.pg.queries import Queries
from agentor.engine.store.pg.rows import (
    fold_pending,
    storable_text,
    summary_from_row,
    summary_params,
)
from agentor.engine.store.pg.schema import ensure_schema, quote_schema, require_store
from agentor.engine.store.pg.upkeep import RunUpkeep
from agentor.engine.store.run_ids import validate_run_id
from agentor.errors import (
    ExperimentNotFoundError,
    PostgresStoreError,
    RunLockedError,
    RunLostError,
    RunNotFoundError,
)

log = logging.getLogger("agentor")

LOST, LOCKED = "AG001", "AG002"  # the append function's refusals (agentor.engine.store.pg.schema)
_ATTEMPTS = 3  # appends tried with a fresh view of the run (stale cache, a dropped connection)
_CACHED_FREE_RUNS = 256  # states kept for runs appended to without holding them


@dataclass
class RunChunk:
    """Events of a run after a seq: `entries` are (seq, event or bad line), in order. Pass
    `decoder` back to read on from `last_seq` (it rebuilds compact generations)."""

    run_id: str
    entries: list[tuple[int, Event | BadLine]]
    last_seq: int
    decoder: LogDecoder

    @property
    def events(self) -> list[Event]:
        return [e for _, e in self.entries if isinstance(e, Event)]


class _RunState:
    """What the next append of a run needs, as of `last_seq` (one writer at a time: mutex)."""

    def __init__(self, last_seq: int, summary: RunSummary, pending: list[str]) -> None:
        self.last_seq = last_seq
        self.summary = summary
        self.pending = pending
        self.encoder = LogEncoder(compact=True)
        self.mutex = threading.Lock()


class _NotSent(Exception):
    """The connection dropped before the append committed: try again."""

    def __init__(self, error: psycopg.OperationalError) -> None:
        self.error = error


class PostgresStore(RunListings, RunUpkeep):
    """Runs in the schema `schema` of a PostgreSQL database (made and migrated on first use;
    with `create=False`, one that holds no store yet is a `SchemaNotFoundError` and nothing is
    made: how a reader opens it).

    `dsn` is a libpq connection string or URL; it is shown only without its password
    (`where`, `repr`). `pool_timeout`: how long an operation waits for a pooled connection
    (when the server is gone, how long until it fails). `pool_size` bounds the connections
    appends and reads use at once; a store holding runs has one more, its lock session
    (agentor.engine.store.pg.locks), and each change feed one. Close it (or use it as a context
    manager) to let them go.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agentor",
        pool_size: int = 4,
        pool_timeout: float = POOL_TIMEOUT,
        create: bool = True,
    ) -> None:
        self.schema = validate_schema(schema)
        self._dsn = dsn
        self.where = redact(dsn)
        conn = connect(dsn, f"setup {schema}")
        try:
            with failures(dsn, f'cannot use schema "{schema}" of'):
                if not create:
                    require_store(conn, schema, self.where)
                ensure_schema(conn, schema, by=_version())
                oids = conn.execute(
                    "SELECT %s::regnamespace::oid::bigint,"
                    " (SELECT oid FROM pg_database WHERE datname = current_database())::bigint",
                    (quote_schema(schema),),
                ).fetchone()
        finally:
            conn.close()
        assert oids is not None  # a SELECT without FROM: one row
        self._q = Queries(schema, *oids)
        self._pool = make_pool(dsn, f"store {schema}", pool_size, pool_timeout)
        self._holds = Holds(
            lambda: connect(dsn, f"lock {schema}", watched=True),
            self._q.take,
            self._q.release,
            self._q.notify_last_seq,
        )
        self._states: dict[str, _RunState] = {}
        self._mutex = threading.Lock()

    def __repr__(self) -> str:
        return f"PostgresStore({self.where!r}, schema={self.schema!r})"

    def close(self) -> None:
        """Let go of every connection (and so of every run this store holds)."""
        self._holds.close()
        self._pool.close()

    def _read(self, doing: str, work: Callable[[Any], T]) -> T:
        return read(self._pool, self._dsn, doing, work)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------------

    def append(self, run_id: str, event: Event) -> None:
        self.append_many(run_id, (event,))

    def append_many(self, run_id: str, events: Iterable[Event]) -> None:
        """Save events durably, in order, in one transaction: returns after the commit.

        Raises `RunLostError` when this store took the run and lost it since (nothing is
        written), `RunLockedError` when it did not take the run and another session holds it.
        """
        validate_run_id(run_id)
        todo = [e for e in events if not e.transient]
        if not todo:
            return
        hold = self._holds.hold_of(run_id)
        try:
            for attempt in range(1, _ATTEMPTS + 1):
                state = self._state(run_id)
                with state.mutex:
                    if self._states.get(run_id) is not state:
                        continue  # dropped by a failed append meanwhile: read it again
                    try:
                        if self._write(run_id, hold, state, todo):
                            return
                    except _NotSent as dropped:
                        if attempt == _ATTEMPTS:
                            raise dropped.error from None
                    except BaseException:
                        self._forget(run_id, state)  # the cache may be ahead of the table
                        raise
                    self._forget(run_id, state)
        except psycopg.Error as exc:
            raise store_error(self._dsn, f"cannot append to run {run_id} in", exc) from None
        raise PostgresStoreError(
            f"cannot append to run {run_id}: other writers kept appending to it meanwhile"
        )

    def _write(self, run_id: str, hold: Hold | None, state: _RunState, todo: list[Event]) -> bool:
        """One try; False when the state was stale (nothing written)."""
        after = state.last_seq
        lines = [state.encoder.encode(e) for e in todo]
        fold(state.summary, todo)
        fold_pending(state.pending, todo)
        types = [e.type if _plain(e.type) else storable_text(e.type) for e in todo]
        token = hold.token if hold is not None else None
        summary = summary_params(state.summary, state.pending)
        params: tuple[Any, ...]
        if len(lines) == 1:
            query, params = self._q.append_one, (run_id, token, after, types[0], lines[0])
        else:
            query, params = self._q.append_many, (run_id, token, after, types, lines)
        try:
            with self._pool.connection() as conn:  # committed, then listeners told
                notify = self._q.notify_last_seq, (run_id, run_id)
                result = write_and_announce(conn, query, params + summary, *notify)
        except psycopg.OperationalError as exc:
            self._pool.check()  # replace the dead idle connections before asking
            if not self._landed(run_id, after, lines):
                raise _NotSent(exc) from exc
            result = after + len(lines)
        except psycopg.DatabaseError as exc:
            raise self._refusal(run_id, hold, exc) from None
        if result < 0:
            return False
        state.last_seq = result
        return True

    def _landed(self, run_id: str, after: int, lines: list[bytes]) -> bool:
        """Whether an append whose connection dropped committed (its lines are there)."""
        rows = self._read(
            f"cannot append to run {run_id} in",
            lambda c: c.execute(self._q.landed, (run_id, after), binary=True).fetchall(),
        )
        return [bytes(r[0]) for r in rows] == lines

    def _refusal(self, run_id: str, hold: Hold | None, exc: psycopg.DatabaseError) -> Exception:
        code, diag = exc.sqlstate, exc.diag
        if code == LOST:
            if hold is not None:
                self._holds.lost(hold)
            return RunLostError(run_id, diag.message_primary or "another process took it")
        if code == LOCKED:
            detail = diag.message_detail or ""
            pid = int(detail) if detail.isdigit() else None
            return RunLockedError(run_id, pid, diag.message_hint or None)
        raise exc  # `failures` says it in one line

    def _state(self, run_id: str) -> _RunState:
        with self._mutex:
            state = self._states.get(run_id)
        if state is not None:
            return state
        state = self._read(f"cannot append to run {run_id} in", lambda c: self._fetch(c, run_id))
        with self._mutex:
            if not self._holds.holds(run_id) and len(self._states) >= _CACHED_FREE_RUNS:
                self._states.pop(next(iter(self._states)))
            return self._states.setdefault(run_id, state)

    def _fetch(self, conn: Any, run_id: str) -> _RunState:
        """The run as the next append needs it: its row, and its generations for the encoder."""
        row = conn.execute(self._q.state, (run_id,)).fetchone()
        if row is None:
            return _RunState(0, RunSummary(run_id=run_id), [])
        state = _RunState(row[0], summary_from_row(row[2:]), list(row[1]))
        decoder = LogDecoder()
        for (line,) in conn.execute(self._q.generations, (run_id, row[0]), binary=True):
            item = decoder.decode(bytes(line))
            if isinstance(item, Event):
                state.encoder.follow(item)
        return state

    def _forget(self, run_id: str, state: _RunState | None = None) -> None:
        with self._mutex:
            if state is None or self._states.get(run_id) is state:
                self._states.pop(run_id, None)

    # -- reading -------------------------------------------------------------------------------

    def load(self, run_id: str) -> list[Event]:
        """Every event of the run, as FileStore's load gives them (full messages)."""
        chunk = self.read_events(run_id)
        for seq, item in chunk.entries:
            if isinstance(item, BadLine):
                log.warning("run %s: skipped event %d: %s", run_id, seq, item.reason)
        return chunk.events

    def load_with_errors(self, run_id: str) -> tuple[list[Event], list[BadLine]]:
        """Every event of the run, and the stored lines that are not events (numbered by their
        place among the run's lines, as a FileStore's are: `LineKeepingStore`)."""
        chunk = self.read_events(run_id)
        return chunk.events, [item for _, item in chunk.entries if isinstance(item, BadLine)]

    def has_run(self, run_id: str) -> bool:
        """Whether the store holds the run (one indexed read of the runs table)."""
        validate_run_id(run_id)
        return self._exists(run_id)

    def read_events(
        self, run_id: str, after_seq: int = 0, decoder: LogDecoder | None = None
    ) -> RunChunk:
        """The run's events after `after_seq` (0: all). Pass the previous chunk's `decoder` to
        read on; without one, the generations up to `after_seq` are read to make one.
        `RunNotFoundError` for an unknown run."""
        validate_run_id(run_id)

        def work(conn: Any) -> tuple[LogDecoder, list[Any]]:
            made = decoder
            if made is None:
                made = LogDecoder()
                if after_seq > 0:
                    gens = conn.execute(self._q.generations, (run_id, after_seq), binary=True)
                    for (line,) in gens:
                        made.decode(bytes(line))
            rows = conn.execute(self._q.lines_after, (after_seq, run_id), binary=True)
            return made, rows.fetchall()

        decoder, rows = self._read(f"cannot read run {run_id} from", work)
        if not rows:
            raise RunNotFoundError(run_id, self)
        entries = [(seq, decoder.decode(bytes(line))) for seq, line in rows if line is not None]
        last = entries[-1][0] if entries else after_seq
        return RunChunk(run_id, entries, last, decoder)

    def events_of_type(self, run_ids: Iterable[str], kind: str) -> dict[str, list[Event]]:
        """The events of type `kind` of each of `run_ids` (that has any), in log order, in one
        query (agentor-tui reads forks' `fork` markers so). Unreadable lines are left out."""
        ids = sorted(set(run_ids))
        if not ids:
            return {}
        rows = self._read(
            "cannot read the runs of",
            lambda c: c.execute(self._q.lines_of_type, (ids, kind), binary=True).fetchall(),
        )
        out: dict[str, list[Event]] = {}
        for run_id, line in rows:
            item = LogDecoder().decode(bytes(line))
            if isinstance(item, Event):
                out.setdefault(run_id, []).append(item)
        return out

    def lines_of_types(
        self, run_ids: Iterable[str], kinds: Iterable[str]
    ) -> dict[str, list[bytes]]:
        """The stored lines of these types of each of `run_ids` (that has any), in log order,
        as stored (compact generations stay compact: what a reader of a few fields needs), in
        one query (agentor-tui prices a page of runs so)."""
        ids = sorted(set(run_ids))
        if not ids:
            return {}
        rows = self._read(
            "cannot read the runs of",
            lambda c: c.execute(
                self._q.lines_of_types, (ids, sorted(set(kinds))), binary=True
            ).fetchall(),
        )
        out: dict[str, list[bytes]] = {}
        for run_id, line in rows:
            out.setdefault(run_id, []).append(bytes(line))
        return out

    def list_runs(self) -> list[str]:
        return self._read(
            "cannot list the runs of", lambda c: [r[0] for r in c.execute(self._q.list_runs)]
        )

    # -- experiments (version 4's experiment_records; agentor.experiments) ----------------------

    def append_experiment(self, experiment_id: str, record: Mapping[str, object]) -> None:
        validate_run_id(experiment_id)
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        table = f"{quote_schema(self.schema)}.experiment_records"
        self._read(
            "cannot save an experiment record in",
            lambda c: c.execute(
                f"INSERT INTO {table} (experiment_id, record) VALUES (%s, %s::json)",
                (experiment_id, text),
            ),
        )

    def load_experiment(self, experiment_id: str) -> list[dict[str, object]]:
        validate_run_id(experiment_id)
        table = f"{quote_schema(self.schema)}.experiment_records"
        rows = self._read(
            "cannot read an experiment of",
            lambda c: c.execute(
                f"SELECT record::text FROM {table} WHERE experiment_id = %s ORDER BY seq",
                (experiment_id,),
            ).fetchall(),
        )
        if not rows:
            raise ExperimentNotFoundError(experiment_id, self.where)
        return [json.loads(row[0]) for row in rows]

    def list_experiments(self) -> list[str]:
        table = f"{quote_schema(self.schema)}.experiment_records"
        rows = self._read(
            "cannot list the experiments of",
            lambda c: c.execute(
                f"SELECT experiment_id FROM {table} GROUP BY experiment_id"
                f' ORDER BY experiment_id COLLATE "C"'
            ).fetchall(),
        )
        return [row[0] for row in rows]

    # -- locking -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        """Hold the run: exclusive among every process on this database, released when the
        block ends, the process dies or its lock session is cut. `RunLockedError` names the
        holder (pid and host). While held, this store's appends to it are fenced by the hold."""
        validate_run_id(run_id)
        with failures(self._dsn, f"cannot take run {run_id} in"):
            hold = self._holds.take(run_id)
        try:
            yield
        finally:
            self._forget(run_id)
            try:
                self._holds.release(hold)
            except psycopg.Error as exc:  # the run is free anyway once the session is gone
                log.warning("run %s: letting go of it failed: %s", run_id, exc)

    def is_locked(self, run_id: str) -> bool:
        return self._holder(run_id)[0]

    def lock_holder(self, run_id: str) -> int | None:
        """The pid of the process holding the run (on whichever machine: see `list_summaries`
        for its host), or None."""
        held, pid, _ = self._holder(run_id)
        return pid if held else None

    def _holder(self, run_id: str) -> tuple[bool, int | None, str | None]:
        validate_run_id(run_id)
        if self._holds.holds(run_id):
            return True, os.getpid(), None
        row = self._read(
            "cannot read the locks of", lambda c: c.execute(self._q.holder, (run_id,)).fetchone()
        )
        return (False, None, None) if row is None else (row[0], row[1], row[2])


def _plain(text: str) -> bool:
    return text.isascii() and "\x00" not in text


def _version() -> str:
    from agentor._version import __version__

    return f"agentor-tui {__version__}"
