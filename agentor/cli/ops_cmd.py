"""`agentor prune [DIR|DSN] --older-than AGE [--keep-last N] [--status S,...] [--dry-run]
[--json]`, `agentor pin RUN` and `agentor unpin RUN` (agentor.ops.retention and pins).

prune prints one line per run it removed (or, with `--dry-run`, would remove) and per run it
matched but kept, with the reason (held by a live process, awaiting approval, pinned, has a
kept fork, one of the N newest, ...), then a last line with the counts and the bytes freed.
The engine decides; this says it. `--json` prints the same as one object. Every bad input
(an age like "30x", an unknown status, no criterion at all) is refused before the store is
opened: nothing is touched.
"""

from __future__ import annotations

import time
from argparse import Namespace
from typing import Any

from agentor.cli.lines import Refusal, UsageError, human_bytes, plural, print_json, span
from agentor.cli.stores import store_of, the_run, where
from agentor.engine.store.api import DirectoryStore, Store
from agentor.engine.store.holding import readable_lines
from agentor.errors import UnreadableRunError
from agentor.literal import literal_line
from agentor.ops import retention


def prune(args: Namespace) -> int:
    criteria = _criteria(args)
    store = store_of(args)
    try:
        report = retention.prune(store, dry_run=args.dry_run, **criteria)
    except OSError as exc:
        raise Refusal(f"cannot prune {where(store)}: {exc.strerror or exc}") from None
    freed = report.freed if not args.dry_run else _would_free(store, report)
    if args.json:
        print_json(_report_json(store, report, freed))
    else:
        _print_report(store, report, freed)
    return 0


def _criteria(args: Namespace) -> dict[str, Any]:
    if args.older_than is None and args.keep_last is None and args.status is None:
        raise UsageError(
            "say what to prune: --older-than AGE, --keep-last N or --status S "
            "(prune never empties a store unasked)"
        )
    try:
        if args.older_than is not None:
            retention.parse_age(args.older_than)
        if args.status is not None:
            retention.parse_statuses(args.status)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return {"older_than": args.older_than, "keep_last": args.keep_last, "status": args.status}


def _would_free(store: Store, report: retention.PruneReport) -> int | None:
    """What a dry run would free: the logs' sizes, where they are files."""
    if not isinstance(store, DirectoryStore):
        return None
    total = 0
    for r in report.removed:
        try:
            total += store.path(r.run_id).stat().st_size
        except OSError:
            continue
    return total


def _print_report(store: Store, report: retention.PruneReport, freed: int | None) -> None:
    now = time.time()
    verb = "would remove" if report.dry_run else "removed"
    width = len(verb)
    status_width = max((len(r.status) for r in report.removed), default=0)
    listed: list[retention.Removed | retention.Kept] = [*report.removed, *report.kept]
    ids = max((len(x.run_id) for x in listed), default=0)
    for r in report.removed:
        when = "no time recorded" if r.last_active is None else f"{span(now - r.last_active)} ago"
        line = f"{verb}  {r.run_id:<{ids}}  {r.status:<{status_width}}  last active {when}"
        print(literal_line(line, 400))
    for k in report.kept:
        print(literal_line(f"{'kept':<{width}}  {k.run_id:<{ids}}  {k.detail}", 400))
    print(literal_line(_summary(store, report, freed), 600))


def _summary(store: Store, report: retention.PruneReport, freed: int | None) -> str:
    removed, kept = len(report.removed), len(report.kept)
    size = f" ({human_bytes(freed)})" if freed is not None and report.removed else ""
    kept_words = f", kept {kept}" if kept else ""
    if report.dry_run:
        return (
            f"dry run: would remove {plural(removed, 'run')}{size}{kept_words}; nothing was "
            f"removed from {where(store)}"
        )
    if not removed:
        return f"nothing removed from {where(store)}{kept_words}"
    freed_words = f"freed {human_bytes(freed)}"
    return f"removed {plural(removed, 'run')}{kept_words}; {freed_words} in {where(store)}"


def _report_json(store: Store, report: retention.PruneReport, freed: int | None) -> dict[str, Any]:
    return {
        "store": where(store),
        "dry_run": report.dry_run,
        "removed": [
            {"run_id": r.run_id, "status": r.status, "last_active": r.last_active}
            for r in report.removed
        ],
        "kept": [{"run_id": k.run_id, "reason": k.reason, "detail": k.detail} for k in report.kept],
        "freed": freed,
    }


# -- pins ----------------------------------------------------------------------------------------


def pin(args: Namespace) -> int:
    store, run_id = the_run(args)
    try:
        readable_lines(store, run_id)  # a directory, a symlink, random bytes: no run to keep
        added = retention.pin(store, run_id)
    except KeyError:  # deleted since it was named
        raise Refusal(f"no run {run_id} in {where(store)}") from None
    except (UnreadableRunError, OSError) as exc:  # OSError: made unreadable since
        why = exc.reason if isinstance(exc, UnreadableRunError) else exc.strerror or str(exc)
        raise Refusal(f"cannot pin {run_id}: it is no readable run ({why})") from None
    if added:
        print(f"pinned {run_id}: prune keeps it")
    else:
        print(f"{run_id} is already pinned")
    return 0


def unpin(args: Namespace) -> int:
    store, run_id = the_run(args)
    if retention.unpin(store, run_id):
        print(f"unpinned {run_id}: prune may remove it again")
    else:
        print(f"{run_id} was not pinned")
    return 0
