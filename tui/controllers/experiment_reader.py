"""`ExperimentsReader` and `ExperimentReader`: read the store's experiments (the list `E` opens)
and one experiment (its pairs and summary) for the screen that mounts them, in worker threads,
and read them again while they may change: every `LIVE_EVERY_S` when the app watches its
store (an experiment another process runs), and whenever told (`refresh`: a pair of an
experiment running here was recorded).

Cost model: a read is the experiments' records only (a file each, or a query each), and
nothing more when they did not change. Of an experiment that changed, the counts are worked
out again at once (a few ms), the deltas' intervals (the bootstrap: ~0.15 s at 200 pairs) at
most every `INTERVALS_EVERY_S` while pairs are pending (or ten times what the last took), the
reads between them showing the last ones; once the pairs stop coming, a read follows that
works them out, so an experiment that ended or stopped never shows old intervals. Reads asked
while one is under way are done once, after it.

They report by messages (`Listed`, `Loaded`, `Failed`, `Notice`); the screen shows what they
found.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

from textual import work
from textual.message import Message
from textual.timer import Timer
from textual.worker import Worker

from agentor.errors import AgentorError
from agentor.experiments.experiment import Experiment, experiments_of
from agentor.experiments.listing import Listed, listed
from agentor.experiments.record import read_records
from agentor.experiments.summary import Summary
from agentor.sources.source import RunSource
from tui.controllers.controller import Controller
from tui.text import experiment_notes

# How often an open list or experiment is read again while the app watches its store.
LIVE_EVERY_S = 1.0
# How often, at most, a running experiment's intervals are worked out again.
INTERVALS_EVERY_S = 2.0


class _Rereading(Controller):
    """Reads in a worker (`_read`, in a thread), again while asked to, and on a timer when
    `live`; what is read is reported only when it changed."""

    @dataclass
    class Failed(Message):
        """The store could not be read (`why`: one line); told once, until it changes."""

        why: str

    def __init__(self, source: RunSource, live: bool) -> None:
        super().__init__()
        self.source = source
        self.live = live
        self.worker: Worker[None] | None = None
        self._again = False
        self._last: Any = None  # what the last read found
        self._said: str | None = None  # the error last told (told once, until it changes)

    def on_mount(self) -> None:
        super().on_mount()
        self.refresh_read()
        if self.live:
            self.set_interval(LIVE_EVERY_S, self.refresh_read)

    @property
    def reading(self) -> bool:
        return self.worker is not None and not self.worker.is_finished

    def refresh_read(self) -> None:
        """Read again (once more after the read under way, if one is)."""
        self._again = True
        if not self.reading:
            self.worker = self._read_loop()

    @work(group="read", exclusive=True, exit_on_error=False)
    async def _read_loop(self) -> None:
        # The flag is cleared before each read: a refresh asked during one gets one more.
        while self._again:
            self._again = False
            try:
                message = await asyncio.to_thread(self._read)
            except (AgentorError, OSError, ValueError) as exc:
                self._failed(" ".join(str(exc).split()) or type(exc).__name__)
                continue
            self._said = None
            if message is not None:
                self.report(message)
        self._read_done()

    def _read(self) -> Message | None:
        raise NotImplementedError

    def _read_done(self) -> None:
        """After the reads asked for (on the app's loop)."""

    def _failed(self, why: str) -> None:
        if why != self._said:
            self._said = why
            self.report(self.Failed(why))
            self.say(experiment_notes.cannot_read(why))

    def _store(self) -> Any:
        store = self.source.store
        if store is None:
            raise OSError(f"{self.source.where} is not there")
        return store


class ExperimentsReader(_Rereading):
    """Every experiment of the source's store, newest first."""

    @dataclass
    class Listed(Message):
        experiments: list[Listed]

    def _read(self) -> Message | None:
        found = listed(self._store())
        if found == self._last:
            return None
        self._last = found
        return self.Listed(found)


class ExperimentReader(_Rereading):
    """One experiment: its definition, its pairs as recorded, its summary (its intervals
    worked out again at most every `INTERVALS_EVERY_S` while pairs are pending)."""

    @dataclass
    class Loaded(Message):
        """`experiment` as read; `intervals`, the summary whose deltas to show: the
        experiment's own, or, while it runs, an earlier read's (`current` False)."""

        experiment: Experiment
        intervals: Summary
        current: bool = True

    def __init__(self, source: RunSource, experiment_id: str, live: bool) -> None:
        super().__init__(source, live)
        self.experiment_id = experiment_id
        self._experiment: Experiment | None = None  # the last read
        self._intervals: Summary | None = None  # the last worked out
        self._summed_at = -float("inf")  # when (time.monotonic)
        self._every = INTERVALS_EVERY_S
        self._behind = False  # the intervals shown are an earlier read's
        self._trailing: Timer | None = None

    def _read(self) -> Message | None:
        store = self._store()
        records = experiments_of(store).load_experiment(self.experiment_id)
        if records == self._last and self._experiment is not None:
            if not (self._behind and self._due()):
                return None
            experiment = self._experiment  # unchanged since, but its intervals are due
        else:
            self._last = records
            definition, pairs = read_records(records)
            if definition is None:
                raise ValueError(f"experiment {self.experiment_id} records no definition")
            experiment = self._experiment = Experiment(store, definition, pairs)
        if self._intervals is None or not experiment.pending or self._due():
            started = time.monotonic()
            self._intervals = experiment.summary
            self._summed_at = time.monotonic()
            self._every = max(INTERVALS_EVERY_S, 10 * (self._summed_at - started))
            self._behind = False
        else:
            self._behind = True
        return self.Loaded(experiment, self._intervals, not self._behind)

    def _due(self) -> bool:
        return time.monotonic() - self._summed_at >= self._every

    def _read_done(self) -> None:
        # Behind: read again once the intervals are due (the pairs may have stopped coming).
        if self._behind and self._trailing is None:
            wait = max(0.0, self._summed_at + self._every - time.monotonic())
            self._trailing = self.set_timer(wait, self._trail)

    def _trail(self) -> None:
        self._trailing = None
        self.refresh_read()
