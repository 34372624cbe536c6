"""`RunsApp`: the terminal app over one source of runs.

Wiring only. The runs come from a `RunSource` (`agentor.sources.source`; a FileStore directory
is `agentor.sources.directory.source.DirectorySource`), never re-derived here. The app makes the
source and the controllers (`tui.controllers`: `Watcher` keeps the screen in step with the
source, `IndexSaver` saves the run index, `Resumer` resumes a run in this process, `Approver`
records decisions on gated calls, `Forker` forks, `RunReader` reads runs whole for compare and
playback, `StoreKeeper` operates the store, `Experimenter` runs an experiment) and holds them;
its default screen, `RunsScreen` (`tui.screens.runs`), mounts them, owns the panes and their
keys, and shows what the controllers report. The app itself keeps what is the same on every
screen: its notes (`tell_note`), help, quit, and the command palette.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from textual.app import App, SystemCommand
from textual.binding import BindingType
from textual.screen import Screen

from agentor.agents import AgentSet
from agentor.literal import literal_line
from agentor.sources.directory.source import DirectorySource
from agentor.sources.source import RunSource
from tui.controllers.approver import Approver
from tui.controllers.experimenter import Experimenter
from tui.controllers.forker import Forker
from tui.controllers.index_saver import IndexSaver
from tui.controllers.resumer import Resumer
from tui.controllers.run_reader import RunReader
from tui.controllers.store_keeper import StoreKeeper
from tui.controllers.watcher import Watcher
from tui.keys import SCREEN, bindings, palette
from tui.keys.model import APP
from tui.screens.runs import Controllers, RunsScreen
from tui.shown_notes import ShownNotes
from tui.text.notices import Note
from tui.text.shortpath import source_title
from tui.widgets.help_screen import HelpScreen
from tui.widgets.toast_place import place_toasts


class RunsApp(App[str | None]):
    """Browse, follow and resume the runs of one source (a FileStore directory, a schema of a
    PostgreSQL database)."""

    CSS_PATH = "app.tcss"
    TITLE = "agentor-tui"
    BINDINGS: ClassVar[list[BindingType]] = bindings(APP)
    # A screen under another (a dialog over the runs screen) is `-suspended`: its own toasts
    # are not drawn behind the dialog's (app.tcss). Screens of 120 columns or more are `-wide`
    # (their notes wider).
    SUSPENDED_SCREEN_CLASS = "-suspended"
    HORIZONTAL_BREAKPOINTS = [(120, "-wide")]  # noqa: RUF012 - Textual's own attribute

    export_dir: str | os.PathLike[str] | None = None  # `--export-dir`; None: the current one
    runs_screen: RunsScreen  # the default screen, made as the app starts

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
        self.reader = RunReader(self.source)  # M and P
        self.keeper = StoreKeeper(self.source)  # p, d, w, ctrl+f
        self.experimenter = Experimenter(self.source, self.resumer.agents)  # X
        self.clock = clock
        self.source_label = literal_line(source_title(self.source))  # the list's title
        self.shown_notes = ShownNotes()

    def get_default_screen(self) -> RunsScreen:
        controllers = Controllers(
            self.watcher,
            self.index_saver,
            self.resumer,
            self.approver,
            self.forker,
            self.reader,
            self.keeper,
            self.experimenter,
        )
        self.runs_screen = RunsScreen(
            self.source,
            controllers,
            self.tell_note,
            label=self.source_label,
            clock=self.clock,
            watching=self.watching,
            first_run_id=self.first_run_id,
            export_dir=self.export_dir,
        )
        return self.runs_screen

    async def on_mount(self) -> None:
        # Ready (for keys, for a test's pilot) once the runs screen has composed its panes,
        # mounted them and started, as when the app composed them itself (Textual's
        # `AwaitMount` would wait so too, but then refreshes the screen's layout and hover:
        # another first frame).
        await self.runs_screen.mounted.wait()

    def on_unmount(self) -> None:
        self.index_saver.at_exit()  # what changed since the last save, before the source goes
        self.source.close()  # a database source's connections

    # -- everywhere ----------------------------------------------------------------------------

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

    def tell_note(self, note: Note) -> None:
        """Show `note` (literally: notes quote errors and text from logs), in place of an older
        one of its kind, beside a few others at most (`ShownNotes`). On the app's thread."""
        # Textual's private notes: its public API only adds a note (`notify`, by a message,
        # so later) or takes all down (`clear_notifications`); none lists them or takes one.
        shown = list(self._notifications)
        for old in self.shown_notes.to_take_down(shown, note.kind):
            self._unnotify(old, refresh=False)  # Textual's own way, as a toast's timer does
        # Added at once, as Textual adds a `Notify`: a note told right after this one (the
        # screen and the app each handle their messages) already sees it shown.
        self._notifications.add(self.shown_notes.notification(note))
        self._refresh_notifications()
        if note.bell:
            self.bell()

    def _refresh_notifications(self) -> None:
        """Textual's, each time the notes or the screen on top change; then, once laid out,
        the toasts of a dialog inside its frame (`place_toasts`). Private: Textual has no
        public hook for the moments it shows its toasts anew (a screen resumed, a note added
        or taken down by its timer)."""
        super()._refresh_notifications()
        self.call_after_refresh(self._place_toasts)

    def on_resize(self) -> None:
        self.call_after_refresh(self._place_toasts)  # a dialog sized anew: its toasts with it

    def _place_toasts(self) -> None:
        if self.screen_stack:
            place_toasts(self.screen)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's commands, then every key's action (`tui.keys.palette`): the runs screen's
        and its widgets' only while it is the screen the palette opens over."""
        for command in super().get_system_commands(screen):
            if command.title not in ("Maximize", "Minimize"):  # ours toggles (m)
                yield command
        for title, help_text, action in palette():
            node_id, _, name = action.rpartition(".")
            if not node_id:
                yield SystemCommand(title, help_text, getattr(self, f"action_{name}"))
            elif screen is not self.runs_screen:
                continue
            elif node_id == SCREEN:
                if screen.check_action(name, ()) is not False:
                    yield SystemCommand(title, help_text, getattr(screen, f"action_{name}"))
            else:
                target = screen.query_one(f"#{node_id}")
                yield SystemCommand(title, help_text, getattr(target, f"action_{name}"))
