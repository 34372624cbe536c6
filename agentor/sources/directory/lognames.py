"""The names of a run directory's files: which are logs, and the row id each is listed
under (`row_id_of`), and back (`file_name`)."""

from __future__ import annotations

import re
from itertools import compress, repeat
from operator import getitem, not_

from agentor.engine.store.run_ids import RUN_ID_RE, SUFFIX, run_id_of


def row_id_of(name: str) -> str | None:
    """The row id of a file name in a run directory: the run id of `<run id>.jsonl`; the
    whole name of another `*.jsonl` file (`bad name!.jsonl`), which is listed as unreadable
    with the reason (a name holding a `.` never collides with a run id); None for a name that
    is not a log's (`<id>.jsonl.torn` sidecars, notes) and for hidden names (`.x.jsonl`, an
    editor's `.#x.jsonl` lock), which are not listed, as `ls` does not list them."""
    if _LOG_NAME.fullmatch(name):
        return name[: -len(SUFFIX)]
    if not name.endswith(SUFFIX) or name.startswith("."):
        return None
    return run_id_of(name) or name


_LOG_NAME = re.compile(RUN_ID_RE.pattern + re.escape(SUFFIX))  # most names: told at once
_STEM = slice(None, -len(SUFFIX))


def log_entries(prefix: str, names: list[str]) -> list[tuple[str, str]]:
    """(row id, prefix + name) of each name that is a log's (`row_id_of`), in their order.
    Over 100,000 names in C loops: `<run id>.jsonl` told by one regex, cut and joined; the
    few other names (sidecars, hidden ones, odd logs) asked one by one."""
    ids: list[str | None] = list(map(getitem, names, repeat(_STEM)))
    odd = list(compress(range(len(names)), map(not_, map(_LOG_NAME.fullmatch, names))))
    keep = [True] * len(names)
    for i in odd:
        ids[i] = row_id_of(names[i])
        keep[i] = ids[i] is not None
    # `keep` drops every None id, which the checker cannot follow through `compress`.
    return list(compress(zip(ids, map(prefix.__add__, names), strict=True), keep))  # type: ignore[arg-type]


def file_name(row_id: str) -> str:
    """The file name of a row (the inverse of `row_id_of`)."""
    return row_id + SUFFIX if RUN_ID_RE.fullmatch(row_id) else row_id
