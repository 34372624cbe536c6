"""`CursorActions`: the app's actions on what the cursor is on (`c` copy the run id, `m`
maximize the focused pane, `v` an event's raw JSON, `y` copy its value). A part of `RunsApp`,
mixed into it, kept apart so that the app's module stays its wiring."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.dom import DOMNode
from textual.widget import Widget

from agentor.sources.source import RunEvents
from tui.text.event_value import copy_value
from tui.widgets.raw_event import RawEventScreen
from tui.widgets.run_list import RunList
from tui.widgets.timeline import Timeline

# What `m` maximizes: the pane holding the focus, with its title and bars.
PANES = ("runs-pane", "approval-pane", "timeline-pane", "detail")


if TYPE_CHECKING:  # to a type checker the mixin is the App it is mixed into
    from textual.app import App
    from textual.notifications import SeverityLevel

    _Base = App[str | None]
else:
    _Base = object


class CursorActions(_Base):
    """Mixed into `RunsApp` (an `App`), whose run list, timeline and `tell` these use."""

    run_list: RunList
    timeline: Timeline

    if TYPE_CHECKING:

        def tell(
            self,
            message: str,
            *,
            title: str = "",
            severity: SeverityLevel = "information",
            timeout: float | None = None,
        ) -> None: ...

    def action_copy_id(self) -> None:
        row = self.run_list.current
        if row is None:
            self.tell("No run selected.", severity="warning")
            return
        self.copy_to_clipboard(row.run_id)
        # The whole id, alone: to copy by hand where the terminal ignores the clipboard.
        self.tell(row.run_id, title="Copied run id", timeout=8)

    def action_toggle_maximize(self) -> None:
        """The focused pane (with its title and bars) fills the screen, or all panes come
        back (`esc` does that too, Textual's own rule)."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        pane: DOMNode | None = screen.focused
        while pane is not None and pane.id not in PANES:
            pane = pane.parent
        if isinstance(pane, Widget):
            screen.maximized = pane

    def action_view_raw(self) -> None:
        if (at := self._event_at_cursor()) is not None:
            screen = RawEventScreen(self.timeline.run_id or "", *at)
            self.push_screen(screen)

    def action_copy_value(self) -> None:
        if (at := self._event_at_cursor()) is not None:
            copied = copy_value(*at)
            self.copy_to_clipboard(copied.clipboard)
            self.tell(copied.notice, timeout=4)

    def _event_at_cursor(self) -> tuple[RunEvents, int] | None:
        """The open run and the line its timeline highlights (else why there is none)."""
        timeline = self.timeline
        if timeline.run_log is None or timeline.cursor < 0:
            self.tell("No event highlighted: select a run with events first.", severity="warning")
            return None
        return timeline.run_log, timeline.cursor
