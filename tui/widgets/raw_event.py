"""`RawEventScreen`: `v`, the highlighted event's line as JSON, literal and scrollable."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import TextArea

from agentor.literal import literal, literal_line
from agentor.sources.source import RunEvents
from tui.keys import bindings
from tui.keys.model import RAW_SCREEN
from tui.text.event_value import raw_sections
from tui.text.formatting import short_id


class RawEventScreen(ModalScreen[None]):
    """Read-only text (select and copy it as in any text area); `esc` or `v` closes."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(RAW_SCREEN)

    def __init__(self, run_id: str, log: RunEvents, index: int) -> None:
        super().__init__()
        self.title_text = f"Raw JSON · {literal_line(short_id(run_id))} · line {index + 1}"
        sections = raw_sections(log, index)
        # Each section under its heading; control characters made visible (a TextArea
        # parses no markup, but would hand escape sequences to the terminal).
        self.text = "\n\n".join(f"── {heading} ──\n{literal(body)}" for heading, body in sections)

    def compose(self) -> ComposeResult:
        yield TextArea(self.text, read_only=True, soft_wrap=True, id="raw")

    def on_mount(self) -> None:
        area = self.query_one("#raw", TextArea)
        area.border_title = Content(self.title_text)
        area.border_subtitle = Content("esc closes")
        area.focus()
