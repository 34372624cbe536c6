"""What `M` (mark and compare two runs) and `P` (play a run back) say. Pure functions of plain
values, each a `Note`."""

from __future__ import annotations

from tui.text.formatting import short_id
from tui.text.notices import Note, unreadable_run


def unmarked(run_id: str) -> Note:
    return Note(f"Unmarked {short_id(run_id)}.", timeout=3)


def marked(run_id: str, parent: str | None, where: str) -> Note:
    """`M` marked the run: a fork whose parent is not in the source (`where`), or any run that
    is no fork (`parent` None)."""
    if parent is not None:  # a fork, its parent gone: it can be compared with another
        return Note(
            f"{short_id(run_id)} is a fork of {parent}, which is not in {where}: marked it "
            "instead.",
            severity="warning",
        )
    return Note(
        f"Marked {short_id(run_id)}: M on another run compares the two (M here unmarks).",
        timeout=3,
    )


def comparing(a_lines: int, b_lines: int) -> Note:
    """Runs this long may take a moment to compare: said."""
    return Note(f"Comparing {a_lines:,} and {b_lines:,} lines…", timeout=3)


def unreadable(run_id: str, error: str | None) -> Note:
    return Note(unreadable_run(run_id, error), severity="warning")


def cannot_read(run_id: str, exc: BaseException) -> Note:
    return Note(f"Run {run_id} cannot be read: {exc}", severity="warning")
