"""`Watcher`: keeps the screen in step with its `RunSource`. The rows the first scan could only
sketch are completed in the background, the source's stream of changes is followed, runs whose
files a resume here wrote to are read again together, and a timer asks every second who holds
which run (running vs interrupted comes from the store's lock), whether a source that went
away is back, and whether one that stopped answering (a database) answers again.

It owns that state (the fill worker, the source watched, gone or back, the runs waiting to be
read) and reports by messages (`Changed`, `Filled`, `Gone`, `Back`, `Ticked`, `Notice`); the
screen updates its widgets. Watching and the timer run only when the app is live (tests and
snapshots turn them off, as Posting does).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Hashable
from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.worker import Worker

from agentor.sources.source import Changes, RunSource
from tui.controllers.controller import Controller
from tui.text import notices
from tui.text.shortpath import source_title

FILL_BATCH = 64
FILL_REDRAW_S = 0.25
LIVENESS_EVERY_S = 1.0
# Incomplete runs whose lock the 1 s timer re-probes per tick besides the running ones
# (each probe is an open, a flock and a close on the UI thread).
LIVENESS_BUDGET = 256


class Watcher(Controller):
    @dataclass
    class Changed(Message):
        """Runs changed (`changes`); `moved`: who holds which run moved too."""

        changes: Changes
        moved: bool = False

    @dataclass
    class Filled(Message):
        """More sketched rows were completed: their counts can be shown."""

    @dataclass
    class Gone(Message):
        """The source is gone (a deleted directory); `changes` removes every run."""

        changes: Changes

    @dataclass
    class Back(Message):
        """The source is back: listed again from scratch, and watched."""

    @dataclass
    class Ticked(Message):
        """A second went by: statuses `moved` (who holds which run), or only the clock did."""

        moved: bool

    def __init__(self, source: RunSource, live: bool) -> None:
        super().__init__()
        self.source = source
        self.live = live  # watch the source and run the timer
        self.gone = False  # the source is gone; the timer looks for it to come back
        self.armed = False  # the watch reports every change from now on
        self.watched: Hashable | None = None  # which source is being watched
        # The fill worker, and whether rows want another pass.
        self.fill_worker: Worker[None] | None = None
        self._fill_again = False
        # Runs whose files changed under a resume, read together at the next turn.
        self._stale_runs: set[str] = set()
        self._stale_liveness = False
        self.said_error: str | None = None  # the source's error, as last told

    def start(self) -> None:
        """The app is on screen: complete the sketched rows after its first frame, watch."""
        self.app.call_after_refresh(self.fill)
        self.said_error = self.source.error  # the list says it already
        if not self.live:
            return
        if self.source.identity() is not None:
            self._watch()
        else:
            self.gone = True  # the timer looks for it to appear
        self.set_interval(LIVENESS_EVERY_S, self._tick)

    # -- completing sketched rows --------------------------------------------------------------

    def fill(self) -> None:
        """Rows need reading whole (at start, or a big log arrived or was replaced): start the
        fill worker, or have the running one go round again."""
        self._fill_again = True
        worker = self.fill_worker
        if worker is None or worker.is_finished:
            self.fill_worker = self._fill()

    @work(group="fill", exclusive=True)
    async def _fill(self) -> None:
        """Complete the summaries the scan could only sketch (turns, tokens), a batch a time."""
        # The flag is cleared before each pass: rows that need filling while a pass runs (a
        # pass may already have gone by them) get a pass of their own.
        while self._fill_again:
            self._fill_again = False
            last_draw = time.monotonic()
            filled = False  # a list all from the run index has nothing to fill, nor redraw
            # The source is thread-safe: whole files are read off the event loop.
            while await asyncio.to_thread(self.source.fill, FILL_BATCH):
                filled = True
                if time.monotonic() - last_draw > FILL_REDRAW_S:
                    last_draw = time.monotonic()
                    self.report(self.Filled())
                await asyncio.sleep(0.005)  # the reading thread holds the GIL: let keys in
            if filled:
                self.report(self.Filled())

    # -- what changes --------------------------------------------------------------------------

    @work(group="watch", exclusive=True)
    async def _watch(self) -> None:
        """Report what changes in the source, as it changes, until it is gone."""
        self.watched, self.armed = self.source.identity(), False
        try:
            async with contextlib.aclosing(self.source.watch()) as stream:
                async for changes in stream:
                    self.changed(changes)
                    self.armed = True
        except (OSError, RuntimeError) as exc:
            if self.source.identity() is not None:
                self.say(notices.stopped_watching(self.source.where, exc))
        if self.source.identity() is None:
            self._gone()

    def changed(self, changes: Changes, moved: bool = False) -> None:
        """Report what the source found (`moved`: and who holds which run moved too)."""
        if changes.incomplete:
            self.fill()  # a big log arrived or was replaced: its counts need a read
        if changes or moved:
            self.report(self.Changed(changes, moved))

    def refresh_run(self, run_id: str, liveness: bool = False) -> None:
        """Read what one run's log gained (and, with `liveness`, who holds which run now).

        Calls made in a burst (a resume records several events at once) are read together,
        once, after the messages already waiting for the screen: one read, one redraw."""
        if not self._stale_runs and not self._stale_liveness:
            self.screen.call_later(self._refresh_stale)
        self._stale_runs.add(run_id)
        self._stale_liveness |= liveness

    def _refresh_stale(self) -> None:
        runs, liveness = self._stale_runs, self._stale_liveness
        self._stale_runs, self._stale_liveness = set(), False
        changes = self.source.refresh(runs)
        self.changed(changes, moved=bool(liveness and self.source.refresh_liveness()))

    def reload(self) -> None:
        """ctrl+r, for a source not watched: read it again, and say what that found."""
        changes = self.source.refresh()
        self.changed(changes, moved=bool(self.source.refresh_liveness()))
        if self.source.error is not None and self.source.identity() is not None:
            # There, but it did not answer (a database): say so, again.
            self.said_error = None
            self._tell_error()
            return
        self._tell_error()  # it answers again
        changed = len(changes.updated | changes.appended.keys())
        self.say(
            notices.reloaded(
                source_title(self.source), len(changes.added), changed, len(changes.removed)
            )
        )

    # -- gone and back -------------------------------------------------------------------------

    def _gone(self) -> None:
        if self.gone:
            return
        self.gone = True
        self.report(self.Gone(self.source.refresh()))

    def _back(self) -> None:
        """The source exists again: list it from scratch and watch it again."""
        self.gone = False
        self.source.scan()
        self.report(self.Back())
        self.fill()
        self._watch()  # in place of a watcher on the source that was there before

    def _tick(self) -> None:
        """Every second: who holds which run, "3m ago" moving on, a source gone or back."""
        # One stat a second: a directory deleted and made again at once (`rm -r runs && cp
        # -r saved runs`) leaves the watch on the old one, which will never change again.
        now = self.source.identity()
        if self.gone:
            if now is not None:
                self._back()
            return
        if now != self.watched and self.watched is not None:
            if now is None:
                self._gone()
            else:
                self._back()
            return
        moved = self.source.refresh_liveness(budget=LIVENESS_BUDGET)
        self.report(self.Ticked(moved=bool(moved)))
        self._tell_error()

    def _tell_error(self) -> None:
        """Say when the source stops answering, and when it answers again (a database that
        cannot be reached stays on screen as it was last read, and is not gone)."""
        error = self.source.error
        if error == self.said_error:
            return
        if error is not None:
            self.say(notices.source_unreadable(self.source.where, error))
        else:
            self.say(notices.source_readable(self.source.where))
        self.said_error = error
