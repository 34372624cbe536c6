"""The tables a PostgresStore keeps in its schema, and their migrations.

`MIGRATIONS[i]` takes a schema from version i to i + 1; `schema_version` records each one
applied. A migration, once released, is never edited: a change is a new one at the end. A
schema at a version this code does not know (made by a newer agentor) is refused, untouched.

The tables (version 1 unless said):

- `events (run_id, seq, type, line)`: one row per event, `seq` from 1 in the run, primary key
  `(run_id, seq)` (a second writer of the same step fails on it). `line` is the event exactly
  as a FileStore writes it (compact generations included, newline included), as bytes: so a
  load gives back what FileStore's gives, unknown fields, odd numbers and all, whatever the
  server's encoding. `convert_from(line, 'UTF8')::json` reads it in SQL.
- `runs`: one row per run, its summary as the run list shows it (the fields of
  `agentor.engine.history.RunSummary`, usage in three columns) plus `pending_approvals` (a
  JSON array of call ids), kept by each append in the same transaction; `last_seq`;
  `changed_xid`, the last writing transaction (polling for changes, agentor.engine.store.pg.feed;
  not indexed); `lock_key`, the run's half of its advisory lock key; and who took it last
  (`holder_*`, `claims`, `taken_at`). Only columns an append rarely changes are indexed, so
  that its update of the row is HOT (no index entry written).
- `pins (run_id, pinned_at)` (version 2): the pinned runs, each a row of `runs` (deleted
  with it).
- `experiment_records (experiment_id, seq, record)` (version 4): experiments
  (agentor.experiments), each record a JSON object, in the order written.
- `append(...)` and `take(...)`: the two writes that must check and change several rows in one
  transaction (agentor.engine.store.pg.store and .locks say what they guarantee). Since version 3
  neither notifies: the caller does, after the commit (agentor.engine.store.pg.feed).
"""

from __future__ import annotations

from typing import Any

from agentor.errors import SchemaNotFoundError, SchemaVersionError

_V1 = """
CREATE TABLE @s@.runs (
    run_id text PRIMARY KEY,
    lock_key integer GENERATED ALWAYS AS IDENTITY UNIQUE,
    last_seq integer NOT NULL DEFAULT 0,
    changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
    status text NOT NULL DEFAULT 'incomplete',
    agent text,
    model text,
    started_at double precision,
    last_event_at double precision,
    ended_at double precision,
    turns bigint NOT NULL DEFAULT 0,
    tool_calls bigint NOT NULL DEFAULT 0,
    input_tokens bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    total_tokens bigint NOT NULL DEFAULT 0,
    first_prompt text,
    final_output text,
    error text,
    segments bigint NOT NULL DEFAULT 0,
    events bigint NOT NULL DEFAULT 0,
    bad_lines bigint NOT NULL DEFAULT 0,
    calls_before bigint NOT NULL DEFAULT 0,
    calls_latest bigint NOT NULL DEFAULT 0,
    calls_turn bigint,
    active_before double precision,
    segment_started_at double precision,
    segment_last_at double precision,
    segment_open boolean NOT NULL DEFAULT true,
    pending_approvals jsonb NOT NULL DEFAULT '[]',
    holder_token uuid,
    holder_pid integer,
    holder_host text,
    claims integer NOT NULL DEFAULT 0,
    taken_at timestamptz
) WITH (fillfactor = 70);
-- Room on each page, and no index on a column every append changes (changed_xid,
-- last_event_at, the counts): each append's update of its run is HOT.
CREATE INDEX runs_newest ON @s@.runs (started_at DESC NULLS LAST, run_id);
CREATE INDEX runs_by_status ON @s@.runs (status);

CREATE TABLE @s@.events (
    run_id text NOT NULL,
    seq integer NOT NULL,
    type text NOT NULL,
    line bytea NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE INDEX events_generations ON @s@.events (run_id, seq) WHERE type = 'generation';

-- Append events to a run after `p_after`, its last seq as the writer knows it, and set its
-- summary, in one transaction: the caller runs it in autocommit, so it returns after the
-- commit. A holder passes the token it took the run with: refused (AG001) when another
-- session took the run since (the token changed) or nobody holds it any more (its lock
-- session ended: the shared try succeeds). A writer without a token may write only while
-- nobody holds the run (AG002). Returns the new last seq, or -1 - the real one when
-- `p_after` is stale (another writer appended since): nothing is written then.
-- The summary row is updated first (taking its row lock, which orders writers of a run)
-- and without touching an indexed column, so the update is HOT: no index entry is written.
-- One event comes as `p_type`, `p_line` (scalars cost less to send than arrays: the common
-- case), several as `p_types`, `p_lines` (then `p_line` is NULL). The summary comes as one
-- parameter a column (parsing it from JSON cost more than the rest of the update).
CREATE FUNCTION @s@.append(
    p_run text, p_space integer, p_token uuid, p_after integer, p_type text, p_line bytea,
    p_types text[], p_lines bytea[], p_channel text,
    s_status text, s_agent text, s_model text, s_started_at double precision,
    s_last_event_at double precision, s_ended_at double precision, s_turns bigint,
    s_tool_calls bigint, s_input_tokens bigint, s_output_tokens bigint,
    s_total_tokens bigint, s_first_prompt text, s_final_output text, s_error text,
    s_segments bigint, s_events bigint, s_bad_lines bigint, s_calls_before bigint,
    s_calls_latest bigint, s_calls_turn bigint, s_active_before double precision,
    s_segment_started_at double precision, s_segment_last_at double precision,
    s_segment_open boolean, s_pending_approvals jsonb
) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    n integer := CASE WHEN p_line IS NULL THEN cardinality(p_lines) ELSE 1 END;
    k integer;
    cur record;
BEGIN
    IF p_after = 0 AND p_token IS NULL
            AND NOT EXISTS (SELECT FROM @s@.runs r WHERE r.run_id = p_run) THEN
        INSERT INTO @s@.runs (run_id) VALUES (p_run) ON CONFLICT (run_id) DO NOTHING;
    END IF;
    UPDATE @s@.runs AS r SET
        last_seq = p_after + n,
        changed_xid = pg_current_xact_id(),
        (status, agent, model, started_at, last_event_at, ended_at, turns, tool_calls,
         input_tokens, output_tokens, total_tokens, first_prompt, final_output, error,
         segments, events, bad_lines, calls_before, calls_latest, calls_turn, active_before,
         segment_started_at, segment_last_at, segment_open, pending_approvals) =
        (s_status, s_agent, s_model, s_started_at, s_last_event_at, s_ended_at, s_turns,
         s_tool_calls, s_input_tokens, s_output_tokens, s_total_tokens, s_first_prompt,
         s_final_output, s_error, s_segments, s_events, s_bad_lines, s_calls_before,
         s_calls_latest, s_calls_turn, s_active_before, s_segment_started_at,
         s_segment_last_at, s_segment_open, s_pending_approvals)
        WHERE r.run_id = p_run AND r.last_seq = p_after
            AND (p_token IS NULL OR r.holder_token = p_token)
        RETURNING r.lock_key INTO k;
    IF NOT FOUND THEN
        SELECT r.last_seq, r.holder_token INTO cur FROM @s@.runs r WHERE r.run_id = p_run;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the run is gone from the store' USING ERRCODE = 'AG001';
        ELSIF p_token IS NOT NULL AND cur.holder_token IS DISTINCT FROM p_token THEN
            RAISE EXCEPTION 'another process took it' USING ERRCODE = 'AG001';
        END IF;
        RETURN -1 - cur.last_seq;
    END IF;
    IF p_token IS NULL THEN
        IF NOT pg_try_advisory_xact_lock(p_space, k) THEN
            SELECT r.holder_pid, r.holder_host INTO cur FROM @s@.runs r WHERE r.run_id = p_run;
            RAISE EXCEPTION 'the run is held by another session' USING ERRCODE = 'AG002',
                DETAIL = coalesce(cur.holder_pid::text, ''), HINT = coalesce(cur.holder_host, '');
        END IF;
    ELSIF pg_try_advisory_xact_lock_shared(p_space, k) THEN
        RAISE EXCEPTION 'its database session ended' USING ERRCODE = 'AG001';
    END IF;
    IF p_line IS NOT NULL THEN
        INSERT INTO @s@.events (run_id, seq, type, line)
            VALUES (p_run, p_after + 1, p_type, p_line);
    ELSE
        INSERT INTO @s@.events (run_id, seq, type, line)
            SELECT p_run, p_after + u.i, u.t, u.l
            FROM unnest(p_types, p_lines) WITH ORDINALITY AS u(t, l, i);
    END IF;
    PERFORM pg_notify(p_channel, p_run || ':' || (p_after + n));
    RETURN p_after + n;
END $$;

-- Take a run for this session (a session-level advisory lock on (p_space, lock_key)),
-- making its row if it has none, and record the taker with a new token: the token is what a
-- later append proves it still holds the run with. When another session holds it, returns
-- taken = false and who took it last.
CREATE FUNCTION @s@.take(p_run text, p_space integer, p_pid integer, p_host text,
                         p_channel text)
RETURNS TABLE (taken boolean, key integer, token uuid, pid integer, host text)
LANGUAGE plpgsql AS $$
DECLARE
    k integer;
    t uuid;
    last integer;
BEGIN
    SELECT r.lock_key INTO k FROM @s@.runs r WHERE r.run_id = p_run;
    IF NOT FOUND THEN
        INSERT INTO @s@.runs (run_id) VALUES (p_run) ON CONFLICT (run_id) DO NOTHING;
        SELECT r.lock_key INTO k FROM @s@.runs r WHERE r.run_id = p_run;
    END IF;
    IF NOT pg_try_advisory_lock(p_space, k) THEN
        RETURN QUERY SELECT false, k, NULL::uuid, r.holder_pid, r.holder_host
            FROM @s@.runs r WHERE r.run_id = p_run;
        RETURN;
    END IF;
    BEGIN
        t := gen_random_uuid();
        UPDATE @s@.runs AS r SET holder_token = t, holder_pid = p_pid, holder_host = p_host,
            claims = r.claims + 1, taken_at = now(), changed_xid = pg_current_xact_id()
            WHERE r.run_id = p_run RETURNING r.last_seq INTO last;
        PERFORM pg_notify(p_channel, p_run || ':' || last);
    EXCEPTION WHEN OTHERS THEN
        -- A session lock outlives a failed transaction: give it back.
        PERFORM pg_advisory_unlock(p_space, k);
        RAISE;
    END;
    RETURN QUERY SELECT true, k, t, p_pid, p_host;
END $$;
"""

# Version 2: pins (agentor.ops.pins), outside the events as a FileStore keeps them outside its
# logs. A pin goes with its run (deleting the run's row deletes it).
_V2 = """
CREATE TABLE @s@.pins (
    run_id text PRIMARY KEY REFERENCES @s@.runs (run_id) ON DELETE CASCADE,
    pinned_at timestamptz NOT NULL DEFAULT now()
);
"""

# Version 3: `append` and `take` no longer notify: the caller does, in a statement of its own
# after the commit (agentor.engine.store.pg.store). PostgreSQL serializes the commits of notifying
# transactions (a
# database-wide lock held through the commit's WAL flush), so appends that notified in their
# transaction lost group commit; a notifying transaction that writes nothing flushes nothing.
# The signatures stay (`p_channel` is unused now), so that processes of version 2 still
# running during an upgrade keep writing; their changes reach readers by the feed's polling.
_V3 = """
CREATE OR REPLACE FUNCTION @s@.append(
    p_run text, p_space integer, p_token uuid, p_after integer, p_type text, p_line bytea,
    p_types text[], p_lines bytea[], p_channel text,
    s_status text, s_agent text, s_model text, s_started_at double precision,
    s_last_event_at double precision, s_ended_at double precision, s_turns bigint,
    s_tool_calls bigint, s_input_tokens bigint, s_output_tokens bigint,
    s_total_tokens bigint, s_first_prompt text, s_final_output text, s_error text,
    s_segments bigint, s_events bigint, s_bad_lines bigint, s_calls_before bigint,
    s_calls_latest bigint, s_calls_turn bigint, s_active_before double precision,
    s_segment_started_at double precision, s_segment_last_at double precision,
    s_segment_open boolean, s_pending_approvals jsonb
) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    n integer := CASE WHEN p_line IS NULL THEN cardinality(p_lines) ELSE 1 END;
    k integer;
    cur record;
BEGIN
    IF p_after = 0 AND p_token IS NULL
            AND NOT EXISTS (SELECT FROM @s@.runs r WHERE r.run_id = p_run) THEN
        INSERT INTO @s@.runs (run_id) VALUES (p_run) ON CONFLICT (run_id) DO NOTHING;
    END IF;
    UPDATE @s@.runs AS r SET
        last_seq = p_after + n,
        changed_xid = pg_current_xact_id(),
        (status, agent, model, started_at, last_event_at, ended_at, turns, tool_calls,
         input_tokens, output_tokens, total_tokens, first_prompt, final_output, error,
         segments, events, bad_lines, calls_before, calls_latest, calls_turn, active_before,
         segment_started_at, segment_last_at, segment_open, pending_approvals) =
        (s_status, s_agent, s_model, s_started_at, s_last_event_at, s_ended_at, s_turns,
         s_tool_calls, s_input_tokens, s_output_tokens, s_total_tokens, s_first_prompt,
         s_final_output, s_error, s_segments, s_events, s_bad_lines, s_calls_before,
         s_calls_latest, s_calls_turn, s_active_before, s_segment_started_at,
         s_segment_last_at, s_segment_open, s_pending_approvals)
        WHERE r.run_id = p_run AND r.last_seq = p_after
            AND (p_token IS NULL OR r.holder_token = p_token)
        RETURNING r.lock_key INTO k;
    IF NOT FOUND THEN
        SELECT r.last_seq, r.holder_token INTO cur FROM @s@.runs r WHERE r.run_id = p_run;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'the run is gone from the store' USING ERRCODE = 'AG001';
        ELSIF p_token IS NOT NULL AND cur.holder_token IS DISTINCT FROM p_token THEN
            RAISE EXCEPTION 'another process took it' USING ERRCODE = 'AG001';
        END IF;
        RETURN -1 - cur.last_seq;
    END IF;
    IF p_token IS NULL THEN
        IF NOT pg_try_advisory_xact_lock(p_space, k) THEN
            SELECT r.holder_pid, r.holder_host INTO cur FROM @s@.runs r WHERE r.run_id = p_run;
            RAISE EXCEPTION 'the run is held by another session' USING ERRCODE = 'AG002',
                DETAIL = coalesce(cur.holder_pid::text, ''), HINT = coalesce(cur.holder_host, '');
        END IF;
    ELSIF pg_try_advisory_xact_lock_shared(p_space, k) THEN
        RAISE EXCEPTION 'its database session ended' USING ERRCODE = 'AG001';
    END IF;
    IF p_line IS NOT NULL THEN
        INSERT INTO @s@.events (run_id, seq, type, line)
            VALUES (p_run, p_after + 1, p_type, p_line);
    ELSE
        INSERT INTO @s@.events (run_id, seq, type, line)
            SELECT p_run, p_after + u.i, u.t, u.l
            FROM unnest(p_types, p_lines) WITH ORDINALITY AS u(t, l, i);
    END IF;
    RETURN p_after + n;
END $$;

CREATE OR REPLACE FUNCTION @s@.take(p_run text, p_space integer, p_pid integer, p_host text,
                         p_channel text)
RETURNS TABLE (taken boolean, key integer, token uuid, pid integer, host text)
LANGUAGE plpgsql AS $$
DECLARE
    k integer;
    t uuid;
BEGIN
    SELECT r.lock_key INTO k FROM @s@.runs r WHERE r.run_id = p_run;
    IF NOT FOUND THEN
        INSERT INTO @s@.runs (run_id) VALUES (p_run) ON CONFLICT (run_id) DO NOTHING;
        SELECT r.lock_key INTO k FROM @s@.runs r WHERE r.run_id = p_run;
    END IF;
    IF NOT pg_try_advisory_lock(p_space, k) THEN
        RETURN QUERY SELECT false, k, NULL::uuid, r.holder_pid, r.holder_host
            FROM @s@.runs r WHERE r.run_id = p_run;
        RETURN;
    END IF;
    BEGIN
        t := gen_random_uuid();
        UPDATE @s@.runs AS r SET holder_token = t, holder_pid = p_pid, holder_host = p_host,
            claims = r.claims + 1, taken_at = now(), changed_xid = pg_current_xact_id()
            WHERE r.run_id = p_run;
    EXCEPTION WHEN OTHERS THEN
        -- A session lock outlives a failed transaction: give it back.
        PERFORM pg_advisory_unlock(p_space, k);
        RAISE;
    END;
    RETURN QUERY SELECT true, k, t, p_pid, p_host;
END $$;
"""

# Version 4: experiments (agentor.experiments): each an append-only list of records, its
# definition first, then one per measured pair, as a FileStore keeps them in `.experiments/`.
# A record is kept as the JSON text it was written as (`json`, not `jsonb`: keys in order).
_V4 = """
CREATE TABLE @s@.experiment_records (
    experiment_id text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    record json NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (experiment_id, seq)
);
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4)
LATEST = len(MIGRATIONS)


def quote_schema(schema: str) -> str:
    """`schema` as an SQL identifier (the name is validated first: dsn.validate_schema)."""
    return '"' + schema + '"'


def schema_version(conn: Any, schema: str) -> int | None:
    """The schema's version, or None when it has no `schema_version` table yet."""
    table = conn.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f"{quote_schema(schema)}.schema_version",)
    ).fetchone()[0]
    if not table:
        return None
    row = conn.execute(f"SELECT max(version) FROM {quote_schema(schema)}.schema_version")
    return row.fetchone()[0] or 0


def require_store(conn: Any, schema: str, where: str) -> None:
    """`SchemaNotFoundError` unless `schema` holds a store (at any version): what a reader
    checks before `ensure_schema`, which would make it."""
    if schema_version(conn, schema) is not None:
        return
    exists = conn.execute(
        "SELECT EXISTS (SELECT FROM pg_namespace WHERE nspname = %s)", (schema,)
    ).fetchone()[0]
    why = "holds no agentor store" if exists else "does not exist"
    raise SchemaNotFoundError(
        f'schema "{schema}" {why} in {where} (only a command that writes runs makes one)'
    )


def ensure_schema(conn: Any, schema: str, by: str) -> int:
    """Bring `schema` to `LATEST`, making it if missing; return the version it was at.

    `conn` is in autocommit. The common case, a schema already current, only reads (a viewer
    without the right to create anything opens it). Migrations run in one transaction under a
    transaction-level advisory lock, so that processes starting together migrate once.
    """
    found = schema_version(conn, schema)
    if found == LATEST:
        return found
    _refuse_newer(schema, found)
    q = quote_schema(schema)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"agentor {q}",))
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {q}")
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {q}.schema_version (version integer PRIMARY KEY, "
            "applied_at timestamptz NOT NULL DEFAULT now(), applied_by text)"
        )
        found = schema_version(conn, schema) or 0
        _refuse_newer(schema, found)
        for version in range(found + 1, LATEST + 1):
            conn.execute(MIGRATIONS[version - 1].replace("@s@", q))
            conn.execute(
                f"INSERT INTO {q}.schema_version (version, applied_by) VALUES (%s, %s)",
                (version, by),
            )
    return found


def _refuse_newer(schema: str, found: int | None) -> None:
    if found is not None and found > LATEST:
        raise SchemaVersionError(
            f'schema "{schema}" is at version {found}, made by a newer agentor; this one knows '
            f"versions up to {LATEST}: upgrade agentor-tui, or use another schema (--schema)"
        )
