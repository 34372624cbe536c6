"""`CompareScreen`: two runs side by side, aligned by turn (`M`): their totals at the top, the
first divergence highlighted and in view, every difference marked, the row under the cursor
said whole at the bottom. The comparison is `agentor.engine.fork.compare`'s; its rows are
`tui.text.compare_rows`'."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from agentor.engine.fork.compare import Comparison
from agentor.literal import literal_line
from tui.keys import bindings
from tui.keys.model import COMPARE_SCREEN
from tui.text.compare_rows import Compared, overview, row_detail, side_summary
from tui.text.formatting import short_id
from tui.widgets.compare_list import CompareList
from tui.widgets.keys_footer import KeysFooter


class CompareScreen(ModalScreen[None]):
    """Run `a` (the marked one, or a fork's parent) against run `b`, compared."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(COMPARE_SCREEN)
    DEFAULT_CSS = """
    CompareScreen {
        background: $background;
        #compare-totals {
            height: 3;
            padding: 0 1;
            background: $boost;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        CompareList {
            height: 1fr;
            border: round $primary;
            border-title-style: bold;
            border-subtitle-color: $text-accent;
        }
        #compare-detail {
            height: auto;
            max-height: 9;
            padding: 0 1;
            border-top: solid $primary 50%;
        }
    }
    """

    def __init__(self, made: Compared) -> None:
        super().__init__()
        self.runs = (made.a, made.b)
        self.found: Comparison = made.found
        self.rows = made.rows
        self.first_row = made.first_row

    def compose(self) -> ComposeResult:
        yield Static(self._totals(), id="compare-totals", markup=False)
        yield CompareList(self.rows, self.first_row, (self.runs[0].run_id, self.runs[1].run_id))
        yield Static(id="compare-detail", markup=False)
        yield KeysFooter()

    @property
    def compare_list(self) -> CompareList:
        return self.query_one(CompareList)

    def on_mount(self) -> None:
        rows = self.compare_list
        rows.focus()
        rows.move_cursor(self.first_row if self.first_row is not None else 0, notify=False)
        rows.cursor_moved()
        self.call_after_refresh(rows.center_cursor)  # once laid out: over the one above

    def _totals(self) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        for label, run, s in (("a", self.runs[0], self.found.a), ("b", self.runs[1], self.found.b)):
            out.append(f"{label}  ", "bold")
            out.append(literal_line(short_id(run.run_id)), "bold")
            out.append("  ")
            out.append_text(side_summary(s))
            out.append("\n")
        out.append_text(overview(self.found))
        return out

    def on_compare_list_moved(self) -> None:
        row = self.compare_list.current
        detail = self.query_one("#compare-detail", Static)
        if row is None:
            detail.update("")
            return
        lines = (self.runs[0].lines, self.runs[1].lines)
        detail.update(row_detail(self.found, row, lines))

    def action_next_difference(self) -> None:
        self.compare_list.jump(forward=True)

    def action_previous_difference(self) -> None:
        self.compare_list.jump(forward=False)
