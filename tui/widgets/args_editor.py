"""`ArgsEditor`: `e` in the approvals pane, a call's arguments as JSON to edit, then approve.

What is typed is checked as it is typed: JSON, an object, and what the tool takes (the
`validator` the pane gives: the tool itself, or the schema the run recorded). What is wrong is
shown under the editor, and `ctrl+s` approves only an edit that passes: a bad edit is never
saved. `esc` leaves without deciding. The screen's result is `(args, note)`, or None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, Static, TextArea

from agentor.engine.history import canonical_args
from agentor.literal import literal_line
from agentor.sources.gated import GatedCall
from tui.keys import bindings
from tui.keys.model import ARGS_EDITOR
from tui.text.arg_edit import editor_text, parse_edit
from tui.text.formatting import short_id
from tui.text.styles import ERROR_STYLE
from tui.text.timeline_line import call_line

Edit = tuple[dict[str, Any], str | None]


class ArgsEditor(ModalScreen[Edit | None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(ARGS_EDITOR)

    def __init__(
        self, run_id: str, gated: GatedCall, check: Callable[[dict[str, Any]], str | None]
    ) -> None:
        super().__init__()
        self.run_id, self.gated, self.check = run_id, gated, check
        self.problem: str | None = None  # what is wrong with the text as it is

    def compose(self) -> ComposeResult:
        call = self.gated.call
        with Vertical(id="editor"):
            yield Static(
                Text(call_line(call.name, call.args, 200), "bold"), markup=False, id="editor-call"
            )
            yield TextArea.code_editor(
                editor_text(call.args), language="json", tab_behavior="focus", id="editor-text"
            )
            yield Static(Text(""), markup=False, id="editor-status")
            yield Input(placeholder="note (optional): why this edit", id="editor-note")

    def on_mount(self) -> None:
        box = self.query_one("#editor")
        call = self.gated.call
        box.border_title = Content(
            f"Edit, then approve · {literal_line(call.name, 60)} · run "
            f"{literal_line(short_id(self.run_id))}"
        )
        box.border_subtitle = Content("ctrl+s approves · esc cancels · tab to the note")
        self._validate()
        self.query_one("#editor-text", TextArea).focus()

    @on(TextArea.Changed)
    def _typed(self) -> None:
        self._validate()

    def _validate(self) -> dict[str, Any] | None:
        """Check the text; show what is wrong, or what approving it will do."""
        args, self.problem = parse_edit(self.query_one("#editor-text", TextArea).text)
        if args is not None:
            self.problem = self.check(args)
        status = self.query_one("#editor-status", Static)
        if self.problem is not None:
            status.update(Text("✗ " + literal_line(self.problem, 400), ERROR_STYLE))
            return None
        if canonical_args(args) == canonical_args(self.gated.call.args):
            status.update(Text("✓ unchanged: ctrl+s approves it as requested", "dim"))
        else:
            status.update(Text("✓ valid: ctrl+s approves the call with these arguments", "green"))
        return args

    @on(Input.Submitted, "#editor-note")
    def _note_entered(self) -> None:
        self.action_save()

    def action_save(self) -> None:
        args = self._validate()
        if args is None:
            self.app.bell()  # the error is on screen already: nothing is saved
            return
        note = self.query_one("#editor-note", Input).value.strip() or None
        self.dismiss((args, note))

    def action_cancel(self) -> None:
        self.dismiss(None)
