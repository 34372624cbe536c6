"""`PairList`: an experiment's pairs as a table (`tui.text.experiment_rows`), in the order the
screen sorts them; the columns that fit its width, one per scorer."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.message import Message

from tui.text.experiment_rows import (
    Column,
    PairRow,
    id_width,
    pair_columns,
    pair_line,
    pairs_header,
)
from tui.widgets.cursor_list import CursorList


class PairList(CursorList):
    has_header = True

    class Moved(Message):
        """The cursor is on another pair (the screen says it whole below)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[PairRow] = []
        self.scorers: tuple[str, ...] = ()
        self.id_width = 8  # the widest run id shown

    @property
    def current(self) -> PairRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def set_rows(self, rows: Sequence[PairRow], scorers: Sequence[str], keep: bool = True) -> None:
        """Show `rows`; with `keep`, the cursor stays on its pair (found by its baseline)."""
        before = self.current.baseline if self.current and keep else None
        self.rows, self.scorers = list(rows), tuple(scorers)
        self.id_width = id_width(self.rows)
        index = next((i for i, r in enumerate(self.rows) if r.baseline == before), None)
        self.cursor = index if index is not None else (0 if self.rows else -1)
        self.rows_changed()
        self.scroll_to_cursor()
        self.cursor_moved()

    def row_count(self) -> int:
        return len(self.rows)

    def cursor_moved(self) -> None:
        self.post_message(self.Moved())

    def empty_text(self) -> Text:
        return Text("  No pair measured yet.", "italic")

    def render_header(self, width: int) -> Text:
        return pairs_header(self.columns(width))

    def render_row(self, index: int, width: int) -> Text:
        return pair_line(self.rows[index], self.columns(width))

    def columns(self, width: int) -> tuple[Column, ...]:
        return pair_columns(width, self.scorers, self.id_width)
