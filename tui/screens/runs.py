"""`RunsScreen`: the run list, the approvals of the selected run, its timeline and the detail of
one event; the keys that act on them; what the app's controllers report, shown.

The screen owns its panes and their handlers (`@on(Widget.Message)`). The app makes and holds
the controllers (`Controllers`); the screen mounts them, calls into them, and they report to it
by messages: `Watcher` keeps the screen in step with the source, `Resumer` resumes a run here,
`Approver` records decisions on gated calls, `Forker` forks, `RunReader` reads runs whole for
`M` and `P`, `StoreKeeper` pins, deletes, exports and searches, `Experimenter` runs an
experiment on the runs selected (`X`). Every sentence comes from
`tui.text`; the rows come from the source, never re-derived here. Attributes down, messages up.
"""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input

from agentor.engine.events import GENERATION, RUN_START, TEXT_DELTA, TOOL_RESULT, Event
from agentor.engine.statuses import STOPPING, UNREADABLE
from agentor.sources.lineage import fork_tree, forks_of
from agentor.sources.playback import PlaybackClock
from agentor.sources.runrow import RunRow
from agentor.sources.source import Changes, RunEvents, RunSource
from tui.controllers.approver import Approver
from tui.controllers.controller import Controller, while_running
from tui.controllers.experimenter import Experimenter
from tui.controllers.forker import Forker
from tui.controllers.index_saver import IndexSaver
from tui.controllers.resumer import Resumer
from tui.controllers.run_reader import RunReader
from tui.controllers.store_keeper import StoreKeeper
from tui.controllers.watcher import Watcher
from tui.keys import SCREEN, bindings
from tui.text import compare_notes, experiment_notes, fork_text, notices, store_notes
from tui.text.detail import RunTotals
from tui.text.event_value import copy_value
from tui.text.experiment_form import ExperimentRequest
from tui.text.fork_text import ForkRequest, lineage_line
from tui.text.notices import Note
from tui.text.stats_text import runs_described
from tui.widgets.approval_pane import ApprovalPane
from tui.widgets.compare_screen import CompareScreen
from tui.widgets.delete_screen import DeleteScreen
from tui.widgets.event_detail import EventDetail
from tui.widgets.experiment_form import ExperimentForm
from tui.widgets.experiments_screen import ExperimentsScreen
from tui.widgets.export_screen import ExportScreen
from tui.widgets.fork_screen import ForkScreen, form_at
from tui.widgets.fork_tree import ForkTreeScreen
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.pairs_screen import PairsScreen
from tui.widgets.playback_screen import PlaybackScreen
from tui.widgets.raw_event import RawEventScreen
from tui.widgets.run_list import RunList
from tui.widgets.runs_pane import RunsPane
from tui.widgets.runs_search import RunsSearchScreen
from tui.widgets.stats_screen import StatsScreen
from tui.widgets.stream_line import StreamLine
from tui.widgets.timeline import Timeline
from tui.widgets.timeline_pane import TimelinePane

# What `m` maximizes: the pane holding the focus, with its title and bars.
PANES = ("runs-pane", "approval-pane", "timeline-pane", "detail")


@dataclass(frozen=True)
class Controllers:
    """The app's controllers, which the screen mounts and which report to it."""

    watcher: Watcher
    index_saver: IndexSaver
    resumer: Resumer
    approver: Approver
    forker: Forker
    reader: RunReader
    keeper: StoreKeeper
    experimenter: Experimenter

    def __iter__(self) -> Iterator[Controller]:
        yield from (self.watcher, self.index_saver, self.resumer, self.approver)
        yield from (self.forker, self.reader, self.keeper, self.experimenter)


class RunsScreen(Screen[None]):
    """Browse, follow and resume the runs of one source, and act on them."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(SCREEN)
    # What times a playback (None: Textual's timers); a test sets a clock it moves itself.
    playback_clock: PlaybackClock | None = None

    def __init__(
        self,
        source: RunSource,
        controllers: Controllers,
        tell_note: Callable[[Note], None],
        *,
        label: str,
        clock: Callable[[], float],
        watching: bool,
        first_run_id: str | None = None,
        export_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__()
        self.source = source
        self.controllers = controllers
        self.watcher, self.resumer = controllers.watcher, controllers.resumer
        self.approver, self.forker = controllers.approver, controllers.forker
        self.reader, self.keeper = controllers.reader, controllers.keeper
        self.experimenter = controllers.experimenter
        self.candidates: set[str] = set()  # taken by the experiment here, not measured yet
        self.tell_note = tell_note  # the app's: a note shown literally, beside a few others
        self.label = label  # the source, as the list's title names it (literal)
        self.clock = clock
        self.watching = watching  # watched, the list is always current: no ctrl+r
        self.first_run_id = first_run_id  # `agentor-tui path/to/<run id>.jsonl`: open it
        self.export_dir = export_dir  # where `w` writes (None: the current directory)
        # Set once the panes are composed and mounted and the screen has started its work
        # (`on_mount`): the app is ready then, for keys and for a test's pilot.
        self.mounted = asyncio.Event()

    def compose(self) -> ComposeResult:
        resuming = self.resumer  # `lambda` reads `run_id` when asked, as the pane needs it
        yield RunsPane(
            self.label, self.source.rows, lambda: resuming.run_id, self.clock, id="runs-pane"
        )
        approver = self.approver
        yield ApprovalPane(
            approver.decide,
            approver.validator,
            self.tell_note,
            self.clock,
            serves=approver.serves,
            id="approval-pane",
        )
        with Horizontal(id="bottom"):
            yield TimelinePane(id="timeline-pane")
            yield EventDetail(id="detail")
        yield KeysFooter()
        yield from self.controllers

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
        try:
            self._start()
        finally:
            self.mounted.set()  # even when starting failed: the app waits for it

    def _start(self) -> None:
        self.stream_line.display = False
        self.timeline.clear(notices.SELECT_A_RUN)
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
        self.controllers.index_saver.start()
        self.approver.start()
        self.event_detail.totals_of = self._totals
        self.keeper.refresh_pins()

    def on_unmount(self) -> None:
        gc.unfreeze()

    # -- the run list --------------------------------------------------------------------------

    def show_rows(self) -> None:
        self.runs_pane.show_rows()

    def _open_first_run(self, run_id: str) -> None:
        """The run named on the command line: selected, its timeline open and focused."""
        if self.run_list.select(run_id):
            self.open_run(run_id)
            self.set_focus(self.timeline)
        else:
            self.tell_note(notices.not_in_source(run_id, self.source.where))

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
            timeline.clear(notices.NO_RUN_OPEN)
            return
        if run_id == timeline.run_id and timeline.run_log is not None:
            return
        row = self.source.get(run_id)
        if row is not None and row.status == UNREADABLE:
            timeline.clear(notices.unreadable_run(run_id, row.error))
            return
        try:
            log = self.source.open(run_id)
        except (OSError, KeyError, ValueError) as exc:
            timeline.clear(notices.cannot_open(run_id, exc))
            return
        timeline.show(run_id, log)

    def show_approvals(self) -> None:
        """The open run's gated calls while it awaits approval (the focus leaves them after)."""
        timeline, pane, run_id = self.timeline, self.approval_pane, self.timeline.run_id
        pane.show_run(self.source.get(run_id) if run_id else None, timeline.run_log)
        if not pane.display and self.focused is pane.call_list:
            self.set_focus(timeline)  # resumed, say: its events come in there

    def _selected(self) -> RunRow | None:
        """The run the store's keys act on; None (said) when there is none, or when a dialog
        is open above the list (`d` there deletes nothing)."""
        if not self.is_active:
            return None
        row = self.run_list.current
        if row is None:
            self.tell_note(notices.NO_RUN_SELECTED)
        return row

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

    def _totals(self, run_id: str) -> RunTotals | None:
        row = self.source.get(run_id)
        cost = row.cost if row is not None else None
        return RunTotals(cost, run_id in self.run_list.pinned)

    def action_reload(self) -> None:
        self.watcher.reload()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `/`, `E` and `X` are typed into the input that has the focus (the timeline's search
        # bar, or one of a dialog above this screen, the palette's too): not shown.
        typing = isinstance(self.app.focused, Input)
        if typing and action in ("filter", "experiments", "start_experiment", "nothing_selected"):
            return False
        # `X` starts an experiment on the runs selected (shown then); with none, its hidden
        # twin says how to select some.
        if action in ("start_experiment", "nothing_selected"):
            return bool(self.run_list.selected) == (action == "start_experiment")
        # Watched, the list is always current: no reload (and none in the footer).
        return not (action == "reload" and self.watching)

    # -- filter and navigation -----------------------------------------------------------------

    def action_filter(self) -> None:
        self.runs_pane.open_filter()

    def action_cycle_status(self) -> None:
        self.runs_pane.cycle_status()

    # Focus moves at once (not `focus()`, which waits a turn), so keys typed right after
    # `enter` or `esc` already land in the pane they were meant for.

    def action_drill(self) -> None:
        focused, approvals = self.focused, self.approval_pane
        if focused is self.run_list:
            row = self.run_list.current
            if row is not None:
                self.open_run(row.run_id)
                into = approvals.call_list if approvals.display else self.timeline
                self.set_focus(into)
        elif focused is approvals.call_list:
            self.set_focus(self.timeline)
        elif focused is self.timeline:
            self.set_focus(self.event_detail)

    def action_back(self) -> None:
        focused = self.focused
        if focused is self.event_detail:
            self.set_focus(self.timeline)
        elif focused in (self.timeline, self.approval_pane.call_list):
            self.set_focus(self.run_list)
        else:
            self.runs_pane.clear_filter()

    def action_follow(self) -> None:
        self.tell_note(notices.following(self.timeline.toggle_follow()))

    def _go_to(self, run_id: str, line: int | None) -> None:
        """Select `run_id` in the list (shown even if the filter hides it), open its timeline
        and focus it, at `line` (1-based) when given."""
        self.open_run(run_id)
        self.runs_pane.reveal(run_id)
        self.set_focus(self.timeline)
        if line is not None and 0 < line <= self.timeline.row_count():
            self.timeline.follow = False
            self.timeline.move_cursor(line - 1)

    # -- what the cursor is on: c, m, v, y ------------------------------------------------------

    def action_copy_id(self) -> None:
        row = self.run_list.current
        if row is None:
            self.tell_note(notices.NO_RUN_SELECTED)
            return
        self.app.copy_to_clipboard(row.run_id)
        self.tell_note(notices.copied_id(row.run_id))

    def action_toggle_maximize(self) -> None:
        """The focused pane (with its title and bars) fills the screen, or all panes come
        back (`esc` does that too, Textual's own rule)."""
        if self.maximized is not None:
            self.minimize()
            return
        pane: DOMNode | None = self.focused
        while pane is not None and pane.id not in PANES:
            pane = pane.parent
        if isinstance(pane, Widget):
            self.maximized = pane

    def action_view_raw(self) -> None:
        if (at := self._event_at_cursor()) is not None:
            self.app.push_screen(RawEventScreen(self.timeline.run_id or "", *at))

    def action_copy_value(self) -> None:
        if (at := self._event_at_cursor()) is not None:
            copied = copy_value(*at)
            self.app.copy_to_clipboard(copied.clipboard)
            self.tell_note(notices.copied_value(copied))

    def _event_at_cursor(self) -> tuple[RunEvents, int] | None:
        """The open run and the line its timeline highlights (else why there is none)."""
        timeline = self.timeline
        if timeline.run_log is None or timeline.cursor < 0:
            self.tell_note(notices.NO_EVENT)
            return None
        return timeline.run_log, timeline.cursor

    # -- the watcher's reports -----------------------------------------------------------------

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
            self.timeline.clear(notices.run_deleted(open_id))
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
        self.keeper.refresh_pins()  # `agentor pin` in a shell shows here too

    @while_running
    def on_watcher_gone(self, message: Watcher.Gone) -> None:
        self.runs_pane.gone = True
        self.run_list.empty_message = notices.nothing_left(self.source.where)
        self.apply_changes(message.changes)
        self.show_rows()
        self.timeline.clear(notices.DIRECTORY_DELETED)
        self.tell_note(notices.source_gone(self.source.where))

    @while_running
    def on_watcher_back(self) -> None:
        self.runs_pane.gone = False
        self.run_list.empty_message = notices.NO_RUNS_YET
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

    # -- r and x: a resume here ----------------------------------------------------------------

    def action_resume(self) -> None:
        self.resumer.start(self.run_list.current)

    def action_stop_resume(self) -> None:
        self.resumer.stop()

    @while_running
    def on_resumer_started(self, message: Resumer.Started) -> None:
        self.stream_line.start(message.run_id)

    @while_running
    def on_resumer_held(self, message: Resumer.Held) -> None:
        self.watcher.refresh_run(message.run_id, liveness=True)

    @while_running
    def on_resumer_progress(self, message: Resumer.Progress) -> None:
        """An event of the resume was recorded (or a text delta streamed): show it."""
        event, streaming_here = message.event, message.run_id == self.stream_line.run_id
        if event.type == TEXT_DELTA:
            if streaming_here:
                self.stream_line.add(event.text or "")
            return
        if event.type == GENERATION and streaming_here:
            self.stream_line.turn_done()
        # Recorded before it was announced: the file has it, read it like any other change.
        self.watcher.refresh_run(message.run_id, liveness=event.type == RUN_START)

    @while_running
    def on_resumer_stopping(self, message: Resumer.Stopping) -> None:
        self.run_list.show_status(message.run_id, STOPPING)
        self.runs_pane.show_title()
        self.stream_line.stopping(message.line)

    @while_running
    def on_resumer_ended(self, message: Resumer.Ended) -> None:
        run_id = message.run_id
        if message.unsaved:
            self.run_list.mark(run_id, notices.UNSAVED_MARK)
        self.run_list.show_status(run_id, None)
        self.runs_pane.show_title()
        self.stream_line.stop()
        self.watcher.refresh_run(run_id, liveness=True)
        if message.quit:
            self.app.exit()

    # -- F, u and L: forks ---------------------------------------------------------------------

    def on_timeline_fork_wanted(self, message: Timeline.ForkWanted) -> None:
        timeline, index, forker = self.timeline, message.index, self.forker
        if forker.running and forker.fork_id is not None:
            self.tell_note(fork_text.one_fork_at_a_time(forker.fork_id))
            return
        if timeline.run_id is None or timeline.run_log is None or index is None:
            self.tell_note(fork_text.PICK_A_LINE)
            return
        item = timeline.run_log.item(index)
        kind = item.type if isinstance(item, Event) else None
        if kind not in (TOOL_RESULT, GENERATION, RUN_START):
            self.tell_note(fork_text.not_forkable(kind, index + 1))
            return
        assert isinstance(item, Event)
        form = form_at(self.source, timeline.run_log, timeline.run_id, index, item)
        self.app.push_screen(ForkScreen(form, forker.refusal), self._fork_asked)

    def _fork_asked(self, request: ForkRequest | None) -> None:
        if request is not None:
            self.forker.fork(request)

    @while_running
    def on_forker_started(self, message: Forker.Started) -> None:
        """The fork is written: show it in the list, open it, and follow it."""
        self.apply_changes(self.source.refresh([message.fork_id]))
        self.tell_note(fork_text.fork_started(message.fork_id, message.parent, message.at))
        self._go_to(message.fork_id, None)
        self.timeline.follow = True

    @while_running
    def on_forker_progress(self, message: Forker.Progress) -> None:
        self.watcher.refresh_run(message.fork_id, liveness=message.event.type == RUN_START)

    @while_running
    def on_forker_ended(self, message: Forker.Ended) -> None:
        if message.started:
            self.watcher.refresh_run(message.fork_id, liveness=True)

    def action_fork_parent(self) -> None:
        row = self.run_list.current
        if row is None or row.forked_from is None:
            self.tell_note(fork_text.no_parent(row))
            return
        if self.source.get(row.forked_from) is None:
            self.tell_note(fork_text.parent_missing(row.forked_from, self.source.where))
            return
        self._go_to(row.forked_from, row.fork_at)

    def action_fork_tree(self) -> None:
        row = self.run_list.current
        if row is None:
            self.tell_note(fork_text.no_parent(None))
            return
        top = fork_tree(self.source.rows(), row.run_id)
        self.app.push_screen(ForkTreeScreen(top, row.run_id), self._tree_chosen)

    def _tree_chosen(self, run_id: str | None) -> None:
        if run_id is None:
            return
        if self.source.get(run_id) is None:
            self.tell_note(fork_text.parent_missing(run_id, self.source.where))
            return
        self._go_to(run_id, None)

    # -- M and P: compare, play back -----------------------------------------------------------

    def action_mark_compare(self) -> None:
        """M: mark the selected run, unmark it, compare it with the marked run, or (a fork,
        nothing marked) compare it with its parent."""
        row = self.run_list.current
        if row is None:
            self.tell_note(notices.NO_RUN_SELECTED)
            return
        run_id, marked = row.run_id, self.run_list.compare_mark
        if marked == run_id:
            self.run_list.set_compare_mark(None)
            self.tell_note(compare_notes.unmarked(run_id))
            return
        self.reader.compare(run_id, marked)

    def action_playback(self) -> None:
        """P: the selected run's timeline, played back at its recorded pace."""
        row = self.run_list.current
        if row is None:
            self.tell_note(notices.NO_RUN_SELECTED)
            return
        self.reader.playback(row.run_id)

    @while_running
    def on_run_reader_mark(self, message: RunReader.Mark) -> None:
        self.run_list.set_compare_mark(message.run_id)

    @while_running
    def on_run_reader_comparison(self, message: RunReader.Comparison) -> None:
        self.app.push_screen(CompareScreen(message.made))

    @while_running
    def on_run_reader_playback(self, message: RunReader.Playback) -> None:
        self.app.push_screen(PlaybackScreen(message.run, self.playback_clock))

    # -- p, d, w, ctrl+f, S: the store ---------------------------------------------------------

    @while_running
    def on_store_keeper_pins(self, message: StoreKeeper.Pins) -> None:
        changed = message.pinned ^ self.run_list.pinned
        if not changed:
            return
        self.run_list.pinned = message.pinned
        self.run_list.runs_updated(changed)
        if self.timeline.run_id in changed:
            self.show_detail(self.timeline.cursor)  # its detail says so

    def action_pin(self) -> None:
        if (row := self._selected()) is not None:
            self.keeper.pin(row.run_id, was=row.run_id in self.run_list.pinned)

    def action_delete_run(self) -> None:
        if (row := self._selected()) is not None:
            self.keeper.ask_to_delete(row, self.run_list.shown_status(row))

    @while_running
    def on_store_keeper_deletable(self, message: StoreKeeper.Deletable) -> None:
        """Asked in a dialog naming the run and its forks."""
        if not self.is_active:
            return  # another screen opened meanwhile: `d` meant this list
        run_id, keeper = message.row.run_id, self.keeper
        screen = DeleteScreen(message.row, message.status, forks_of(self.source.rows(), run_id))
        self.app.push_screen(screen, lambda yes: keeper.delete(run_id) if yes else None)

    @while_running
    def on_store_keeper_deleted(self, message: StoreKeeper.Deleted) -> None:
        self.apply_changes(message.changes)
        self.keeper.refresh_pins()

    def action_export(self) -> None:
        if (row := self._selected()) is None:
            return
        run_id, keeper = row.run_id, self.keeper
        where = os.path.abspath(self.export_dir or os.curdir)
        self.app.push_screen(
            ExportScreen(run_id, where),
            lambda format: keeper.export(run_id, format, where) if format else None,
        )

    def action_search_runs(self) -> None:
        if not self.is_active:
            return  # a dialog is open above the list
        searcher = self.keeper.searcher()
        if searcher is not None:
            screen = RunsSearchScreen(searcher, self._prompt_of, self.label)
            self.app.push_screen(screen, self._jump_to)

    def _prompt_of(self, run_id: str) -> str | None:
        row = self.source.get(run_id)
        return row.summary.first_prompt if row is not None and row.summary is not None else None

    def _jump_to(self, found: Any) -> None:
        """The run of a search's hit, open at its line in the timeline (the filter is
        dropped when it hides the run)."""
        if not found:
            return
        run_id, line = found
        if self.run_list.index_of(run_id) is None:
            self.runs_pane.clear_filter()
        if not self.run_list.select(run_id):
            self.tell_note(store_notes.not_listed(run_id))
            return
        self.open_run(run_id)
        timeline = self.timeline
        if timeline.run_id == run_id and timeline.run_log is not None:
            timeline.follow = False
            timeline.move_cursor(min(max(0, line - 1), len(timeline.run_log) - 1))
            self.set_focus(timeline)

    def action_stats(self) -> None:
        if not self.is_active:
            return  # a dialog is open above the list
        pane, rows = self.runs_pane, self.run_list.rows
        described = runs_described(
            pane.label, len(rows), self.run_list.hidden, pane.run_filter.describe()
        )
        self.app.push_screen(StatsScreen(rows, described))

    # -- E, space and X: experiments -----------------------------------------------------------

    def action_experiments(self) -> None:
        if not self.is_active:
            return  # a dialog is open above the list
        screen = ExperimentsScreen(
            self.source,
            self.experimenter,
            self.tell_note,
            label=self.label,
            clock=self.clock,
            live=self.watching,
        )
        self.app.push_screen(screen)

    @on(RunList.SelectionChanged)
    def _selection_changed(self) -> None:
        self.refresh_bindings()  # X in the footer while runs are selected
        self.runs_pane.show_title()

    def action_nothing_selected(self) -> None:
        self.tell_note(experiment_notes.NOTHING_SELECTED)

    def action_start_experiment(self) -> None:
        """X: the form asking what the selected runs' experiment changes."""
        if not self.is_active:
            return
        runs = list(self.run_list.selected)  # in the order selected (one gone: refused)
        agent = self.experimenter.agent_for(runs)
        form = ExperimentForm(runs, agent.name if agent else None, self.experimenter.refusal)
        self.app.push_screen(form, self._experiment_asked)

    def _experiment_asked(self, request: ExperimentRequest | None) -> None:
        if request is not None:
            self.experimenter.start(request)

    @while_running
    def on_experimenter_started(self, message: Experimenter.Started) -> None:
        """Its definition is recorded: the selection is done with (when the form started
        it), its pairs open, live."""
        if not message.resumed:
            self.run_list.clear_selection()
        self.tell_note(
            experiment_notes.started(
                message.experiment_id, message.runs, message.done, message.resumed
            )
        )
        self._experiment_state()
        if not self._shows_pairs_of(message.experiment_id):
            screen = PairsScreen(
                self.source,
                message.experiment_id,
                self.experimenter,
                self.tell_note,
                clock=self.clock,
                live=self.watching,
            )
            self.app.push_screen(screen)

    @while_running
    def on_experimenter_held(self, message: Experimenter.Held) -> None:
        self.candidates.add(message.run_id)
        self.watcher.refresh_run(message.run_id, liveness=True)  # a candidate, in the list

    @while_running
    def on_experimenter_pair_done(self, message: Experimenter.PairDone) -> None:
        self.candidates.discard(message.candidate)
        self.watcher.refresh_run(message.candidate, liveness=True)
        self._experiment_changed(message.experiment_id)

    @while_running
    def on_experimenter_stopping(self, message: Experimenter.Stopping) -> None:
        self._experiment_state()

    @while_running
    def on_experimenter_ended(self, message: Experimenter.Ended) -> None:
        for run_id in self.candidates:  # stopped mid-way: interrupted now
            self.watcher.refresh_run(run_id, liveness=True)
        self.candidates.clear()
        self._experiment_state()
        if message.experiment_id is not None:
            self._experiment_changed(message.experiment_id)

    def _experiment_state(self) -> None:
        """The experimenter's state changed: what shows experiments says it, and the keys
        that apply (x, r)."""
        for screen in self.app.screen_stack:
            if isinstance(screen, PairsScreen | ExperimentsScreen):
                screen.state_changed()

    def _experiment_changed(self, experiment_id: str) -> None:
        """What shows the experiment reads it again (its pairs, and the list of them all)."""
        for screen in self.app.screen_stack:
            if isinstance(screen, PairsScreen) and screen.experiment_id == experiment_id:
                screen.experiment_changed()
            elif isinstance(screen, ExperimentsScreen):
                screen.experiments_changed()

    def _shows_pairs_of(self, experiment_id: str) -> bool:
        screen = self.app.screen
        return isinstance(screen, PairsScreen) and screen.experiment_id == experiment_id
