"""`RunsApp`: the run list, the timeline of the selected run and the detail of one event.

Wiring only. The runs come from a `RunSource` (`agentor.sources.source`; a FileStore directory is
`agentor.sources.directory.DirectorySource`), never re-derived here; what the screen says comes from
`tui.text`, drawing from `tui.widgets`. Three controllers work beside the widgets and report by
messages: `Watcher` keeps the screen in step with the source, `Resumer` resumes a run in this
process, `Approver` records decisions on gated calls. Attributes down, messages up: the app
calls into widgets and controllers; they post.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterable
from typing import ClassVar

from textual import on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.notifications import Notify, SeverityLevel
from textual.screen import Screen
from textual.widgets import Input

from agentor.agents import AgentSet
from agentor.engine.statuses import UNREADABLE
from agentor.literal import literal_line
from agentor.sources.directory import DirectorySource
from agentor.sources.source import RunSource
from tui.compare_actions import CompareActions
from tui.controllers.approver import Approver
from tui.controllers.controller import while_running
from tui.controllers.forker import Forker
from tui.controllers.index_saver import IndexSaver
from tui.controllers.resumer import Resumer
from tui.controllers.watcher import Watcher
from tui.cursor_actions import CursorActions
from tui.fork_handlers import ForkHandlers
from tui.keys import bindings, palette
from tui.keys.model import APP
from tui.resume_handlers import ResumeHandlers
from tui.shown_notes import ShownNotes
from tui.store_actions import StoreActions
from tui.text.fork_text import lineage_line
from tui.text.notices import Note
from tui.text.shortpath import source_title
from tui.watch_handlers import WatchHandlers
from tui.widgets.approval_pane import ApprovalPane
from tui.widgets.event_detail import EventDetail
from tui.widgets.help_screen import HelpScreen
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.run_list import RunList
from tui.widgets.runs_pane import RunsPane
from tui.widgets.stream_line import StreamLine
from tui.widgets.timeline import Timeline
from tui.widgets.timeline_pane import TimelinePane


class RunsApp(
    CursorActions,
    CompareActions,
    WatchHandlers,
    ResumeHandlers,
    ForkHandlers,
    StoreActions,
    App[str | None],
):
    """Browse, follow and resume the runs of one source (a FileStore directory, a schema of a
    PostgreSQL database)."""

    CSS_PATH = "app.tcss"
    TITLE = "agentor-tui"
    BINDINGS: ClassVar[list[BindingType]] = bindings(APP)

    def __init__(
        self,
        source: RunSource | str | os.PathLike[str],
        agents: AgentSet | None = None,
        watch: bool = True,
        clock: Callable[[], float] = time.time,
        run_id: str | None = None,
        by: str | None = None,
    ) -> None:
        super().__init__()
        self.first_run_id = run_id  # `agentor-tui path/to/<run id>.jsonl`: open that run
        self.source = source if isinstance(source, RunSource) else DirectorySource(source, clock)
        # `watch` is taken by DOMNode.watch: `watching` says whether watchers and timers run.
        self.watching = watch
        self.watcher = Watcher(self.source, live=watch)
        self.index_saver = IndexSaver(self.source, live=watch)
        self.resumer = Resumer(self.source, agents if agents is not None else AgentSet())
        # `by`: whom the decisions taken here are recorded as (None: user@host).
        self.approver = Approver(self.source, self.resumer.agents, self.resumer, by)
        self.forker = Forker(self.source, self.resumer.agents)  # F: forks run here
        self.clock = clock
        self.source_label = literal_line(source_title(self.source))  # the list's title
        self.shown_notes = ShownNotes()

    def compose(self) -> ComposeResult:
        resuming = self.resumer  # `lambda` reads `run_id` when asked, as the pane needs it
        yield RunsPane(
            self.source_label,
            self.source.rows,
            lambda: resuming.run_id,
            self.clock,
            id="runs-pane",
        )
        approver = self.approver
        yield ApprovalPane(
            approver.decide, approver.validator, self.tell_note, self.clock, id="approval-pane"
        )
        with Horizontal(id="bottom"):
            yield TimelinePane(id="timeline-pane")
            yield EventDetail(id="detail")
        yield KeysFooter()
        yield self.watcher
        yield self.index_saver
        yield self.resumer
        yield self.approver
        yield self.forker

    # -- children ------------------------------------------------------------------------------

    @property
    def run_list(self) -> RunList:
        return self.query_one("#runs", RunList)

    @property
    def timeline(self) -> Timeline:
        return self.query_one("#timeline", Timeline)

    @property
    def event_detail(self) -> EventDetail:
        return self.query_one("#detail", EventDetail)

    @property
    def stream_line(self) -> StreamLine:
        return self.query_one("#stream", StreamLine)

    @property
    def runs_pane(self) -> RunsPane:
        return self.query_one("#runs-pane", RunsPane)

    @property
    def approval_pane(self) -> ApprovalPane:
        return self.query_one(ApprovalPane)

    # -- start ---------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.stream_line.display = False
        self.timeline.clear("Select a run to see its events.")
        self.event_detail.clear()
        self.source.scan()
        if self.source.error is not None:
            self.run_list.empty_message = self.source.error
        self.show_rows()
        self.run_list.focus()
        if self.first_run_id is not None:
            self.call_after_refresh(self._open_first_run, self.first_run_id)  # after the focus
        # What exists now (Textual's DOM, the first scan's rows) lives as long as the app: out
        # of the collector's sight, a full collection takes milliseconds instead of tens of
        # them, and one no longer lands between an append and its line on screen.
        gc.freeze()
        self.watcher.start()
        self.index_saver.start()
        self.approver.start()

    def on_unmount(self) -> None:
        gc.unfreeze()
        self.source.close()  # a database source's connections

    # -- the run list --------------------------------------------------------------------------

    def show_rows(self) -> None:
        self.runs_pane.show_rows()

    def _open_first_run(self, run_id: str) -> None:
        """The run named on the command line: selected, its timeline open and focused."""
        if self.run_list.select(run_id):
            self.open_run(run_id)
            self.screen.set_focus(self.timeline)
        else:
            self.tell(f"Run {run_id} is not in {self.source.where}.", severity="warning")

    @on(RunList.Highlighted)
    @while_running
    def _run_highlighted(self, message: RunList.Highlighted) -> None:
        self.open_run(message.run_id)

    def open_run(self, run_id: str | None) -> None:
        self._open_run(run_id)
        self.show_approvals()

    def _open_run(self, run_id: str | None) -> None:
        timeline = self.timeline
        if run_id is None:
            timeline.clear("No run selected.")
            return
        if run_id == timeline.run_id and timeline.run_log is not None:
            return
        row = self.source.get(run_id)
        if row is not None and row.status == UNREADABLE:
            timeline.clear(f"Run {run_id} is unreadable: {row.error or 'unknown error'}")
            return
        try:
            log = self.source.open(run_id)
        except (OSError, KeyError, ValueError) as exc:
            timeline.clear(f"Run {run_id} cannot be opened: {exc}")
            return
        timeline.show(run_id, log)

    def show_approvals(self) -> None:
        """The open run's gated calls while it awaits approval (the focus leaves them after)."""
        timeline, pane, run_id = self.timeline, self.approval_pane, self.timeline.run_id
        pane.show_run(self.source.get(run_id) if run_id else None, timeline.run_log)
        if not pane.display and self.focused is pane.call_list:
            self.screen.set_focus(timeline)  # resumed, say: its events come in there

    # -- timeline and detail -------------------------------------------------------------------

    @on(Timeline.Highlighted)
    @while_running  # a highlight queued as run_test shuts the app down finds no timeline
    def _event_highlighted(self, message: Timeline.Highlighted) -> None:
        self.show_detail(message.index, live=message.live)

    def show_detail(self, index: int | None, live: bool = False) -> None:
        """The detail of the open run's line `index` (`live`: the cursor follows new lines)."""
        timeline = self.timeline
        row = self.source.get(timeline.run_id) if timeline.run_id is not None else None
        run = row.summary if row is not None and row.complete else None
        target = (timeline.run_log, timeline.run_id, index, run, timeline.empty_message)
        self.event_detail.lineage = lineage_line(row)  # a fork's parent and fork point
        self.event_detail.point_at(target, live)

    def action_reload(self) -> None:
        self.watcher.reload()

    # -- filter --------------------------------------------------------------------------------

    def action_filter(self) -> None:
        self.runs_pane.open_filter()

    def action_cycle_status(self) -> None:
        self.runs_pane.cycle_status()

    # -- navigation ----------------------------------------------------------------------------

    # Focus moves at once (not `focus()`, which waits a turn), so keys typed right after
    # `enter` or `esc` already land in the pane they were meant for.

    def action_drill(self) -> None:
        focused, approvals = self.focused, self.approval_pane
        if focused is self.run_list:
            row = self.run_list.current
            if row is not None:
                self.open_run(row.run_id)
                into = approvals.call_list if approvals.display else self.timeline
                self.screen.set_focus(into)
        elif focused is approvals.call_list:
            self.screen.set_focus(self.timeline)
        elif focused is self.timeline:
            self.screen.set_focus(self.event_detail)

    def action_back(self) -> None:
        focused = self.focused
        if focused is self.event_detail:
            self.screen.set_focus(self.timeline)
        elif focused in (self.timeline, self.approval_pane.call_list):
            self.screen.set_focus(self.run_list)
        else:
            self.runs_pane.clear_filter()

    def action_follow(self) -> None:
        on_now = self.timeline.toggle_follow()
        self.tell("Following the newest event." if on_now else "Follow off.", timeout=2)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """q, ctrl+q, ctrl+c: quit, once a resume in flight has stopped; asked again, at once
        (the result is then the warning `tui.cli` prints as it ends the process)."""
        resumer = self.resumer
        if not resumer.running:
            self.exit()
        elif not resumer.quitting:
            resumer.quit_when_stopped()
        else:
            self.exit(resumer.abandon(), return_code=1)

    # -- everywhere ----------------------------------------------------------------------------

    def tell(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
    ) -> None:
        """A notification, shown literally (messages quote errors and text from logs). On the
        app's thread: a worker thread goes through `call_from_thread`."""
        self.tell_note(Note(message, title, severity, timeout))

    def tell_note(self, note: Note) -> None:
        """Show `note` (literally), in place of an older one of its kind, beside a few others
        at most (`ShownNotes`)."""
        shown = list(self._notifications)
        for old in self.shown_notes.to_take_down(shown, note.kind):
            self._unnotify(old, refresh=False)  # Textual's own way, as a toast's timer does
        self.post_message(Notify(self.shown_notes.notification(note)))
        if note.bell:
            self.bell()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "filter" and isinstance(self.focused, Input):
            return False  # `/` is typed into the input (the timeline's search bar): not shown
        # Watched, the list is always current: no reload (and none in the footer).
        return not (action == "reload" and self.watching)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title not in ("Maximize", "Minimize"):  # ours toggles (m)
                yield command
        for title, help_text, action in palette():
            if self.check_action(action, ()) is False:
                continue
            node_id, _, name = action.rpartition(".")
            target = self.query_one(f"#{node_id}") if node_id else self
            yield SystemCommand(title, help_text, getattr(target, f"action_{name}"))
