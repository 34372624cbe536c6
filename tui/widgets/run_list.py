"""`RunList`: every run of the source, newest first, one line each (`tui.text.run_line`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.binding import BindingType
from textual.message import Message

from agentor.literal import literal_line
from agentor.sources.runrow import RunRow
from tui.keys import RUN_LIST, bindings
from tui.text.formatting import named_ids, short_id
from tui.text.run_line import GAP, TITLES, columns_for, fit, run_line, timed
from tui.widgets.cursor_list import CursorList

COMPARE_MARK = "◆ marked"  # before the prompt of the run `M` marked
SELECTED_MARK = "✓"  # before the prompt of a run selected (space) for an experiment


class RunList(CursorList):
    """The run rows it is given (already filtered and sorted by the app); `space` selects runs
    (for an experiment, `X`)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(RUN_LIST)
    has_header = True

    @dataclass
    class Highlighted(Message):
        """The cursor is on another run (None: on no run)."""

        run_id: str | None

    @dataclass
    class SelectionChanged(Message):
        """Runs were selected or let go (`count`: how many are selected now)."""

        count: int

    def __init__(self, clock: Callable[[], float] = time.time, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.rows: list[RunRow] = []
        self.empty_message = "No runs yet."
        self.hidden = 0  # runs a filter hides (an empty list then says so)
        # A note shown before a run's prompt, kept for the session (e.g. "⚠ unsaved").
        self.marks: dict[str, str] = {}
        # The run `M` marked to compare with another (shown as COMPARE_MARK), or None.
        self.compare_mark: str | None = None
        # A status the app knows better than the file, shown in place of the row's.
        self.statuses: dict[str, str] = {}
        self.pinned: set[str] = set()  # the runs pinned in the store (marked)
        # The runs selected for an experiment, in the order they were selected (marked; kept
        # while a filter hides them).
        self.selected: dict[str, None] = {}
        self._where: dict[str, int] | None = None  # run id -> index, built when asked
        # run id -> its "started" and "took" texts as last drawn (the clock moves them)
        self._timed: dict[str, tuple[str, str]] = {}
        self.id_width = 8  # the widest id shown, at least 8

    @property
    def current(self) -> RunRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def set_rows(self, rows: Sequence[RunRow], hidden: int = 0) -> None:
        """Show `rows` (`hidden`: how many more a filter hides); the cursor stays on its run
        when that is still there."""
        before = self.current.run_id if self.current else None
        self.rows = list(rows)
        self.hidden = hidden
        named = named_ids(map(_RUN_ID, self.rows))  # the others show 8 cells
        self.id_width = max(8, max(map(_id_cells, named), default=0))
        self._where = None
        index = next((i for i, r in enumerate(self.rows) if r.run_id == before), None)
        if index is not None:
            self.cursor = index
        self.rows_changed()
        self.scroll_to_cursor()
        after = self.current.run_id if self.current else None
        if after != before:
            self.cursor_moved()

    def index_of(self, run_id: str) -> int | None:
        if self._where is None:
            self._where = {r.run_id: i for i, r in enumerate(self.rows)}
        return self._where.get(run_id)

    def select(self, run_id: str) -> bool:
        index = self.index_of(run_id)
        if index is None:
            return False
        self.move_cursor(index)
        return True

    def runs_updated(self, run_ids: Iterable[str]) -> None:
        """These runs' rows changed in place (their order and filtering did not): redraw
        their lines only."""
        self.rows_updated(i for i in map(self.index_of, run_ids) if i is not None)

    def clock_moved(self) -> None:
        """Redraw the rows on screen whose relative start ("12s ago") or duration (a running
        run's ticks) reads differently now."""
        now = self.clock()
        top = round(self.scroll_y)
        shown = range(top, min(len(self.rows), top + self.scrollable_content_region.height))
        self.rows_updated(
            [i for i in shown if self._timed.get(self.rows[i].run_id) != timed(self.rows[i], now)]
        )

    def mark(self, run_id: str, note: str) -> None:
        self.marks[run_id] = note
        self.runs_updated([run_id])

    def set_compare_mark(self, run_id: str | None) -> None:
        """Mark `run_id` as the run to compare with (None: no run)."""
        before, self.compare_mark = self.compare_mark, run_id
        self.runs_updated(r for r in (before, run_id) if r is not None)

    def action_toggle_select(self) -> None:
        """`space`: select the highlighted run, or let it go; the cursor goes on to the next."""
        row = self.current
        if row is None:
            return
        if row.run_id in self.selected:
            del self.selected[row.run_id]
        else:
            self.selected[row.run_id] = None
        self.runs_updated([row.run_id])
        self.move_cursor(self.cursor + 1)
        self.post_message(self.SelectionChanged(len(self.selected)).set_sender(self))

    def clear_selection(self) -> None:
        before, self.selected = list(self.selected), {}
        self.runs_updated(before)
        self.post_message(self.SelectionChanged(0).set_sender(self))

    def shown_status(self, row: RunRow) -> str:
        """The status the row shows: the app's, where it knows better, else the row's own."""
        return self.statuses.get(row.run_id, row.status)

    def show_status(self, run_id: str, status: str | None) -> None:
        """Show `status` for the run in place of its own (None: its own again)."""
        if status is None:
            self.statuses.pop(run_id, None)
        else:
            self.statuses[run_id] = status
        self.runs_updated([run_id])

    # -- CursorList ----------------------------------------------------------------------------

    def row_count(self) -> int:
        return len(self.rows)

    def cursor_moved(self) -> None:
        row = self.current
        # Sent by the list, whoever moved its cursor: a move the pane makes (a filter) must
        # still reach the screen (Textual stops a message at its parent when the parent sent it).
        self.post_message(self.Highlighted(row.run_id if row else None).set_sender(self))

    def empty_text(self) -> Text:
        message = "No run matches the filter." if self.hidden else self.empty_message
        return Text("  " + literal_line(message), "italic")

    def render_header(self, width: int) -> Text:
        out = Text(no_wrap=True)
        for title, w, right in columns_for(width, self.id_width):
            out.append(fit(TITLES.get(title, title), w, right) + GAP)
        out.append("prompt")
        return out

    def render_row(self, index: int, width: int) -> Text:
        row, now = self.rows[index], self.clock()
        self._timed[row.run_id] = timed(row, now)
        columns = columns_for(width, self.id_width)
        run_id = row.run_id
        mark = self.marks.get(run_id)
        if run_id == self.compare_mark:
            mark = COMPARE_MARK + (f" {mark}" if mark else "")
        if run_id in self.selected:
            mark = SELECTED_MARK + (f" {mark}" if mark else "")
        status, pinned = self.statuses.get(run_id), run_id in self.pinned
        return run_line(row, now, columns, mark, status, pinned)


def _id_cells(run_id: str) -> int:
    """The cells a run id takes in the list (a printable ASCII id: its length)."""
    shown = short_id(run_id)
    return len(shown) if shown.isascii() and shown.isprintable() else cell_len(shown)


_RUN_ID = attrgetter("run_id")
