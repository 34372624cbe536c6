"""`ReasonScreen`: `n` in the approvals pane, asking why a call is rejected; and
`GivenResultScreen`: `g`, asking the result a call a crash interrupted had.

The text is required (the model is told it: "rejected by <who>: <reason>", or gets it as the
tool's result); `enter` decides with it, `esc` leaves without deciding. The screen's result is
the text, or None.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from agentor.literal import literal_line
from agentor.sources.gated import GatedCall
from tui.keys import bindings
from tui.keys.model import REASON_SCREEN
from tui.text.approval_text import NO_RESULT, RESULT_PLACEHOLDER, RESULT_TITLE
from tui.text.formatting import short_id
from tui.text.styles import ERROR_STYLE
from tui.text.timeline_line import call_line

NO_REASON = "a reason is needed: the model is told why its call was rejected"


class ReasonScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(REASON_SCREEN)
    TITLE = "Reject"
    PLACEHOLDER = "why (the model is told)"
    EMPTY = NO_REASON
    SUBTITLE = "enter rejects · esc cancels"

    def __init__(self, run_id: str, gated: GatedCall) -> None:
        super().__init__()
        self.run_id, self.gated = run_id, gated

    def compose(self) -> ComposeResult:
        call = self.gated.call
        with Vertical(id="reason"):
            yield Static(Text(call_line(call.name, call.args, 200), "bold"), markup=False)
            yield Input(placeholder=self.PLACEHOLDER, id="reason-text")
            yield Static(Text(""), markup=False, id="reason-status")

    def on_mount(self) -> None:
        box = self.query_one("#reason")
        name = literal_line(self.gated.call.name, 60)
        run = literal_line(short_id(self.run_id))
        box.border_title = Content(f"{self.TITLE} · {name} · run {run}")
        box.border_subtitle = Content(self.SUBTITLE)
        self.query_one("#reason-text", Input).focus()

    @on(Input.Submitted, "#reason-text")
    def _entered(self, message: Input.Submitted) -> None:
        reason = message.value.strip()
        if not reason:
            self.query_one("#reason-status", Static).update(Text("✗ " + self.EMPTY, ERROR_STYLE))
            self.app.bell()
            return
        self.dismiss(reason)

    def action_cancel(self) -> None:
        self.dismiss(None)


class GivenResultScreen(ReasonScreen):
    """The result an interrupted call had: recorded as its result, the tool not run again."""

    TITLE = RESULT_TITLE
    PLACEHOLDER = RESULT_PLACEHOLDER
    EMPTY = NO_RESULT
    SUBTITLE = "enter records it · esc cancels"
