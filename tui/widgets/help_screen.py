"""`HelpScreen`: every key, on `?`."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..styles import STATUS_STYLES

KEYS = (
    ("Runs", None),
    ("/", "filter by id, agent, model, status or prompt; enter keeps it, esc clears it"),
    ("s", "cycle the status filter: all, needs attention, failed, completed"),
    ("↑ ↓  k j", "move up and down"),
    ("pgup pgdn", "a page up and down"),
    ("home end  g G", "first and last row"),
    ("enter, tab", "into the timeline, then the detail"),
    ("esc", "back out: detail → timeline → runs; clears the filter"),
    ("Timeline", None),
    ("/", "search its events as you type; enter goes to the first match, esc clears it"),
    ("n  N", "next and previous match (round the ends)"),
    ("e  E", "next and previous error: a tool error, a failed or max_turns end, a bad line"),
    ("t  T", "next and previous tool call"),
    ("f", "follow: keep the newest event of the open run in view"),
    ("Event", None),
    ("v", "the highlighted event's line as JSON (a compact generation decoded too)"),
    ("y", "copy its value: a tool result, a generation's or the final text, else its JSON"),
    ("Run", None),
    ("r", "resume an interrupted, failed or max_turns run in this process"),
    (
        "x",
        "stop the resume in flight; a running tool is waited for (the run shows stopping), "
        "its result recorded; the run stays interrupted and resumable",
    ),
    ("c", "copy the run id (the notice shows it whole)"),
    ("ctrl+r", "reload the directory (with --no-watch; a watched one is always current)"),
    ("App", None),
    ("m", "maximize the focused pane, or bring every pane back (esc too)"),
    ("ctrl+p", "command palette: every action by name"),
    ("?", "this help"),
    (
        "q, ctrl+c",
        "quit; a resume in flight is stopped first, as x does (q again quits at once: "
        "a running tool's result is then lost, and the next resume runs it again)",
    ),
)

# Each status in the colour the run list gives it (`STATUS_STYLES`: one table for both).
STATUSES = (
    ("running", "incomplete, and a live process holds it"),
    ("stopping", "a resume here was stopped: it waits for a running tool to finish"),
    ("interrupted", "incomplete, and nobody holds it: r resumes it"),
    ("failed", "ended with an error (the model endpoint failed, ...)"),
    ("max_turns", "stopped by its turn limit"),
    ("completed", "finished with an answer"),
    ("unreadable", "the file cannot be read; the error says why"),
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
    half, running, cut = sum(heights) / 2, 0, len(sections)
    for i, h in enumerate(heights):
        if running + h / 2 > half:
            cut = i
            break
        running += h
    layout = Table.grid(padding=(0, 4))
    layout.add_column(ratio=1)
    layout.add_column(ratio=1)
    left = [p for section in sections[:cut] for p in section]
    right = [p for section in sections[cut:] for p in section]
    layout.add_row(Group(*left), Group(*right[1:] if right and right[0].plain == "" else right))
    return layout


def _sections() -> list[list[Text | Table]]:
    """Each section as its parts: a blank line before all but the first, its title, its keys."""
    sections: list[list[Text | Table]] = []
    table: Table | None = None
    for key, what in KEYS:
        if what is None:
            table = _grid()
            gap = [Text("")] if sections else []
            sections.append([*gap, Text(key, "bold underline"), table])
            continue
        assert table is not None
        table.add_row(Text(key, "bold cyan"), Text(what))
    table = _grid()
    for word, what in STATUSES:
        table.add_row(Text(word, STATUS_STYLES.get(word, "")), Text(what))
    sections.append([Text(""), Text("Statuses", "bold underline"), table])
    return sections


def _height(part: Text | Table) -> int:
    return part.row_count if isinstance(part, Table) else 1


def _grid() -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(width=13, no_wrap=True)
    table.add_column(ratio=1)
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", show=True),
    ]

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
