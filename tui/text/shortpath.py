"""`short_path`: a directory as a title shows it; `source_title`: any source as one does."""

from __future__ import annotations

import os

from rich.cells import cell_len

from agentor.sources.source import LocalSource, RunSource


def short_path(path: str | os.PathLike[str], limit: int = 40) -> str:
    """A directory as a title shows it: absolute, the home directory as `~`, and when longer
    than `limit` cells only its last parts after `…/` (its own name always whole)."""
    text = os.path.abspath(path)
    home = os.path.expanduser("~")
    if home not in ("", os.sep) and (text == home or text.startswith(home + os.sep)):
        text = "~" + text[len(home) :]
    if cell_len(text) <= limit:
        return text
    parts = text.split(os.sep)
    tail = parts[-1]
    for part in reversed(parts[:-1]):
        if cell_len(f"…{os.sep}{part}{os.sep}{tail}") > limit:
            break
        tail = f"{part}{os.sep}{tail}"
    return f"…{os.sep}{tail}"


def source_title(source: RunSource) -> str:
    """How a title names a source: a directory by its short path, a database as it says."""
    return short_path(source.label) if isinstance(source, LocalSource) else source.label
