"""`RunsApp`: the run list, the timeline of the selected run and the detail of one event.

Wiring only: the data comes from `tui.runs.RunIndex` (never re-derived here), which runs the
list shows from `tui.run_filter`, text from `tui.summaries` and `tui.detail`, drawing from
`tui.widgets`. `tui.live` keeps the screen in step with the directory; `tui.resume` resumes a
run in this process.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.dom import DOMNode
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input
from textual.worker import Worker

from agentor.engine.events import GENERATION

from . import live
from .agents import AgentSet
from .detail import detail, segment_start
from .event_value import copy_value
from .formatting import short_path
from .keys import BINDINGS, PALETTE
from .literal import literal_line
from .messages import (
    EventHighlighted,
    FilterChanged,
    FilterCleared,
    FilterSubmitted,
    ResumeHeld,
    ResumeProgress,
    RunHighlighted,
)
from .resume import Resumer
from .run_filter import RunFilter, list_title
from .runs import Changes, RunIndex, RunLog
from .widgets.event_detail import EventDetail
from .widgets.filter_bar import FilterBar
from .widgets.help_screen import HelpScreen
from .widgets.keys_footer import KeysFooter
from .widgets.raw_event import RawEventScreen
from .widgets.run_list import RunList
from .widgets.stream_line import StreamLine
from .widgets.timeline import Timeline
from .widgets.timeline_pane import TimelinePane

# What `m` maximizes: the pane holding the focus, with its title and bars.
PANES = ("runs-pane", "timeline-pane", "detail")
# While the timeline follows new events, its detail is rebuilt at most this often.
LIVE_DETAIL_S = 0.1


class RunsApp(App[str | None]):
    """Browse, follow and resume the runs of one FileStore directory."""

    CSS_PATH = "app.tcss"
    TITLE = "agentor-tui"
    BINDINGS: ClassVar[list[BindingType]] = list(BINDINGS)

    def __init__(
        self,
        directory: Path,
        agents: AgentSet | None = None,
        watch: bool = True,
        clock: Callable[[], float] = time.time,
        run_id: str | None = None,
    ) -> None:
        super().__init__()
        self.first_run_id = run_id  # `agentor-tui path/to/<run id>.jsonl`: open that run
        self.directory = Path(directory)
        self.agents = agents if agents is not None else AgentSet()
        # `watch` is taken by DOMNode.watch; `live` says whether watchers and timers run.
        self.live = watch
        self.clock = clock
        self.index = RunIndex(self.directory, clock=clock)
        self.directory_label = literal_line(short_path(self.directory))  # the list's title
        self.run_filter = RunFilter()
        self.resumer = Resumer(self)
        self.directory_gone = False
        self.watched_directory: tuple[int, int] | None = None  # (device, inode) being watched
        self.watch_armed = False  # the watcher reports changes now (`live.watch_directory`)
        # The fill worker (`tui.live`): the one running, and whether rows want another pass.
        self.fill_worker: Worker[None] | None = None
        self.fill_again = False
        # Runs whose files changed under a resume, read together at the next turn of the loop.
        self._stale_runs: set[str] = set()
        self._stale_liveness = False
        self._pane_titles: tuple[str, str] = ("", "")
        # Runs shown only because they are kept in view (`show_rows`), and the run the cursor
        # was on when `/` was pressed (it goes back there while it matches what is typed).
        self._kept: set[str] = set()
        self._filter_from: str | None = None
        # The detail following new events (see `_follow_detail`).
        self._detail_due = False
        self._detail_shown_at = 0.0

    def compose(self) -> ComposeResult:
        with Vertical(id="runs-pane"):
            yield FilterBar(id="filter")
            yield RunList(self.clock, id="runs")
        with Horizontal(id="bottom"):
            yield TimelinePane(id="timeline-pane")
            yield EventDetail(id="detail")
        yield KeysFooter()

    # -- widgets -------------------------------------------------------------------------------

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
    def filter_bar(self) -> FilterBar:
        return self.query_one("#filter", FilterBar)

    # -- start ---------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.filter_bar.display = False
        self.stream_line.display = False
        self.timeline.clear("Select a run to see its events.")
        self.event_detail.clear()
        self.index.scan()
        if self.index.error is not None:
            self.run_list.empty_message = self.index.error
        self.show_rows()
        self.run_list.focus()
        if self.first_run_id is not None:
            self.call_after_refresh(self._open_first_run, self.first_run_id)  # after the focus
        # What exists now (Textual's DOM, the first scan's rows) lives as long as the app: out
        # of the collector's sight, a full collection takes milliseconds instead of tens of
        # them, and one no longer lands between an append and its line on screen.
        gc.freeze()
        live.start(self)

    def on_unmount(self) -> None:
        gc.unfreeze()

    # -- the run list --------------------------------------------------------------------------

    def show_rows(self, keep_in_view: bool = True) -> None:
        """The rows the filter shows; with `keep_in_view`, also the selected run and the one
        being resumed while shown, whatever their status becomes (a resumed run turns running),
        until the user moves away (`_run_highlighted`) or changes the filter."""
        every = self.index.rows()
        keep: set[str] = set()
        if keep_in_view:
            current = self.run_list.current
            ids = (self.resumer.run_id, current.run_id if current else None)
            keep = {i for i in ids if i is not None and self.run_list.index_of(i) is not None}
        rows = self.run_filter.apply(every, keep)
        self._kept = {r.run_id for r in rows if r.run_id in keep and not self.run_filter.admits(r)}
        self.run_list.set_rows(rows, hidden=len(every) - len(rows))
        self.show_title()

    def show_title(self) -> None:
        """The list's title: the directory and what its rows show, and the filter."""
        run_list = self.run_list
        total = len(run_list.rows) + run_list.hidden
        counts = list_title(run_list.rows, total, run_list.shown_status)
        title = f"{self.directory_label} · {counts}"
        if self.directory_gone:
            title += " · directory gone"
        subtitle = self.run_filter.describe()
        if (title, subtitle) != self._pane_titles:  # a new title repaints the whole pane
            self._pane_titles = (title, subtitle)
            pane = self.query_one("#runs-pane")
            pane.border_title = Content(title)
            pane.border_subtitle = Content(subtitle) if subtitle else None

    def _open_first_run(self, run_id: str) -> None:
        """The run named on the command line: selected, its timeline open and focused."""
        if self.run_list.select(run_id):
            self.open_run(run_id)
            self.screen.set_focus(self.timeline)
        else:
            self.tell(f"Run {run_id} is not in {self.directory}.", severity="warning")

    @on(RunHighlighted)
    def _run_highlighted(self, message: RunHighlighted) -> None:
        self.open_run(message.run_id)
        if self._kept - {message.run_id, self.resumer.run_id}:
            self.show_rows()  # moved away from a run only kept in view: the filter takes it

    def open_run(self, run_id: str | None) -> None:
        timeline = self.timeline
        if run_id is None:
            timeline.clear("No run selected.")
            return
        if run_id == timeline.run_id and timeline.run_log is not None:
            return
        row = self.index.get(run_id)
        if row is not None and row.status == "unreadable":
            timeline.clear(f"Run {run_id} is unreadable: {row.error or 'unknown error'}")
            return
        try:
            log = self.index.open(run_id)
        except (OSError, KeyError, ValueError) as exc:
            timeline.clear(f"Run {run_id} cannot be opened: {exc}")
            return
        timeline.show(run_id, log)

    # -- timeline and detail -------------------------------------------------------------------

    @on(EventHighlighted)
    def _event_highlighted(self, message: EventHighlighted) -> None:
        if message.live:
            self._follow_detail()
        else:
            self._detail_due = False  # a key moved the cursor: show its event now
            self.show_detail(message.index)

    def _follow_detail(self) -> None:
        """The cursor follows new events: the detail follows them after the new lines are
        drawn, at most every LIVE_DETAIL_S. Building a detail and laying it out costs as much
        as the rest of the frame; in a burst only the newest event's detail is built."""
        if self._detail_due:
            return  # one is on its way; it shows wherever the cursor is by then
        self._detail_due = True
        wait = self._detail_shown_at + LIVE_DETAIL_S - time.monotonic()
        if wait > 0:
            self.set_timer(wait, self._show_due_detail)
        else:
            self.call_after_refresh(self._show_due_detail)

    def _show_due_detail(self) -> None:
        if not self._detail_due or live.closing(self):
            return
        self._detail_due = False
        self._detail_shown_at = time.monotonic()
        cursor = self.timeline.cursor
        self.show_detail(cursor if cursor >= 0 else None)

    def show_detail(self, index: int | None) -> None:
        timeline = self.timeline
        log, run_id = timeline.run_log, timeline.run_id
        if index is None or log is None or run_id is None or index >= len(log):
            self.event_detail.clear(timeline.empty_message if log is None else "")
            return
        item = log.item(index)
        kind = getattr(item, "type", None)
        request = log.request(index) if kind == GENERATION else None
        setup = segment_start(log, index) if kind == GENERATION else None
        row = self.index.get(run_id)
        run = row.summary if row is not None and row.complete else None
        body = detail(item, index, run_id, log.start_time, request, setup, run)
        title = f"Detail · {literal_line(kind, 20)}" if kind else "Detail · unreadable line"
        self.event_detail.show(body, f"{title} · line {index + 1}")

    # -- changes on disk -----------------------------------------------------------------------

    def apply_changes(self, changes: Changes) -> None:
        """Show what `RunIndex.refresh` found: rows in the list, new lines in the open run."""
        if not changes:
            return
        if changes.incomplete:
            live.want_fill(self)  # a big log arrived or was replaced: its counts need a read
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

    def refresh_run(self, run_id: str, liveness: bool = False) -> None:
        """Read what one run's file gained (and, with `liveness`, who holds which lock now).

        Calls made in a burst (a resume records several events at once) are read together,
        once, after the messages already waiting: one read and one redraw for the burst."""
        if not self._stale_runs and not self._stale_liveness:
            self.call_later(self._refresh_stale)
        self._stale_runs.add(run_id)
        self._stale_liveness |= liveness

    def _refresh_stale(self) -> None:
        runs, liveness = self._stale_runs, self._stale_liveness
        self._stale_runs, self._stale_liveness = set(), False
        if live.closing(self):
            return
        changes = self.index.refresh([self.directory / f"{run_id}.jsonl" for run_id in runs])
        moved = liveness and self.index.refresh_liveness()
        self.apply_changes(changes)
        if moved:
            self.show_rows()

    # -- filter --------------------------------------------------------------------------------

    def action_filter(self) -> None:
        current = self.run_list.current
        self._filter_from = current.run_id if current else None
        self.filter_bar.open()

    def set_filter(self, text: str) -> None:
        current = self.run_list.current
        self.run_filter.text = text
        self.refilter(self._filter_from or (current.run_id if current else None))

    def refilter(self, run_id: str | None) -> None:
        """The filter changed: show what it admits, the cursor on `run_id` (the run it was on
        when the change began) when that is shown, else on the first run."""
        self.show_rows(keep_in_view=False)
        if run_id is None or not self.run_list.select(run_id):
            self.run_list.move_cursor(0)

    @on(FilterChanged)
    def _filter_changed(self, message: FilterChanged) -> None:
        self.set_filter(message.text)

    @on(FilterSubmitted)
    def _filter_submitted(self, message: FilterSubmitted) -> None:
        self.filter_bar.display = False
        self.set_filter(message.text)
        self._filter_from = None
        self.screen.set_focus(self.run_list)

    @on(FilterCleared)
    def _filter_cleared(self, message: FilterCleared) -> None:
        self.set_filter("")
        self._filter_from = None
        self.screen.set_focus(self.run_list)

    def action_cycle_status(self) -> None:
        current = self.run_list.current
        self.run_filter.cycle_status()
        self.refilter(current.run_id if current else None)

    # -- navigation ----------------------------------------------------------------------------

    # Focus moves at once (not `focus()`, which waits a turn), so keys typed right after
    # `enter` or `esc` already land in the pane they were meant for.

    def action_drill(self) -> None:
        focused = self.focused
        if focused is self.run_list:
            row = self.run_list.current
            if row is not None:
                self.open_run(row.run_id)
                self.screen.set_focus(self.timeline)
        elif focused is self.timeline:
            self.screen.set_focus(self.event_detail)

    def action_back(self) -> None:
        focused = self.focused
        if focused is self.event_detail:
            self.screen.set_focus(self.timeline)
        elif focused is self.timeline:
            self.screen.set_focus(self.run_list)
        elif self.run_filter.text:
            self.filter_bar.value = ""
            self.filter_bar.display = False
            self.set_filter("")

    def action_follow(self) -> None:
        on_now = self.timeline.toggle_follow()
        self.tell("Following the newest event." if on_now else "Follow off.", timeout=2)

    def action_copy_id(self) -> None:
        row = self.run_list.current
        if row is None:
            self.tell("No run selected.", severity="warning")
            return
        self.copy_to_clipboard(row.run_id)
        # The whole id, alone: to copy by hand where the terminal ignores the clipboard.
        self.tell(row.run_id, title="Copied run id", timeout=8)

    def action_reload(self) -> None:
        live.reload(self)

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
            self.push_screen(RawEventScreen(self.timeline.run_id or "", *at))

    def action_copy_value(self) -> None:
        if (at := self._event_at_cursor()) is not None:
            copied = copy_value(*at)
            self.copy_to_clipboard(copied.clipboard)
            self.tell(copied.notice, timeout=4)

    def _event_at_cursor(self) -> tuple[RunLog, int] | None:
        """The open run and the line its timeline highlights (else why there is none)."""
        timeline = self.timeline
        if timeline.run_log is None or timeline.cursor < 0:
            self.tell("No event highlighted: select a run with events first.", severity="warning")
            return None
        return timeline.run_log, timeline.cursor

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    # -- resume --------------------------------------------------------------------------------

    def action_resume(self) -> None:
        self.resumer.start(self.run_list.current)

    @on(ResumeHeld)
    def _resume_held(self, message: ResumeHeld) -> None:
        self.refresh_run(message.run_id, liveness=True)

    @on(ResumeProgress)
    def _resume_progress(self, message: ResumeProgress) -> None:
        self.resumer.progress(message)

    def action_stop_resume(self) -> None:
        self.resumer.stop()

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
        """A notification, shown literally (messages quote errors and text from logs)."""
        self.notify(
            literal_line(message),
            title=literal_line(title),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "filter" and isinstance(self.focused, Input):
            return False  # `/` is typed into the input (the timeline's search bar): not shown
        # Watched, the list is always current: no reload (and none in the footer).
        return not (action == "reload" and self.live)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title not in ("Maximize", "Minimize"):  # ours toggles (m)
                yield command
        for title, help_text, action in PALETTE:
            if self.check_action(action, ()) is False:
                continue
            node_id, _, name = action.rpartition(".")
            target = self.query_one(f"#{node_id}") if node_id else self
            yield SystemCommand(title, help_text, getattr(target, f"action_{name}"))
