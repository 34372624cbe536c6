"""`RunReader`: reads runs whole for `M` (compare two runs, a fork with its parent) and `P` (play a
run back), in worker threads: two runs of 1,000 turns take seconds to read and compare. A newer
`M` or `P` replaces a read still under way.

It reports by messages (`Mark`, `Comparison`, `Playback`, `Notice`); the screen marks the run
and opens the compare view or the playback.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.worker import get_current_worker

from agentor.engine.statuses import UNREADABLE
from agentor.sources.source import RunSource
from agentor.sources.whole_run import WholeRun, read_run
from tui.controllers.controller import Controller
from tui.text import compare_notes
from tui.text.compare_rows import Compared, compared

# Runs this long (lines of both) are said to be compared, as it may take a moment.
SAY_FROM_LINES = 2000


class RunReader(Controller):
    @dataclass
    class Mark(Message):
        """The run to mark for a comparison (None: no run is marked any more)."""

        run_id: str | None

    @dataclass
    class Comparison(Message):
        """Two runs compared: show them."""

        made: Compared

    @dataclass
    class Playback(Message):
        """A run read whole: play it back."""

        run: WholeRun

    def __init__(self, source: RunSource) -> None:
        super().__init__()
        self.source = source

    @work(thread=True, group="compare", exclusive=True, exit_on_error=False)
    def compare(self, run_id: str, marked: str | None) -> None:
        """Compare the run with the `marked` one; nothing marked, a fork with its parent, and
        any other run is marked."""
        a_id = marked
        if a_id is None:  # a fork, compared with its parent; else the run is marked
            quick = self._read_whole(run_id, requests=False)
            if quick is None:
                return
            parent = quick.parent
            if parent is None or self.source.get(parent) is None:
                self.report(self.Mark(run_id))
                self.say(compare_notes.marked(run_id, parent, self.source.where))
                return
            a_id = parent
        a = self._read_whole(a_id)
        if a is None and marked is not None:  # gone, or broken: nothing to compare with
            self.report(self.Mark(None))
        b = self._read_whole(run_id) if a is not None else None
        if a is None or b is None:
            return
        if len(a.items) + len(b.items) >= SAY_FROM_LINES:
            self.say(compare_notes.comparing(len(a.items), len(b.items)))
        made = compared(a, b)
        if not get_current_worker().is_cancelled:
            self.report(self.Comparison(made))

    @work(thread=True, group="playback", exclusive=True, exit_on_error=False)
    def playback(self, run_id: str) -> None:
        """Read the run whole, to play it back at its recorded pace."""
        run = self._read_whole(run_id, requests=False)
        if run is not None and not get_current_worker().is_cancelled:
            self.report(self.Playback(run))

    def _read_whole(self, run_id: str, requests: bool = True) -> WholeRun | None:
        """The run read whole, or None (and why, told) when it cannot be (a worker thread)."""
        row = self.source.get(run_id)
        if row is not None and row.status == UNREADABLE:
            self.say(compare_notes.unreadable(run_id, row.error))
            return None
        try:
            log = self.source.open(run_id)
        except (OSError, KeyError, ValueError) as exc:
            self.say(compare_notes.cannot_read(run_id, exc))
            return None
        try:
            return read_run(run_id, log, requests)
        except OSError as exc:
            self.say(compare_notes.cannot_read(run_id, exc))
            return None
        finally:
            log.close()
