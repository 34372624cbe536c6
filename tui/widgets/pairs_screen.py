"""`PairsScreen`: one experiment: its summary at the top (what changed, how the pairs ended,
regressions and improvements, each paired delta with its interval, each scorer with McNemar),
its pairs below, regressions first (`s` sorts them by each delta or scorer), the highlighted
pair said whole at the bottom; `enter` compares its baseline and candidate side by side (the
compare view, `M`'s, with served and executed tool results marked). `x` stops the experiment
when it runs here, `r` resumes it when pairs are pending; the title says which it is.

Live: its `ExperimentReader` reads the experiment's records again while the app watches the
store, and when an experiment running here records a pair (`experiment_changed`), so pairs
come in while it runs, here or in another process."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.widgets import Static

from agentor.experiments.experiment import Experiment
from agentor.experiments.record import Definition
from agentor.experiments.summary import Summary
from agentor.literal import literal_line
from agentor.sources.source import RunSource
from tui.controllers.controller import Controller
from tui.controllers.experiment_reader import ExperimentReader
from tui.controllers.experimenter import RUNNING_HERE, Experimenter
from tui.controllers.run_reader import RunReader
from tui.keys import bindings
from tui.keys.model import PAIRS_SCREEN
from tui.text import experiment_notes
from tui.text.experiment_rows import Sort, pair_detail, sorted_rows, sorts, summary_text
from tui.text.notices import Note
from tui.widgets.compare_screen import CompareScreen
from tui.widgets.experiment_control import ExperimentControl
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.pair_list import PairList

# From this width the summary's deltas go two to a line.
WIDE = 140


class PairsScreen(ExperimentControl):
    BINDINGS: ClassVar[list[BindingType]] = bindings(PAIRS_SCREEN)
    DEFAULT_CSS = """
    PairsScreen {
        background: $background;
        #pairs-summary {
            height: auto;
            padding: 0 1;
            background: $boost;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        PairList {
            height: 1fr;
            border: round $primary;
            border-title-style: bold;
            border-subtitle-color: $text-accent;
        }
        #pair-detail {
            height: auto;
            max-height: 7;
            padding: 0 1;
            border-top: solid $primary 50%;
        }
    }
    """

    def __init__(
        self,
        source: RunSource,
        experiment_id: str,
        experimenter: Experimenter,
        tell_note: Callable[[Note], None],
        *,
        clock: Callable[[], float] = time.time,
        live: bool = True,
    ) -> None:
        super().__init__()
        self.source = source
        self.experiment_id = experiment_id
        self.experimenter = experimenter
        self.tell_note = tell_note
        self.clock = clock
        self.live = live
        self.experiment: Experiment | None = None
        self.intervals: Summary | None = None  # whose deltas the summary shows
        self.sort_index = 0

    def compose(self) -> ComposeResult:
        yield Static(Text(f"Reading {literal_line(self.experiment_id, 40)}…"), id="pairs-summary")
        yield PairList(id="pairs")
        yield Static(id="pair-detail", markup=False)
        yield KeysFooter()
        yield ExperimentReader(self.source, self.experiment_id, self.live)
        yield RunReader(self.source)

    @property
    def pair_list(self) -> PairList:
        return self.query_one(PairList)

    @property
    def reader(self) -> ExperimentReader:
        return self.query_one(ExperimentReader)

    def on_mount(self) -> None:
        self.pair_list.focus()
        self.pair_list.set_titles(f"Pairs · {literal_line(self.experiment_id, 40)}", None)

    def experiment_changed(self) -> None:
        """A pair of this experiment was recorded here: read it again."""
        self.reader.refresh_read()

    @property
    def sorts(self) -> list[Sort]:
        scorers = self.experiment.definition.scorers if self.experiment is not None else ()
        return sorts(scorers)

    # -- what the reader found -----------------------------------------------------------------

    def on_experiment_reader_loaded(self, message: ExperimentReader.Loaded) -> None:
        self.experiment, self.intervals = message.experiment, message.intervals
        self.show(keep=True)

    @on(ExperimentReader.Failed)
    def _failed(self, message: ExperimentReader.Failed) -> None:
        if self.experiment is None:  # else what was read stays on screen
            why = f"Cannot read {literal_line(self.experiment_id, 40)}: {message.why}"
            self.query_one("#pairs-summary", Static).update(Text(why, "red"))

    def show(self, keep: bool) -> None:
        e = self.experiment
        if e is None:
            return
        self.query_one("#pairs-summary", Static).update(
            summary_text(e, self.clock(), self.intervals, wide=self.size.width >= WIDE)
        )
        sort = self.sorts[self.sort_index % len(self.sorts)]
        self.pair_list.set_rows(sorted_rows(e, sort), e.definition.scorers, keep=keep)
        self.pair_list.set_titles(
            self._title(), f"sorted: {sort.label} · s: another sort · enter: compare"
        )
        self.refresh_bindings()

    def _title(self) -> str:
        """`Pairs · 3 of 5 measured · running`: how many, and its state here."""
        e = self.experiment
        if e is None:
            return f"Pairs · {literal_line(self.experiment_id, 40)}"
        measured, total = len(e.pairs), len(e.definition.baselines)
        if measured == total:
            return f"Pairs · {total} pair{'s' if total != 1 else ''}"
        state = self.experimenter.state_of(e.id)
        if state == RUNNING_HERE:
            return f"Pairs · {measured} of {total} measured · running (x: stop)"
        said = f" · {state}" if state is not None else ""
        return f"Pairs · {measured} of {total} measured{said} · r: resume"

    def shown(self) -> tuple[Definition, int] | None:
        e = self.experiment
        return None if e is None else (e.definition, len(e.pending))

    def state_changed(self) -> None:
        if self.experiment is not None:
            self.show(keep=True)  # its title says the state
        super().state_changed()

    def on_resize(self) -> None:
        self.show(keep=True)  # the deltas: two to a line, or one

    def on_pair_list_moved(self) -> None:
        row = self.pair_list.current
        detail = self.query_one("#pair-detail", Static)
        detail.update(pair_detail(row) if row is not None else "")

    # -- keys ----------------------------------------------------------------------------------

    def action_cycle_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(self.sorts)
        self.show(keep=False)  # the top of the new order in view

    def action_compare_pair(self) -> None:
        row = self.pair_list.current
        if row is None:
            return
        if row.pair is None and self.source.get(row.candidate) is None:
            self.tell_note(experiment_notes.not_made_yet(row.candidate))
            return
        self.query_one(RunReader).compare(row.candidate, row.baseline)

    def on_run_reader_comparison(self, message: RunReader.Comparison) -> None:
        if self.is_active:  # not when another screen was opened meanwhile
            self.app.push_screen(CompareScreen(message.made))

    def on_controller_notice(self, message: Controller.Notice) -> None:
        self.tell_note(message.note)
