"""Writing a run's export to a file (`w` in the TUI): named after the run, never over an
existing file."""

from __future__ import annotations

import os
from pathlib import Path

EXTENSIONS = {"md": ".md", "html": ".html", "json": ".json"}
MAX_TRIES = 1000


def write_new(directory: str | os.PathLike[str], run_id: str, format: str, text: str) -> Path:
    """Write `text` to `<run id>.<ext>` in `directory`, or, when that exists, to the first of
    `<run id>-2.<ext>`, `-3`, ... that does not: a file is created, never replaced (O_EXCL,
    so one made meanwhile by someone else is not replaced either). Returns its path; OSError
    when it cannot be written (a missing directory, no permission)."""
    ext = EXTENSIONS[format]
    data = text.encode("utf-8")
    for n in range(1, MAX_TRIES + 1):
        name = f"{run_id}{ext}" if n == 1 else f"{run_id}-{n}{ext}"
        path = Path(directory) / name
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        except BaseException:
            path.unlink(missing_ok=True)  # no half-written export left behind
            raise
        return path
    raise FileExistsError(f"{MAX_TRIES} exports of {run_id} are already in {directory}")
