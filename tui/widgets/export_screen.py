"""`ExportScreen`: `w` asks in which format to write the selected run: Markdown (the default),
HTML or JSON. `enter` on a format (or its letter, m h j) chooses it; `esc` cancels. The
screen's result is the format ("md", "html", "json"), or None."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agentor.literal import literal_line
from tui.keys import bindings
from tui.keys.model import EXPORT_SCREEN
from tui.text.formatting import short_id

FORMATS = (
    ("md", "m  Markdown: for a pull request or an issue"),
    ("html", "h  HTML: one self-contained page to open in a browser"),
    ("json", "j  JSON: every event, full messages, for other tools"),
)


class ExportScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(EXPORT_SCREEN)
    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    #export {
        width: 70; max-width: 95%; height: auto;
        border: round $primary; border-title-style: bold; border-subtitle-color: $text-muted;
        background: $surface; padding: 0 1;
    }
    #export OptionList { height: auto; border: none; }
    """

    def __init__(self, run_id: str, where: str) -> None:
        super().__init__()
        self.run_id, self.where = run_id, where

    def compose(self) -> ComposeResult:
        with Vertical(id="export"):
            yield OptionList(*(Option(Text(label), id=fmt) for fmt, label in FORMATS))
            yield Static(Text(f"into {literal_line(self.where, 200)}", "dim"), markup=False)

    def on_mount(self) -> None:
        box = self.query_one("#export")
        box.border_title = Content(f"Export run {literal_line(short_id(self.run_id))}")
        box.border_subtitle = Content("enter writes · esc cancels")
        options = self.query_one(OptionList)
        options.highlighted = 0  # Markdown unless another is chosen
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, message: OptionList.OptionSelected) -> None:
        self.dismiss(message.option.id)

    def action_write(self, format: str) -> None:
        self.dismiss(format)

    def action_cancel(self) -> None:
        self.dismiss(None)
