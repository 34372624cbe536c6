"""What the store's keys say (`tui.keys.store_keys`): a pin, a deletion, an export, a search
over every run, and what a store cannot do. Pure functions of plain values, each a `Note`."""

from __future__ import annotations

from pathlib import Path

from agentor.literal import literal_line
from tui.text.notices import Note


def cannot_pin(where: str) -> Note:
    """`p` on a store without pins."""
    return _cannot("pin runs", where)


def cannot_delete(where: str) -> Note:
    """`d` on a store that cannot delete runs."""
    return _cannot("delete runs", where)


def _cannot(doing: str, where: str) -> Note:
    return Note(f"This store cannot {doing} ({where}).", severity="warning", timeout=6)


# -- p: pins -----------------------------------------------------------------------------------


def pinned(run_id: str, was: bool) -> Note:
    """`p` pinned the run (`was`: it was pinned, and is not now)."""
    if was:
        return Note(f"Unpinned run {run_id}: prune may remove it again.", timeout=4)
    return Note(f"Pinned run {run_id}: prune keeps it.", timeout=4)


def not_pinned(run_id: str, was: bool, exc: BaseException) -> Note:
    doing = "unpinned" if was else "pinned"
    return Note(f"Run {run_id} cannot be {doing}: {exc}", severity="error")


# -- d: delete ---------------------------------------------------------------------------------


def not_deleted(run_id: str, why: str) -> Note:
    """`d` on a run that is not deleted (`why`: "awaiting approval", "held by process 4242")."""
    text = f"Run {run_id} is not deleted: {literal_line(why, 200)}."
    return Note(text, severity="error", timeout=8)


def gone_already(run_id: str) -> Note:
    return Note(f"Run {run_id} is gone already.", severity="warning", timeout=8)


def delete_failed(run_id: str, exc: BaseException) -> Note:
    return Note(f"Run {run_id} cannot be deleted: {exc}", severity="error", timeout=8)


def deleted(run_id: str, freed: int | None) -> Note:
    size = f" ({freed:,} bytes freed)" if freed else ""
    return Note(f"Deleted run {run_id}{size}.", timeout=8)


# -- w: export ---------------------------------------------------------------------------------


def nothing_to_export(run_id: str, where: str) -> Note:
    """`w` once the source is gone."""
    return Note(f"Run {run_id} cannot be read: {where} is gone.", severity="error")


def exported(path: Path, first: Path) -> Note:
    """The export was written to `path`; `first`, the name it was meant to have, exists."""
    text = f"Wrote {path}"
    if path != first:
        text += f" ({first.name} exists: left as it is)"
    return Note(text, title="Export", timeout=10)


def not_exported(run_id: str, where: str, exc: Exception) -> Note:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    text = f"Run {run_id} was not exported to {where}: {reason}"
    return Note(text, title="Export", severity="error", timeout=10)


# -- ctrl+f: every run -------------------------------------------------------------------------


def nothing_to_search(where: str) -> Note:
    return Note(f"Nothing to search: {where} is gone.", severity="warning")


def not_listed(run_id: str) -> Note:
    """A search's hit in a run the list no longer has."""
    return Note(f"Run {run_id} is not in the list any more.", severity="warning")
