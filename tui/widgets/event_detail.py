"""`EventDetail`: everything about the highlighted event, scrollable."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from ..detail import DetailText


class EventDetail(VerticalScroll):
    """Shows prepared text (see `tui.detail.detail`); never parses markup."""

    def compose(self) -> ComposeResult:
        yield Static(Text(""), markup=False, id="detail-body")

    def on_mount(self) -> None:
        self.border_title = Content("Detail")

    def show(self, body: Text | DetailText, title: str = "Detail") -> None:
        self.query_one("#detail-body", Static).update(body)
        self.border_title = Content(title)
        self.scroll_home(animate=False, immediate=True)

    def clear(self, message: str = "") -> None:
        self.show(Text(message, "italic"))

    @property
    def text(self) -> str:
        """What is shown, as plain text (for tests and copying)."""
        content = self.query_one("#detail-body", Static).content
        return content.plain if isinstance(content, Text | DetailText) else str(content)
