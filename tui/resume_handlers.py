"""`ResumeHandlers`: `r` and `x`, and how `RunsApp` shows what its `Resumer` reports (the
streamed line, a run stopping, a resume ended). A part of the app, mixed into it, kept apart so
that the app's module stays its wiring; handlers go by Textual's naming rule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentor.engine.events import GENERATION, RUN_START, TEXT_DELTA
from agentor.engine.statuses import STOPPING
from tui.controllers.controller import while_running
from tui.controllers.resumer import Resumer
from tui.text import notices

if TYPE_CHECKING:  # to a type checker the mixin is the app it is mixed into
    from textual.app import App

    from tui.controllers.watcher import Watcher
    from tui.widgets.run_list import RunList
    from tui.widgets.runs_pane import RunsPane
    from tui.widgets.stream_line import StreamLine

    _Base = App[str | None]
else:
    _Base = object


class ResumeHandlers(_Base):
    """Mixed into `RunsApp` (an `App`), whose widgets and controllers these use."""

    if TYPE_CHECKING:
        resumer: Resumer
        run_list: RunList
        runs_pane: RunsPane
        stream_line: StreamLine
        watcher: Watcher

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
            self.exit()
