"""`ExperimentList`: the store's experiments, newest first, one line each
(`tui.text.experiment_rows.experiment_line`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from rich.text import Text
from textual.message import Message

from agentor.experiments.listing import Listed
from agentor.literal import literal_line
from tui.text.experiment_rows import experiment_line, experiments_header
from tui.widgets.cursor_list import CursorList

EMPTY = (
    "No experiments in this store yet: select runs in the list (space) and press X, or run "
    "agentor experiment run."
)


class ExperimentList(CursorList):
    has_header = True

    class Moved(Message):
        """The cursor is on another experiment (the keys that apply change)."""

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        state_of: Callable[[str], str | None] = lambda _: None,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.state_of = state_of  # an experiment's state in this app (`Experimenter.state_of`)
        self.rows: list[Listed] = []
        self.read = False  # the first read is in: an empty list says so
        self.error: str | None = None  # why the experiments cannot be read (literal)

    @property
    def current(self) -> Listed | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def set_rows(self, rows: Sequence[Listed]) -> None:
        """Show `rows`; the cursor stays on its experiment while it is there."""
        before = self.current.id if self.current else None
        self.rows, self.read, self.error = list(rows), True, None
        index = next((i for i, x in enumerate(self.rows) if x.id == before), None)
        if index is not None:
            self.cursor = index
        self.rows_changed()
        self.scroll_to_cursor()

    def row_count(self) -> int:
        return len(self.rows)

    def cursor_moved(self) -> None:
        self.post_message(self.Moved())

    def empty_text(self) -> Text:
        if self.error is not None:
            return Text("  " + literal_line(self.error, 300), "italic red")
        return Text("  " + (EMPTY if self.read else "Reading the experiments…"), "italic")

    def render_header(self, width: int) -> Text:
        return experiments_header()

    def render_row(self, index: int, width: int) -> Text:
        x = self.rows[index]
        return experiment_line(x, self.clock(), self.state_of(x.id))
