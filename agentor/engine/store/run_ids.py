"""Run ids: what a run may be called, and how its log file is named (`<run id>.jsonl`).

Every store checks an id before anything touches a disk or a database: an id is a file name
too, so `../x` or `/etc/passwd` must never get that far.
"""

from __future__ import annotations

import re

RUN_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")
RUN_ID_RULE = "use 1 to 128 characters from A-Z, a-z, 0-9, '_' and '-'"
SUFFIX = ".jsonl"


def run_id_of(file_name: str) -> str | None:
    """The run a file name in a runs directory is the log of (`<run id>.jsonl`), else None."""
    if not file_name.endswith(SUFFIX):
        return None
    stem = file_name[: -len(SUFFIX)]
    return stem if RUN_ID_RE.fullmatch(stem) else None


def validate_run_id(run_id: object) -> str:
    """Return `run_id` if it is a safe run id, else raise `ValueError` (before any file access)."""
    if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id):
        raise ValueError(f"invalid run id {run_id!r}: {RUN_ID_RULE}")
    return run_id
