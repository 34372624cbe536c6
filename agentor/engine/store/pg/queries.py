"""The SQL a PostgresStore sends, written out once per store for its schema.

Constants of the store (the schema, the lock space, the database's oid, the channel) are in the
text, validated or numbers; run ids and data are always parameters. Every parameter is cast:
psycopg sends a Python int as whatever fits, and a function call must match exactly.
"""

from __future__ import annotations

from agentor.engine.store.pg.rows import BRIEF_COLUMNS, COLUMN_TYPES, ROW_COLUMNS, SUMMARY_COLUMNS
from agentor.engine.store.pg.schema import quote_schema


def lock_space(schema_oid: int) -> int:
    """The schema's oid as the int4 an advisory lock key takes (the same 32 bits: pg_locks
    shows it back as the oid in `classid`)."""
    return schema_oid - 2**32 if schema_oid >= 2**31 else schema_oid


def channel_of(schema: str) -> str:
    """The NOTIFY channel of a schema's changes (payload: `run_id:seq`)."""
    return f"{schema}.changes"


class Queries:
    def __init__(self, schema: str, schema_oid: int, database_oid: int) -> None:
        s = quote_schema(schema)
        space = lock_space(schema_oid)
        channel = channel_of(schema)
        self.channel = channel
        self.listen = f'LISTEN "{channel}"'
        # The runs held right now, by their lock_key: one scan of the lock table. Only one
        # session at a time can hold a key exclusively (a doomed append's shared probe does not
        # count), so this never yields a key twice.
        held_keys = (
            "SELECT objid::bigint AS key FROM pg_locks WHERE locktype = 'advisory'"
            f" AND database = {database_oid}::oid AND classid = {schema_oid}::oid"
            " AND objsubid = 2 AND mode = 'ExclusiveLock' AND granted"
        )
        self._holding(s, space, channel)
        # One event as scalars, several as arrays, in binary (%b): psycopg's text form of a
        # bytea array costs more on both ends than the rest of the statement. Then the
        # summary, a parameter a column.
        summary = ", ".join(f"%s::{COLUMN_TYPES[c]}" for c in SUMMARY_COLUMNS)
        summary += ", %s::jsonb"
        self.append_one = (
            f"SELECT {s}.append(%s::text, {space}, %s::uuid, %s::int, %s::text, %s::bytea, "
            f"NULL, NULL, '{channel}', {summary})"
        )
        self.append_many = (
            f"SELECT {s}.append(%s::text, {space}, %s::uuid, %s::int, NULL, NULL, %b::text[], "
            f"%b::bytea[], '{channel}', {summary})"
        )
        cols = ", ".join(f"r.{c}" for c in ROW_COLUMNS)
        self.state = (
            f"SELECT r.last_seq, r.pending_approvals, {cols} FROM {s}.runs r"
            " WHERE r.run_id = %s::text"
        )
        self.generations = (
            f"SELECT line FROM {s}.events WHERE run_id = %s::text AND type = 'generation'"
            " AND seq <= %s::int ORDER BY seq"
        )
        # The events of one type of some runs, by the primary key (a run's events, filtered).
        self.lines_of_type = (
            f"SELECT run_id, line FROM {s}.events"
            " WHERE run_id = ANY(%s::text[]) AND type = %s::text ORDER BY run_id, seq"
        )
        # ... of some types, as stored (a compact generation stays compact).
        self.lines_of_types = (
            f"SELECT run_id, line FROM {s}.events"
            " WHERE run_id = ANY(%s::text[]) AND type = ANY(%s::text[]) ORDER BY run_id, seq"
        )
        # Zero rows: no such run. One row with a NULL line: a run with nothing after `seq`.
        self.lines_after = (
            f"SELECT e.seq, e.line FROM {s}.runs r LEFT JOIN {s}.events e"
            " ON e.run_id = r.run_id AND e.seq > %s::int"
            " WHERE r.run_id = %s::text ORDER BY e.seq"
        )
        self.landed = (
            f"SELECT line FROM {s}.events WHERE run_id = %s::text AND seq > %s::int ORDER BY seq"
        )
        self._listings(s, cols, held_keys)

    def _holding(self, s: str, space: int, channel: str) -> None:
        """Taking and letting go of a run, and the notifications of changes."""
        self.take = (
            f"SELECT taken, key, token, pid, host FROM {s}.take("
            f"%s::text, {space}, %s::int, %s::text, '{channel}')"
        )
        # A release writes nothing: its notification costs no WAL flush
        # (agentor.engine.store.pg.schema, version 3).
        self.release = (
            f"SELECT pg_advisory_unlock({space}, %s::int), pg_notify('{channel}', "
            f"%s::text || ':' || (SELECT last_seq FROM {s}.runs WHERE run_id = %s::text))"
        )
        # Sent after the commit of what it announces, in a transaction of its own (an append's,
        # in the same round trip: locks.write_and_announce; a take's): the run's last seq, read
        # from its row, so it is right whatever the write did.
        self.notify_last_seq = (
            f"SELECT pg_notify('{channel}', "
            f"%s::text || ':' || (SELECT last_seq FROM {s}.runs WHERE run_id = %s::text))"
        )

    def _listings(self, s: str, cols: str, held_keys: str) -> None:
        """What lists runs: all of them, some, the held ones, the claimable ones, the changed."""
        self.list_runs = f'SELECT run_id FROM {s}.runs ORDER BY run_id COLLATE "C"'
        # Held: a lookup in the held keys, read once per query (a hashed subplan), so that the
        # runs are read in the index's order. Joined, the planner sorts 100,000 rows on disk.
        held = f"r.lock_key IN ({held_keys})"
        extra = (
            f", {held}, CASE WHEN {held} THEN r.holder_pid END,"
            f" CASE WHEN {held} THEN r.holder_host END,"
            " jsonb_array_length(r.pending_approvals), r.last_seq, r.claims"
            f" FROM {s}.runs r"
        )
        listing = f"SELECT {cols}{extra}"
        order = " ORDER BY r.started_at DESC NULLS LAST, r.run_id"
        brief = ", ".join(f"r.{c}" for c in BRIEF_COLUMNS)
        self.listing_brief = f"SELECT {brief}{extra}{order}"
        self.listing_all = listing + order
        self.listing_of = listing + " WHERE r.run_id = ANY(%s::text[])" + order
        self.listing_status = listing + " WHERE r.status = ANY(%s::text[])" + order
        self.held_all = (
            f"SELECT r.run_id FROM ({held_keys}) h JOIN {s}.runs r ON r.lock_key = h.key"
        )
        self.holder = (
            "SELECT h.key IS NOT NULL, r.holder_pid, r.holder_host"
            f" FROM {s}.runs r LEFT JOIN ({held_keys}) h ON h.key = r.lock_key"
            " WHERE r.run_id = %s::text"
        )
        # Free runs a worker may take: of the given statuses, no approval pending, a run_start
        # recorded (an empty log has nothing to resume), nobody holding them; the least
        # recently touched first.
        self.claimable = (
            f"SELECT r.run_id FROM {s}.runs r LEFT JOIN ({held_keys}) h ON h.key = r.lock_key"
            " WHERE h.key IS NULL AND r.status = ANY(%s::text[]) AND r.segments > 0"
            " AND r.pending_approvals = '[]'::jsonb"
            " AND (%s::text[] IS NULL OR r.agent = ANY(%s::text[]))"
            " ORDER BY r.last_event_at NULLS FIRST, r.run_id LIMIT %s::int"
        )
        # The feed's fallback: runs written by transactions at or after a horizon, and the
        # next horizon (the oldest transaction still running now: anything that commits later
        # has an xid at or after it). Always one row, with NULLs when nothing changed. A scan
        # of `runs` (changed_xid is not indexed, to keep appends HOT), every few seconds.
        self.changes_since = (
            "SELECT h.x::text, r.run_id, r.last_seq FROM"
            " (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS x) h"
            f" LEFT JOIN {s}.runs r ON r.changed_xid >= %s::text::xid8"
        )
        self.horizon = "SELECT pg_snapshot_xmin(pg_current_snapshot())::text"
