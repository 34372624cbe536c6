"""`StatsScreen`: `S` shows runs, tokens and cost per day, per agent and per model over the
runs the list shows (`tui.text.stats_text`); `esc` back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from agentor.sources.runrow import RunRow
from tui.keys import bindings
from tui.keys.model import STATS_SCREEN
from tui.text.stats_text import stats


class StatsScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(STATS_SCREEN)
    DEFAULT_CSS = """
    StatsScreen { align: center middle; }
    #stats {
        width: 100; max-width: 95%; height: auto; max-height: 90%;
        border: round $primary; border-title-style: bold; border-subtitle-color: $text-muted;
        background: $surface; padding: 0 1;
    }
    """

    def __init__(self, rows: Sequence[RunRow], described: str) -> None:
        super().__init__()
        self.rows, self.described = list(rows), described

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="stats"):
            yield Static(stats(self.rows, self.described), markup=False, id="stats-body")

    def on_mount(self) -> None:
        box = self.query_one("#stats")
        box.border_title = Content("Stats · the runs shown")
        box.border_subtitle = Content("esc back")
        box.focus()
