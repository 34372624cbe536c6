"""`agentor copy SRC DST [--run RUN]...`: copy runs between two stores, a runs directory and a
PostgreSQL database either way (or two of a kind), keeping ids and events
(`agentor.engine.store.copy.copy_runs`).

A run being written in either store (someone holds it) is skipped with a notice on stderr, as
is one the destination holds differently (never overwritten), and an entry that is no readable
run (a directory or a symlink named like one, an empty file, a file of no event), for which
nothing is written; copying again later picks up what was skipped and what the source added
since. A missing destination directory is made. The last line on stdout says what was done.
Skips are notices, not failures: exit status 0.
"""

from __future__ import annotations

import sys
from argparse import Namespace

from agentor.backends import backend_for, same_store
from agentor.cli.lines import UsageError
from agentor.cli.stores import open_named, where
from agentor.engine.store.copy import copy_runs
from agentor.engine.store.run_ids import RUN_ID_RE, RUN_ID_RULE
from agentor.literal import literal_line


def copy(args: Namespace) -> int:
    for run_id in args.run_ids:
        if not RUN_ID_RE.fullmatch(run_id):
            raise UsageError(f"{run_id!r} is not a run id ({RUN_ID_RULE})")
    src_schema = _schema(args.src, args.src_schema, args.schema, "--src-schema")
    dst_schema = _schema(args.dst, args.dst_schema, args.schema, "--dst-schema")
    if args.schema is not None and not (_has_schemas(args.src) or _has_schemas(args.dst)):
        raise UsageError("--schema is for a PostgreSQL store; SRC and DST are directories")
    if same_store(args.src, src_schema, args.dst, dst_schema):
        raise UsageError("SRC and DST are the same store")
    src = open_named(args.src, src_schema)
    dst = open_named(args.dst, dst_schema, create=True)
    report = copy_runs(src, dst, args.run_ids or None)
    for notice in report.notices():
        print(f"agentor copy: {literal_line(notice, 400)}", file=sys.stderr)
    print(literal_line(f"{report} (from {where(src)} to {where(dst)})", 600))
    return 0


def _schema(spec: str, own: str | None, common: str | None, flag: str) -> str | None:
    if not _has_schemas(spec):
        if own is not None:
            raise UsageError(f"{flag} is for a PostgreSQL store; {spec} is a directory")
        return None
    return own or common


def _has_schemas(spec: str) -> bool:
    return backend_for(spec).default_schema is not None
