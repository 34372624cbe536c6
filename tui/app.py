"""`RunsApp`: the run list, the timeline of the selected run and the detail of one event.

Wiring only: the data comes from `tui.runs.RunIndex` (never re-derived here), text from
`tui.render`, drawing from `tui.widgets`. Two workers: one watches the directory, one resumes
a run in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.css.query import NoMatches
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker

from agentor import RunLockedError
from agentor.engine.events import GENERATION, RUN_START, TEXT_DELTA
from agentor.engine.store import FileStore

from .literal import literal_line
from .messages import (
    EventHighlighted,
    FilterChanged,
    FilterCleared,
    FilterSubmitted,
    ResumeProgress,
    RunHighlighted,
)
from .render import detail
from .runs import Changes, RunIndex, RunRow
from .widgets.event_detail import EventDetail
from .widgets.filter_bar import FilterBar
from .widgets.help_screen import HelpScreen
from .widgets.run_list import RunList
from .widgets.stream_line import StreamLine
from .widgets.timeline import Timeline

# `s` cycles through these; each names the statuses it shows (None: all).
STATUS_FILTERS: tuple[tuple[str, frozenset[str] | None], ...] = (
    ("all", None),
    ("needs attention", frozenset({"interrupted", "failed", "max_turns", "unreadable"})),
    ("failed", frozenset({"failed", "max_turns"})),
    ("completed", frozenset({"completed"})),
)
RESUMABLE = frozenset({"interrupted", "failed", "max_turns"})
# What the run list's title counts, in this order, when there are any.
TITLE_COUNTS = (
    ("running", ("running",)),
    ("interrupted", ("interrupted",)),
    ("failed", ("failed", "max_turns")),
    ("unreadable", ("unreadable",)),
)
NO_AGENT_HINT = (
    "No agent to resume this run with: start agentor-tui with --agent path/to/file.py:name "
    "(or package.module:name)."
)
FILL_BATCH = 64
WATCH_STEP_MS = 20
WATCH_DEBOUNCE_MS = 200


def matches(row: RunRow, words: list[str]) -> bool:
    """Every word of the filter is in the run's id, agent, model, status or first prompt."""
    s = row.summary
    fields = [row.run_id, row.status]
    if s is not None:
        fields += [s.agent or "", s.model or "", s.first_prompt or ""]
    haystack = "\n".join(fields).lower()
    return all(w in haystack for w in words)


class RunsApp(App[None]):
    """Browse, follow and resume the runs of one FileStore directory."""

    CSS_PATH = "app.tcss"
    TITLE = "agentor-tui"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "drill", "Open"),
        Binding("escape", "back", "Back"),
        Binding("slash", "filter", "Filter"),
        Binding("s", "cycle_status", "Status"),
        Binding("r", "resume", "Resume"),
        Binding("x", "stop_resume", "Stop"),
        Binding("f", "follow", "Follow"),
        Binding("c", "copy_id", "Copy id"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(
        self,
        directory: Path,
        agents: Any = None,
        watch: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.directory = Path(directory)
        self.agents = agents
        # `watch` is taken by DOMNode.watch; `live` says whether watchers and timers run.
        self.live = watch
        self.clock = clock
        self.index = RunIndex(self.directory, clock=clock)
        self.filter_text = ""
        self.status_filter = 0
        self.resume_worker: Worker[None] | None = None
        self.resuming: str | None = None
        self.directory_gone = False
        self._last_fill_draw = 0.0

    def compose(self) -> ComposeResult:
        with Vertical(id="runs-pane"):
            yield FilterBar(id="filter")
            yield RunList(self.clock, id="runs")
        with Horizontal(id="bottom"):
            with Vertical(id="timeline-pane"):
                yield Timeline(id="timeline")
                yield StreamLine(id="stream")
            yield EventDetail(id="detail")
        yield Footer()

    @functools.cached_property
    def store(self) -> FileStore:
        """Where resumes write: the directory on screen (made on first use, not at start)."""
        return FileStore(self.directory)

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

    # -- start ---------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.query_one("#filter", FilterBar).display = False
        self.stream_line.display = False
        self.timeline.clear("Select a run to see its events.")
        self.event_detail.clear()
        self.index.scan()
        if self.index.error is not None:
            self.run_list.empty_message = self.index.error
        self.show_rows()
        self.run_list.focus()
        # Complete the quick rows after the first frame is on screen.
        self.call_after_refresh(self.fill_rows)
        if self.live:
            self.watch_directory()
            self.set_interval(1.0, self.check_liveness)

    @work(exclusive=True, group="fill")
    async def fill_rows(self) -> None:
        """Complete the summaries the scan could only sketch (turns, tokens), a batch a time."""
        # RunIndex is thread-safe: whole files are read off the event loop.
        with contextlib.suppress(NoMatches):  # the app closed while a batch was read
            while await asyncio.to_thread(self.index.fill, FILL_BATCH):
                if time.monotonic() - self._last_fill_draw > 0.25:
                    self._last_fill_draw = time.monotonic()
                    self.show_rows()
                await asyncio.sleep(0.005)  # the reading thread holds the GIL: let keys in
            self.show_rows()

    # -- the run list --------------------------------------------------------------------------

    def visible_rows(self) -> list[RunRow]:
        rows = self.index.rows()
        wanted = STATUS_FILTERS[self.status_filter][1]
        if wanted is not None:
            rows = [r for r in rows if r.status in wanted]
        words = self.filter_text.lower().split()
        if words:
            rows = [r for r in rows if matches(r, words)]
        return rows

    def show_rows(self) -> None:
        rows = self.visible_rows()
        self.run_list.set_rows(rows)
        self._retitle(rows)

    def _retitle(self, rows: list[RunRow]) -> None:
        total = len(self.index.rows())
        title = f"Runs {len(rows)}" if len(rows) == total else f"Runs {len(rows)} of {total}"
        for word, statuses in TITLE_COUNTS:
            n = sum(1 for r in rows if r.status in statuses)
            if n:
                title += f" · {n} {word}"
        if self.directory_gone:
            title += " · directory deleted"
        pane = self.query_one("#runs-pane")
        pane.border_title = Content(title)
        subtitle = []
        name, wanted = STATUS_FILTERS[self.status_filter]
        if wanted is not None:
            subtitle.append(f"status: {name}")
        if self.filter_text:
            subtitle.append(f"filter: {literal_line(self.filter_text, 40)}")
        pane.border_subtitle = Content(" · ".join(subtitle)) if subtitle else None

    @on(RunHighlighted)
    def _run_highlighted(self, message: RunHighlighted) -> None:
        self.open_run(message.run_id)

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
        self.show_detail(message.index)

    def show_detail(self, index: int | None) -> None:
        timeline = self.timeline
        log, run_id = timeline.run_log, timeline.run_id
        if index is None or log is None or run_id is None or index >= len(log):
            self.event_detail.clear(timeline.empty_message if log is None else "")
            return
        item = log.item(index)
        request = None
        kind = getattr(item, "type", None)
        if kind == GENERATION:
            request = log.request(index)
        body = detail(item, index, run_id, log.start_time, request)
        title = f"Detail · {literal_line(kind, 20)}" if kind else "Detail · unreadable line"
        self.event_detail.show(body, f"{title} · line {index + 1}")

    # -- live ----------------------------------------------------------------------------------

    @work(exclusive=True, group="watch")
    async def watch_directory(self) -> None:
        """Apply what changes in the directory, as it changes (watchfiles)."""
        from watchfiles import awatch

        try:
            async for batch in awatch(
                self.directory,
                step=WATCH_STEP_MS,
                debounce=WATCH_DEBOUNCE_MS,
                recursive=False,
                ignore_permission_denied=True,
            ):
                self.apply_paths(Path(p) for _, p in batch)
                if not self.directory.is_dir():
                    break
        except NoMatches:  # the app closed while a batch was being applied
            return
        except (OSError, RuntimeError) as exc:
            if self.directory.is_dir():
                self.tell(
                    f"Stopped watching {literal_line(str(self.directory))}: "
                    f"{literal_line(str(exc), 300)}",
                    severity="error",
                )
        if not self.directory.is_dir():
            with contextlib.suppress(NoMatches):
                self._directory_deleted()

    def apply_paths(self, paths: Iterable[Path]) -> None:
        wanted = [p for p in paths if p != self.directory]
        if wanted:
            self.apply_changes(self.index.refresh(wanted))

    def apply_changes(self, changes: Changes) -> None:
        if not (changes.added or changes.updated or changes.removed or changes.appended):
            return
        open_id = self.timeline.run_id
        self.show_rows()
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

    def check_liveness(self) -> None:
        if self.index.refresh_liveness():
            self.show_rows()
        else:
            self.run_list.redraw()  # "3m ago" moves on

    def _directory_deleted(self) -> None:
        self.directory_gone = True
        self.run_list.empty_message = (
            f"The directory {self.directory} was deleted: there is nothing left to show."
        )
        self.apply_paths(r.path for r in self.index.rows())
        self.show_rows()
        self.timeline.clear("The run directory was deleted.")
        self.tell(f"{literal_line(str(self.directory))} was deleted.", severity="warning")

    # -- filter --------------------------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one("#filter", FilterBar).open()

    @on(FilterChanged)
    def _filter_changed(self, message: FilterChanged) -> None:
        self.filter_text = message.text
        self.show_rows()

    @on(FilterSubmitted)
    def _filter_submitted(self, message: FilterSubmitted) -> None:
        self.filter_text = message.text
        self.query_one("#filter", FilterBar).display = False
        self.show_rows()
        self.run_list.move_cursor(0)
        self.screen.set_focus(self.run_list)

    @on(FilterCleared)
    def _filter_cleared(self, message: FilterCleared) -> None:
        self.filter_text = ""
        self.show_rows()
        self.screen.set_focus(self.run_list)

    def action_cycle_status(self) -> None:
        self.status_filter = (self.status_filter + 1) % len(STATUS_FILTERS)
        self.show_rows()

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
        elif self.filter_text:
            bar = self.query_one("#filter", FilterBar)
            bar.value = ""
            bar.display = False
            self.filter_text = ""
            self.show_rows()

    def action_follow(self) -> None:
        on_now = self.timeline.toggle_follow()
        self.tell("Following the newest event." if on_now else "Follow off.", timeout=2)

    def action_copy_id(self) -> None:
        row = self.run_list.current
        if row is None:
            self.tell("No run selected.", severity="warning")
            return
        self.copy_to_clipboard(row.run_id)
        self.tell(f"Copied run id {literal_line(row.run_id)}", timeout=3)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    # -- resume --------------------------------------------------------------------------------

    def action_resume(self) -> None:
        row = self.run_list.current
        if row is None:
            self.tell("No run selected.", severity="warning")
            return
        short = row.run_id[:8]
        if self.resume_worker is not None and self.resume_worker.is_running:
            self.tell(
                f"Already resuming {(self.resuming or '')[:8]}: x stops it.", severity="warning"
            )
            return
        if row.status == "completed":
            self.tell(f"Run {short} is already completed.", severity="warning")
            return
        if row.status == "unreadable":
            self.tell(
                f"Run {short} cannot be resumed: it is unreadable "
                f"({literal_line(row.error or '?', 200)}).",
                severity="error",
            )
            return
        name = row.summary.agent if row.summary else None
        agent = self.agents.for_run(name) if self.agents is not None else None
        if agent is None:
            hint = self.agents.missing_hint(name) if self.agents is not None else NO_AGENT_HINT
            self.tell(literal_line(hint, 500), severity="warning", timeout=8)
            return
        assert self.agents is not None
        agent = self.agents.writing_to(agent, self.store)
        self.resume_worker = self.resume(row.run_id, agent)
        self.refresh_bindings()

    @work(exclusive=True, group="resume", exit_on_error=False)
    async def resume(self, run_id: str, agent: Any) -> None:
        """`agent.aresume(run_id)` here, streaming its events to the screen as recorded."""
        short = run_id[:8]
        self.resuming = run_id
        self.stream_line.start(run_id)

        def listener(event: Any) -> None:
            self.post_message(ResumeProgress(run_id, event))

        try:
            result = await agent.aresume(run_id, listener=listener)
        except asyncio.CancelledError:
            self.tell(
                f"Stopped resuming {short}: it is left interrupted, r resumes it.",
                severity="warning",
            )
            raise
        except RunLockedError as exc:
            holder = f"process {exc.pid}" if exc.pid else "another process"
            self.tell(
                f"Run {short} is locked by {holder}: it is being run or resumed there.",
                severity="error",
                timeout=8,
            )
        except KeyError:
            self.tell(
                f"Run {short} is gone: its file left {literal_line(str(self.directory), 200)}.",
                severity="error",
                timeout=8,
            )
        except Exception as exc:
            self.tell(
                f"Resuming {short} failed: {type(exc).__name__}: {literal_line(str(exc), 400)}",
                severity="error",
                timeout=8,
            )
        else:
            self._report_resume(short, result)
        finally:
            self.resuming = None
            with contextlib.suppress(Exception):  # the app may be closing
                self.stream_line.stop()
                self.refresh_run(run_id, liveness=True)
                self.refresh_bindings()

    def _report_resume(self, short: str, result: Any) -> None:
        if result.status == "completed":
            output = literal_line(result.final_output or "", 300)
            self.tell(f"Run {short} completed: {output}", title="Resumed", timeout=8)
            return
        error = literal_line(result.error or "no error recorded", 400)
        self.tell(
            f"Run {short} ended {result.status}: {error}. It stays resumable: r tries again.",
            title="Resume did not finish",
            severity="error",
            timeout=10,
        )

    @on(ResumeProgress)
    def _resume_progress(self, message: ResumeProgress) -> None:
        event = message.event
        if event.type == TEXT_DELTA:
            if self.stream_line.run_id == message.run_id:
                self.stream_line.add(event.text or "")
            return
        if event.type == GENERATION and self.stream_line.run_id == message.run_id:
            self.stream_line.turn_done()
        # Recorded before it was announced: the file has it, read it like any other change.
        self.refresh_run(message.run_id, liveness=event.type == RUN_START)

    def refresh_run(self, run_id: str, liveness: bool = False) -> None:
        changes = self.index.refresh([self.directory / f"{run_id}.jsonl"])
        if liveness:
            self.index.refresh_liveness()
        self.apply_changes(changes)
        if liveness:
            self.show_rows()

    def action_stop_resume(self) -> None:
        worker = self.resume_worker
        if worker is None or not worker.is_running:
            self.tell("No resume is running.", severity="warning")
            return
        worker.cancel()

    async def action_quit(self) -> None:
        await self.stop_resume_and_wait()
        self.exit()

    async def stop_resume_and_wait(self, timeout: float = 5.0) -> None:
        """Cancel a resume in flight and let it unwind (release its lock) before going."""
        worker = self.resume_worker
        if worker is None or worker.is_finished:
            return
        worker.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(worker.wait(), timeout)

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

    # -- keys everywhere -----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_resume":
            running = self.resume_worker is not None and self.resume_worker.is_running
            return True if running else None
        return True

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Open", "Into the timeline, then the detail (enter)", self.action_drill)
        yield SystemCommand("Back", "Back out to the run list (esc)", self.action_back)
        yield SystemCommand(
            "Filter runs", "Filter by id, agent, model, status or prompt (/)", self.action_filter
        )
        yield SystemCommand(
            "Cycle status filter",
            "All, needs attention, failed, completed (s)",
            self.action_cycle_status,
        )
        yield SystemCommand(
            "Resume run", "Resume the selected run in this process (r)", self.action_resume
        )
        yield SystemCommand(
            "Stop resume",
            "Stop the resume in flight; the run stays resumable (x)",
            self.action_stop_resume,
        )
        yield SystemCommand("Follow", "Keep the newest event in view (f)", self.action_follow)
        yield SystemCommand("Copy run id", "Copy the selected run's id (c)", self.action_copy_id)
        yield SystemCommand("Help", "Every key (?)", self.action_help)
