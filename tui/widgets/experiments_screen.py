"""`ExperimentsScreen`: `E` lists the store's experiments, newest first (id, age, pairs measured
of all, regressions, its state here, name and change); `enter` opens one's pairs
(`PairsScreen`), `x` stops the highlighted one when it runs here, `r` resumes it when pairs
are pending, `esc` goes back. Live as the pairs are: its `ExperimentsReader` lists them again
while the app watches the store, and when an experiment running here records a pair
(`experiments_changed`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType

from agentor.experiments.record import Definition
from agentor.sources.source import RunSource
from tui.controllers.controller import Controller
from tui.controllers.experiment_reader import ExperimentsReader
from tui.controllers.experimenter import Experimenter
from tui.keys import bindings
from tui.keys.model import EXPERIMENTS_SCREEN
from tui.text.notices import Note
from tui.widgets.experiment_control import ExperimentControl
from tui.widgets.experiment_list import ExperimentList
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.pairs_screen import PairsScreen


class ExperimentsScreen(ExperimentControl):
    BINDINGS: ClassVar[list[BindingType]] = bindings(EXPERIMENTS_SCREEN)
    DEFAULT_CSS = """
    ExperimentsScreen {
        background: $background;
        ExperimentList {
            height: 1fr;
            border: round $primary;
            border-title-style: bold;
            border-subtitle-color: $text-muted;
        }
    }
    """

    def __init__(
        self,
        source: RunSource,
        experimenter: Experimenter,
        tell_note: Callable[[Note], None],
        *,
        label: str,
        clock: Callable[[], float] = time.time,
        live: bool = True,
    ) -> None:
        super().__init__()
        self.source = source
        self.experimenter = experimenter
        self.tell_note = tell_note
        self.label = label  # the source, as the run list's title names it (literal)
        self.clock = clock
        self.live = live

    def compose(self) -> ComposeResult:
        yield ExperimentList(self.clock, self.experimenter.state_of, id="experiments")
        yield KeysFooter()
        yield ExperimentsReader(self.source, self.live)

    @property
    def experiment_list(self) -> ExperimentList:
        return self.query_one(ExperimentList)

    def on_mount(self) -> None:
        self.experiment_list.focus()
        self._retitle()

    def experiments_changed(self) -> None:
        """An experiment running here recorded a pair: list them again."""
        self.query_one(ExperimentsReader).refresh_read()

    def on_experiments_reader_listed(self, message: ExperimentsReader.Listed) -> None:
        self.experiment_list.set_rows(message.experiments)
        self._retitle()
        self.refresh_bindings()

    def on_experiment_list_moved(self) -> None:
        self.refresh_bindings()  # x and r: as the highlighted experiment allows

    def shown(self) -> tuple[Definition, int] | None:
        x = self.experiment_list.current
        return None if x is None else (x.definition, x.total - x.measured)

    def state_changed(self) -> None:
        self.experiment_list.rows_changed()  # its state column
        super().state_changed()

    @on(ExperimentsReader.Failed)
    def _failed(self, message: ExperimentsReader.Failed) -> None:
        self.experiment_list.error = message.why
        self.experiment_list.rows_changed()

    def _retitle(self) -> None:
        n = len(self.experiment_list.rows)
        counted = f" · {n}" if self.experiment_list.read else ""
        self.experiment_list.set_titles(
            f"{self.label} · Experiments{counted}", "enter: its pairs · esc: back"
        )

    def action_open_experiment(self) -> None:
        chosen = self.experiment_list.current
        if chosen is None:
            return
        screen = PairsScreen(
            self.source,
            chosen.id,
            self.experimenter,
            self.tell_note,
            clock=self.clock,
            live=self.live,
        )
        self.app.push_screen(screen)

    def on_controller_notice(self, message: Controller.Notice) -> None:
        self.tell_note(message.note)
