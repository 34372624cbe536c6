"""The runs directory a command works on, and the run it names.

A command never creates a directory or a log: a missing one is refused (`FileStore` would
make the directory, and taking a run's lock would create its file). `RUN` is a run id, a
unique prefix of one (`agentor show 3f2a`), or the path of a log (`runs/<run id>.jsonl`).
"""

from __future__ import annotations

import os
from argparse import Namespace
from pathlib import Path

from ..engine.statuses import live_status
from ..engine.store import RUN_ID_RE, RUN_ID_RULE, SUFFIX, FileStore
from .lines import Refusal, UsageError

DEFAULT_DIR = "runs"


def open_dir(directory: str) -> FileStore:
    """The FileStore of an existing directory; refused when there is none."""
    path = Path(directory)
    if not path.is_dir():
        why = "not a directory" if path.exists() else "no such directory"
        raise Refusal(f"{why}: {directory}")
    try:
        return FileStore(path)
    except OSError as exc:
        raise Refusal(f"cannot use {directory}: {exc.strerror or exc}") from None


def the_run(args: Namespace) -> tuple[FileStore, str]:
    """The store and run id that `RUN` and `--dir` name (see the module)."""
    given: str = args.run_id
    directory = args.dir
    if os.sep in given:  # the path of a log
        path = Path(given)
        if directory is not None and Path(directory).resolve() != path.parent.resolve():
            raise UsageError(f"{given} is not in --dir {directory}")
        directory, given = str(path.parent), path.name
    given = given.removesuffix(SUFFIX)
    store = open_dir(directory or DEFAULT_DIR)
    if not RUN_ID_RE.fullmatch(given):
        raise UsageError(f"{given!r} is not a run id ({RUN_ID_RULE})")
    if store.path(given).exists():
        return store, given
    matches = [r for r in store.list_runs() if r.startswith(given)]
    if len(matches) == 1:
        return store, matches[0]
    if not matches:
        raise Refusal(f"no run {given} in {store.directory}")
    shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
    raise Refusal(f"{len(matches)} runs start with {given}: {shown}; give more of the id")


def status_of(store: FileStore, run_id: str, log_status: str) -> str:
    """A run's status with its liveness: an incomplete run is running or interrupted."""
    return live_status(log_status, store.is_locked(run_id))
