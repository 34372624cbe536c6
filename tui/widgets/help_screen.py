"""`HelpScreen`: every key (`tui.keys.HELP`) and every status, on `?`."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from agentor.engine.statuses import (
    AWAITING_APPROVAL,
    COMPLETED,
    DIVERGED,
    FAILED,
    INTERRUPTED,
    MAX_TURNS,
    RUNNING,
    STOPPING,
    UNREADABLE,
)
from tui.keys import HELP, bindings
from tui.keys.model import HELP_SCREEN
from tui.text.run_line import status_word
from tui.text.styles import STATUS_STYLES

# Each status in the colour the run list gives it (`STATUS_STYLES`: one table for both).
STATUSES = (
    (AWAITING_APPROVAL, "awaiting approval: a tool call waits for a person"),
    (RUNNING, "incomplete, and a live process holds it"),
    (STOPPING, "a resume here was stopped: it waits for a running tool to finish"),
    (INTERRUPTED, "incomplete, and nobody holds it: r resumes it"),
    (FAILED, "ended with an error (the model endpoint failed, ...)"),
    (MAX_TURNS, "stopped by its turn limit"),
    (DIVERGED, "a replay stopped at a call with no recorded answer"),
    (COMPLETED, "finished with an answer"),
    (UNREADABLE, "the file cannot be read; the error says why"),
)


# From this many cells of screen width the help is laid out in two columns, so that every key
# fits on a 160x45 screen without scrolling.
TWO_COLUMNS_FROM = 140


def help_text(columns: int = 1) -> Group | Table:
    """Sections of keys and statuses; long explanations wrap within their column. With two
    `columns`, the sections are shared out so that each column is about as long."""
    sections = _sections()
    if columns < 2:
        return Group(*(part for section in sections for part in section))
    heights = [sum(_height(p) for p in section) for section in sections]
    # Where to cut the sections in two so that the longer column is as short as can be.
    cut = min(range(len(sections) + 1), key=lambda i: max(sum(heights[:i]), sum(heights[i:]) - 1))
    layout = Table.grid(padding=(0, 4))
    layout.add_column(ratio=1)
    layout.add_column(ratio=1)
    left = [p for section in sections[:cut] for p in section]
    right = [p for section in sections[cut:] for p in section]
    blank_first = right and isinstance(right[0], Text) and right[0].plain == ""
    layout.add_row(Group(*left), Group(*right[1:] if blank_first else right))
    return layout


def _sections() -> list[list[Text | Table]]:
    """Each section as its parts: a blank line before all but the first, its title, its keys."""
    sections: list[list[Text | Table]] = []
    for title, keys in HELP:
        table = _grid()
        for key in keys:
            table.add_row(Text(key.shown, "bold cyan"), Text(key.does))
        gap = [Text("")] if sections else []
        sections.append([*gap, Text(title, "bold underline"), table])
    table = _grid()
    for word, what in STATUSES:
        table.add_row(Text(status_word(word), STATUS_STYLES.get(word, "")), Text(what))
    sections.append([Text(""), Text("Statuses", "bold underline"), table])
    return sections


# About the cells an explanation has in a column of the two-column layout (the help is 150
# wide; a little less, for words that do not fit at a line's end): a longer one wraps, and the
# columns are balanced by the lines they take.
WRAP_AT = 50


def _height(part: Text | Table) -> int:
    if not isinstance(part, Table):
        return 1
    explanations = part.columns[1].cells
    return sum(max(1, -(-cell_len(getattr(t, "plain", "")) // WRAP_AT)) for t in explanations)


def _grid() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(width=13, no_wrap=True)
    table.add_column(ratio=1)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(HELP_SCREEN)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help"):
            yield Static(help_text(self._columns()), markup=False, id="help-text")

    def on_mount(self) -> None:
        self.query_one("#help").border_title = "Keys"
        self.query_one("#help").border_subtitle = "esc to close"

    def on_resize(self) -> None:
        columns = self._columns()
        help_box = self.query_one("#help")
        help_box.set_class(columns == 2, "-wide")
        self.query_one("#help-text", Static).update(help_text(columns))

    def _columns(self) -> int:
        return 2 if self.app.size.width >= TWO_COLUMNS_FROM else 1
