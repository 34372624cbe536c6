"""`ExperimentsReader` and `ExperimentReader`: read the store's experiments (the list `E` opens)
and one experiment (its pairs and summary) for the screen that mounts them, in worker threads,
and read them again while they may change: every `LIVE_EVERY_S` when the app watches its
store (an experiment another process runs), and whenever told (`refresh`: a pair of an
experiment running here was recorded).

Cost model: a read is the experiments' records only (a file each, or a query each); an
experiment is summed up again (its bootstrap: ~0.2 s at 50 pairs, a second or more at 200)
only when its records changed. Reads asked while one is under way are done once, after it.

They report by messages (`Listed`, `Loaded`, `Failed`, `Notice`); the screen shows what they
found.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from textual import work
from textual.message import Message
from textual.worker import Worker

from agentor.errors import AgentorError
from agentor.experiments.experiment import Experiment, experiments_of
from agentor.experiments.listing import Listed, listed
from agentor.experiments.record import read_records
from agentor.sources.source import RunSource
from tui.controllers.controller import Controller
from tui.text import experiment_notes

# How often an open list or experiment is read again while the app watches its store.
LIVE_EVERY_S = 1.0


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

    def _read(self) -> Message | None:
        raise NotImplementedError

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
    """One experiment: its definition, its pairs as recorded, its summary."""

    @dataclass
    class Loaded(Message):
        experiment: Experiment

    def __init__(self, source: RunSource, experiment_id: str, live: bool) -> None:
        super().__init__(source, live)
        self.experiment_id = experiment_id

    def _read(self) -> Message | None:
        store = self._store()
        records = experiments_of(store).load_experiment(self.experiment_id)
        if records == self._last:
            return None
        self._last = records
        definition, pairs = read_records(records)
        if definition is None:
            raise ValueError(f"experiment {self.experiment_id} records no definition")
        return self.Loaded(Experiment(store, definition, pairs))
