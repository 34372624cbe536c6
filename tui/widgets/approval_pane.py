"""`ApprovalPane`: the gated calls of the selected run while it awaits approval, under the run
list: one line a call (`ApprovalList`: waiting, or who decided what), and the highlighted call's
arguments as pretty JSON beside them. Its keys (`a` approve, `A` approve all, `e` edit then
approve, `n` reject with a reason; `g` gives a call a crash interrupted the result it had) work
while the list has the focus: in the timeline `e` and `n` keep their meaning.

The screen gives it what it cannot know (attributes down): `decide` records a decision (the
`Approver`'s), `validator` checks an edit, `tell` shows a notice, `clock` is "now".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Static

from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.literal import literal_line
from agentor.sources.gated import GatedCall, gated_calls
from agentor.sources.runrow import RunRow
from agentor.sources.source import RunEvents
from tui.keys import bindings
from tui.keys.model import APPROVALS
from tui.text import notices
from tui.text.approval_text import (
    INTERRUPTED_HINT,
    call_detail,
    decision_words,
    pane_row,
)
from tui.text.formatting import short_id
from tui.widgets.args_editor import ArgsEditor
from tui.widgets.cursor_list import CursorList
from tui.widgets.reason_screen import GivenResultScreen, ReasonScreen

Decide = Callable[..., None]  # (run_id, call_id, approve, args, note, result=None)
Validator = Callable[[str, GatedCall], Callable[[dict[str, Any]], str | None]]
HINT = "a approve · A all · e edit · n reject"


def unfocused_hint(keys: str, room: int) -> str:
    """The keys, and that they work once the list has the focus, in the `room` cells under
    the list (its corners take the rest): every key is shown at any width, the way to the
    focus said as briefly as needed (`⏎`, as the footer writes enter)."""
    tries = (f"enter, then {keys}", f"⏎ then {keys}", f"⏎: {keys}")
    return next((hint for hint in tries if room <= 0 or cell_len(hint) <= room), keys)


class ApprovalList(CursorList):
    """The run's gated calls, one line each (`tui.text.approval_text.pane_row`)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(APPROVALS)

    def __init__(self, pane: ApprovalPane, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pane = pane

    def row_count(self) -> int:
        return len(self.pane.calls)

    def render_row(self, index: int, width: int) -> Text:
        return pane_row(self.pane.calls[index], self.pane.clock())

    def cursor_moved(self) -> None:
        self.pane.show_args()

    def on_focus(self) -> None:
        self.pane.retitle()

    def on_resize(self) -> None:
        self.pane.retitle()  # the hint that fits the new width

    def on_blur(self) -> None:
        self.pane.retitle()

    def action_approve(self) -> None:
        if (gated := self.pane.waiting_call()) is not None:
            self.pane.decide(self.pane.run_id or "", gated.call.call_id, True, None, None)

    def action_approve_all(self) -> None:
        if self.pane.waiting_call(every=True) is not None:
            self.pane.decide(self.pane.run_id or "", None, True, None, None)

    def action_edit(self) -> None:
        if (gated := self.pane.waiting_call()) is None:
            return
        run_id = self.pane.run_id or ""
        check = self.pane.validator(run_id, gated)

        def edited(outcome: tuple[dict[str, Any], str | None] | None) -> None:
            if outcome is not None:
                args, note = outcome
                self.pane.decide(run_id, gated.call.call_id, True, args, note)

        self.app.push_screen(ArgsEditor(run_id, gated, check), edited)

    def action_reject(self) -> None:
        if (gated := self.pane.waiting_call()) is None:
            return
        run_id = self.pane.run_id or ""

        def given(reason: str | None) -> None:
            if reason is not None:
                self.pane.decide(run_id, gated.call.call_id, False, None, reason)

        self.app.push_screen(ReasonScreen(run_id, gated), given)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `g` gives a result only to a call a crash interrupted that still waits: the footer
        # shows it then; on any other call `g` (its hidden twin) says why it cannot.
        if action in ("give_result", "no_result_to_give"):
            return self.pane.can_give_result() == (action == "give_result")
        return super().check_action(action, parameters)

    def action_no_result_to_give(self) -> None:
        self.action_give_result()  # says why not

    def action_give_result(self) -> None:
        if (gated := self.pane.waiting_call()) is None:
            return
        if not gated.call.interrupted:
            self.pane.tell(notices.no_result_for(gated.call.name, gated.call.call_id))
            return
        run_id = self.pane.run_id or ""

        def given(result: str | None) -> None:
            if result is not None:
                self.pane.decide(run_id, gated.call.call_id, True, None, None, result=result)

        self.app.push_screen(GivenResultScreen(run_id, gated), given)


class ApprovalPane(Horizontal):
    def __init__(
        self,
        decide: Decide,
        validator: Validator,
        tell: Callable[[notices.Note], None],
        clock: Callable[[], float] = time.time,
        *,
        serves: Callable[[str], bool] = lambda run_id: True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.decide, self.validator, self.tell, self.clock = decide, validator, tell, clock
        self.serves = serves  # whether an agent here resumes the run (`r`)
        self.run_id: str | None = None
        self.calls: list[GatedCall] = []

    def compose(self) -> ComposeResult:
        yield ApprovalList(self, id="approvals")
        # Not focusable: tab goes from the calls to the timeline, as enter does (the whole
        # arguments are scrollable in the detail of the timeline's `approval?` row).
        with VerticalScroll(id="approval-args", can_focus=False):
            yield Static(Text(""), markup=False, id="approval-args-body")

    @property
    def call_list(self) -> ApprovalList:
        return self.query_one(ApprovalList)

    def on_mount(self) -> None:
        self.display = False

    def show_run(self, row: RunRow | None, log: RunEvents | None) -> None:
        """The gated calls of `row`'s run (its lines `log`) while it awaits approval; hidden
        otherwise. The cursor stays on its call, else goes to the first that waits."""
        awaiting = row is not None and log is not None and row.status == AWAITING_APPROVAL
        calls = gated_calls(log) if awaiting and log is not None else []
        if not calls and not self.calls:
            return  # hidden, and staying so (a live run's every event comes by here)
        before = self.current.call.call_id if self.current else None
        self.run_id = row.run_id if calls and row is not None else None
        self.calls = calls
        self.display = bool(calls)
        call_list = self.call_list
        call_list.rows_changed()
        ids = [g.call.call_id for g in calls]
        now = self.clock()
        first = next((i for i, g in enumerate(calls) if g.waiting(now)), 0)
        call_list.move_cursor(ids.index(before) if before in ids else first, notify=False)
        self.show_args()

    def clock_moved(self) -> None:
        """A second went by: "asked 3m ago" reads otherwise, a deadline may have passed."""
        if self.display:
            self.call_list.rows_changed()
            self.show_args()

    @property
    def current(self) -> GatedCall | None:
        cursor = self.call_list.cursor
        return self.calls[cursor] if 0 <= cursor < len(self.calls) else None

    def show_args(self) -> None:
        gated = self.current
        body = call_detail(gated, self.clock()) if gated is not None else Text("")
        self.query_one("#approval-args-body", Static).update(body)
        self.retitle()
        self.call_list.refresh_bindings()  # `g` in the footer comes and goes with the call

    def can_give_result(self) -> bool:
        """Whether the highlighted call is one a crash interrupted that still waits."""
        gated = self.current
        return gated is not None and gated.call.interrupted and gated.waiting(self.clock())

    def retitle(self) -> None:
        now = self.clock()
        waiting = sum(1 for g in self.calls if g.waiting(now))
        run = literal_line(short_id(self.run_id or ""))
        title = f"Approval · run {run} · {waiting} of {len(self.calls)} waiting"
        if waiting == 0 and self.calls:
            # As the decision's notice says: `r` only where an agent here serves the run.
            then = "r resumes it" if self.serves(self.run_id or "") else "no --agent here serves it"
            title = f"Approval · run {run} · no call waits: {then}"
        # The screen's focus, not `has_focus`: that is set after our focus handler has run.
        focused = self.is_mounted and self.screen.focused is self.call_list
        keys = INTERRUPTED_HINT if self.current and self.current.call.interrupted else HINT
        hint = keys if focused else unfocused_hint(keys, self.call_list.outer_size.width - 6)
        self.call_list.set_titles(title, hint if waiting else None)
        args_box = self.query_one("#approval-args")
        gated = self.current
        args_box.border_title = Content("Arguments" if gated is None else "Call")

    def waiting_call(self, every: bool = False) -> GatedCall | None:
        """The highlighted call (`every`: any call) if a person can still decide it; else
        None, having said why."""
        now = self.clock()
        if every:
            gated = next((g for g in self.calls if g.waiting(now)), None)
            if gated is None:
                self.tell(notices.Note("No call of this run waits for a decision.", timeout=6))
            return gated
        gated = self.current
        if gated is None:
            self.tell(notices.Note("No call is highlighted.", severity="warning"))
            return None
        if gated.waiting(now):
            return gated
        call = gated.call
        if gated.decision is not None:
            why = f"it was {decision_words(gated.decision)}"
        elif call.expired(now):
            why = "its deadline passed: it counts as rejected"
        else:
            why = "its result is recorded"
        self.tell(notices.not_waiting(call.name, call.call_id, why))
        return None
