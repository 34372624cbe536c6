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
    ("x", "stop the resume in flight (the run stays interrupted and resumable)"),
    ("c", "copy the run id"),
    ("App", None),
    ("m", "maximize the focused pane, or bring every pane back (esc too)"),
    ("ctrl+p", "command palette: every action by name"),
    ("?", "this help"),
    ("q", "quit (stops a resume in flight, leaving the run resumable)"),
)

# Each status in the colour the run list gives it (`STATUS_STYLES`: one table for both).
STATUSES = (
    ("running", "incomplete, and a live process holds it"),
    ("interrupted", "incomplete, and nobody holds it: r resumes it"),
    ("failed", "ended with an error (the model endpoint failed, ...)"),
    ("max_turns", "stopped by its turn limit"),
    ("completed", "finished with an answer"),
    ("unreadable", "the file cannot be read; the error says why"),
)


def help_text() -> Group:
    """Sections of keys and statuses; long explanations wrap within their column."""
    parts: list[Text | Table] = []
    table: Table | None = None
    for key, what in KEYS:
        if what is None:
            if parts:
                parts.append(Text(""))
            parts.append(Text(key, "bold underline"))
            table = _grid()
            parts.append(table)
            continue
        assert table is not None
        table.add_row(Text(key, "bold cyan"), Text(what))
    parts += [Text(""), Text("Statuses", "bold underline")]
    table = _grid()
    for word, what in STATUSES:
        table.add_row(Text(word, STATUS_STYLES.get(word, "")), Text(what))
    parts.append(table)
    return Group(*parts)


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
            yield Static(help_text(), markup=False)

    def on_mount(self) -> None:
        self.query_one("#help").border_title = "Keys"
        self.query_one("#help").border_subtitle = "esc to close"
