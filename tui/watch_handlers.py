"""`WatchHandlers`: how `RunsApp` shows what its `Watcher` (and the other controllers) report:
rows in the list, new lines in the open run, a source gone and back, notices. A part of the app,
mixed into it, kept apart so that the app's module stays its wiring. Handlers go by Textual's
naming rule (`on_watcher_changed`), which a mixin's methods follow as the app's own do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentor.sources.source import Changes
from tui.controllers.approver import Approver
from tui.controllers.controller import Controller, while_running
from tui.controllers.watcher import Watcher
from tui.text import notices

if TYPE_CHECKING:  # to a type checker the mixin is the app it is mixed into
    from textual.app import App

    from agentor.sources.source import RunSource
    from tui.controllers.watcher import Watcher
    from tui.widgets.approval_pane import ApprovalPane
    from tui.widgets.run_list import RunList
    from tui.widgets.runs_pane import RunsPane
    from tui.widgets.timeline import Timeline

    _Base = App[str | None]
else:
    _Base = object


class WatchHandlers(_Base):
    """Mixed into `RunsApp` (an `App`), whose widgets and controllers these use."""

    if TYPE_CHECKING:
        approver: Approver
        approval_pane: ApprovalPane
        run_list: RunList
        runs_pane: RunsPane
        source: RunSource
        timeline: Timeline
        watcher: Watcher

        def show_rows(self) -> None: ...
        def show_approvals(self) -> None: ...
        def open_run(self, run_id: str | None) -> None: ...
        def tell_note(self, note: notices.Note) -> None: ...

    @while_running
    def on_watcher_changed(self, message: Watcher.Changed) -> None:
        self.apply_changes(message.changes)
        if message.moved:
            self.show_rows()

    def apply_changes(self, changes: Changes) -> None:
        """Show what the source found: rows in the list, new lines in the open run."""
        if not changes:
            return
        self.approver.runs_changed(changes)
        open_id = self.timeline.run_id
        if changes.added or changes.updated or changes.removed:
            self.show_rows()
        elif changes.appended:
            # Lines appended to runs move no row (a new place or status is `updated`): only
            # these rows' counts changed, the rest of the list stays drawn.
            self.run_list.runs_updated(changes.appended)
        if open_id is None:
            # Nothing open (say the run was unreadable): its row may be readable now.
            current = self.run_list.current
            if current is not None and current.run_id in changes.updated | changes.added:
                self.open_run(current.run_id)
            return
        if open_id in changes.removed:
            self.timeline.clear(f"Run {open_id} was deleted.")
        elif open_id in changes.updated or open_id in changes.appended:
            self.timeline.grow()
            self.show_approvals()

    @while_running
    def on_watcher_filled(self) -> None:
        self.show_rows()

    @while_running
    def on_watcher_ticked(self, message: Watcher.Ticked) -> None:
        if message.moved:
            self.show_rows()
        else:
            self.run_list.clock_moved()
        self.approval_pane.clock_moved()  # "asked 3m ago", a deadline passing

    @while_running
    def on_watcher_gone(self, message: Watcher.Gone) -> None:
        self.runs_pane.gone = True
        self.run_list.empty_message = notices.nothing_left(self.source.where)
        self.apply_changes(message.changes)
        self.show_rows()
        self.timeline.clear("The run directory was deleted.")
        self.tell_note(notices.source_gone(self.source.where))

    @while_running
    def on_watcher_back(self) -> None:
        self.runs_pane.gone = False
        self.run_list.empty_message = "No runs yet."
        self.show_rows()
        if self.timeline.run_id is None and self.run_list.current is not None:
            self.open_run(self.run_list.current.run_id)
        self.tell_note(notices.source_back(self.source.where))

    @while_running
    def on_controller_notice(self, message: Controller.Notice) -> None:
        self.tell_note(message.note)

    @while_running
    def on_approver_decided(self, message: Approver.Decided) -> None:
        self.watcher.refresh_run(message.run_id)  # the decision shows without a watch too
