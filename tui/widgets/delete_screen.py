"""`DeleteScreen`: `d` on a run asks before deleting it, naming it (id, prompt, status).

`y` deletes; `n` or `esc` keeps it. The screen's result is whether to delete.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from agentor.literal import literal_line
from agentor.sources.runrow import RunRow
from tui.keys import bindings
from tui.keys.model import CONFIRM_SCREEN
from tui.text.styles import ERROR_STYLE, STATUS_STYLES


def naming(row: RunRow, status: str) -> Text:
    """The run as the question names it: its whole id, its status, its first prompt."""
    s = row.summary
    out = Text()
    out.append("run     ", "dim")
    out.append(literal_line(row.run_id, 200), "bold")
    out.append("\nstatus  ", "dim")
    out.append(literal_line(status, 40), STATUS_STYLES.get(status, ""))
    out.append("\nprompt  ", "dim")
    prompt = s.first_prompt if s is not None else None
    out.append(literal_line(prompt or "(none)", 200))
    if s is not None and (s.agent or s.model):
        out.append("\nagent   ", "dim")
        out.append(literal_line(f"{s.agent or '-'} · {s.model or '-'}", 120))
    return out


class DeleteScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(CONFIRM_SCREEN)
    DEFAULT_CSS = """
    DeleteScreen { align: center middle; }
    #delete {
        width: 90; max-width: 95%; height: auto;
        border: round $error; border-title-style: bold; border-subtitle-color: $text-muted;
        background: $surface; padding: 0 1;
    }
    """

    def __init__(self, row: RunRow, status: str) -> None:
        super().__init__()
        self.row, self.status = row, status

    def compose(self) -> ComposeResult:
        with Vertical(id="delete"):
            yield Static(naming(self.row, self.status), markup=False)
            warning = "Its log is removed from the store (and its pin): this cannot be undone."
            yield Static(Text("\n" + warning, ERROR_STYLE), markup=False)

    def on_mount(self) -> None:
        box = self.query_one("#delete")
        box.border_title = Content("Delete this run?")
        box.border_subtitle = Content("y deletes · n or esc keeps it")

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
