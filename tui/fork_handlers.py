"""`ForkHandlers`: `F` (fork at the highlighted timeline line), `u` (a fork's parent, at the fork
point) and `L` (the fork tree), and how `RunsApp` shows what its `Forker` reports (the fork
opened live as soon as it is written). A part of the app, mixed into it, kept apart so that
the app's module stays its wiring; handlers go by Textual's naming rule."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentor.engine.events import GENERATION, RUN_START, TOOL_RESULT, Event
from agentor.sources.lineage import fork_tree
from tui.controllers.controller import while_running
from tui.controllers.forker import Forker
from tui.text import fork_text
from tui.text.fork_text import ForkRequest
from tui.text.notices import Note
from tui.widgets.fork_screen import ForkForm, ForkScreen
from tui.widgets.fork_tree import ForkTreeScreen
from tui.widgets.timeline import Timeline

if TYPE_CHECKING:  # to a type checker the mixin is the app it is mixed into
    from textual.app import App

    from agentor.sources.source import Changes, RunSource
    from tui.controllers.watcher import Watcher
    from tui.widgets.run_list import RunList
    from tui.widgets.runs_pane import RunsPane

    _Base = App[str | None]
else:
    _Base = object


class ForkHandlers(_Base):
    """Mixed into `RunsApp` (an `App`), whose widgets and controllers these use."""

    if TYPE_CHECKING:
        forker: Forker
        run_list: RunList
        runs_pane: RunsPane
        source: RunSource
        timeline: Timeline
        watcher: Watcher

        def open_run(self, run_id: str | None) -> None: ...
        def apply_changes(self, changes: Changes) -> None: ...
        def tell_note(self, note: Note) -> None: ...

    # -- F -------------------------------------------------------------------------------------

    def on_timeline_fork_wanted(self, message: Timeline.ForkWanted) -> None:
        timeline, index = self.timeline, message.index
        if self.forker.running and self.forker.fork_id is not None:
            self.tell_note(fork_text.one_fork_at_a_time(self.forker.fork_id))
            return
        if timeline.run_id is None or timeline.run_log is None or index is None:
            self.tell_note(Note("Open a run's timeline and pick a line to fork at."))
            return
        item = timeline.run_log.item(index)
        kind = item.type if isinstance(item, Event) else None
        if kind not in (TOOL_RESULT, GENERATION, RUN_START):
            self.tell_note(fork_text.not_forkable(kind, index + 1))
            return
        assert isinstance(item, Event)
        form = self._fork_form(timeline.run_id, index, item)
        self.push_screen(ForkScreen(form, self._fork_refusal), self._fork_asked)

    def _fork_form(self, run_id: str, index: int, item: Event) -> ForkForm:
        row = self.source.get(run_id)
        model = item.model or (row.summary.model if row and row.summary else None) or ""
        models = [r.summary.model for r in self.source.rows() if r.summary and r.summary.model]
        kind, recorded = item.type, None
        if kind == RUN_START and self._later_segment(index):
            kind = GENERATION  # a resume's run_start forks as the generation after it
        elif kind == TOOL_RESULT:
            recorded = item.result if item.error is None else item.error
        elif kind == RUN_START:
            recorded = _prompt_of(item) or (row.summary.first_prompt if row and row.summary else "")
        return ForkForm(run_id, index + 1, kind, recorded, model, models, item.name)

    def _later_segment(self, index: int) -> bool:
        """Whether a run_start comes before line `index` (the run's first one is near the top:
        only the lines before it are read)."""
        log = self.timeline.run_log
        assert log is not None
        return any(getattr(log.item(i), "type", None) == RUN_START for i in range(index))

    def _fork_refusal(self, request: ForkRequest) -> str | None:
        """Why the fork cannot run here (no agent for the run), with the command that would
        run it from a shell; None when it can."""
        row = self.source.get(request.run_id)
        name = row.summary.agent if row is not None and row.summary is not None else None
        if self.forker.agent_for(name) is not None:
            return None
        hint = self.forker.agents.missing_hint(name)
        return fork_text.no_agent_text(request, hint, _store_args(self.source))

    def _fork_asked(self, request: ForkRequest | None) -> None:
        if request is None:
            return
        row = self.source.get(request.run_id)
        agent = self.forker.agent_for(row.summary.agent if row and row.summary else None)
        if agent is not None:
            self.forker.start(request, agent)

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

    # -- u and L -------------------------------------------------------------------------------

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
        self.push_screen(ForkTreeScreen(top, row.run_id), self._tree_chosen)

    def _tree_chosen(self, run_id: str | None) -> None:
        if run_id is None:
            return
        if self.source.get(run_id) is None:
            self.tell_note(fork_text.parent_missing(run_id, self.source.where))
            return
        self._go_to(run_id, None)

    def _go_to(self, run_id: str, line: int | None) -> None:
        """Select `run_id` in the list (shown even if the filter hides it), open its timeline
        and focus it, at `line` (1-based) when given."""
        self.open_run(run_id)
        self.runs_pane.reveal(run_id)
        self.screen.set_focus(self.timeline)
        if line is not None and 0 < line <= self.timeline.row_count():
            self.timeline.follow = False
            self.timeline.move_cursor(line - 1)


def _prompt_of(e: Event) -> str | None:
    """The prompt a run_start records: its last user message's text."""
    for m in reversed(e.messages or []):
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            return str(m["content"])
    return None


def _store_args(source: Any) -> list[str]:
    """The `agentor` options naming the source's store (a directory, a database's schema)."""
    store = getattr(source, "store", None)
    schema = getattr(store, "schema", None)
    if schema is not None:
        return ["--store", str(store.where), "--schema", str(schema)]
    return ["--dir", str(source.where)]
