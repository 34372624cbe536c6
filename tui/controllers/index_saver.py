"""`IndexSaver`: saves a directory's run index (`agentor.sources.directory.runindex`) once the
first scan is done and a while after its rows change, and at exit, so that the next start lists
them without reading their logs, however short the look was.

At start: as soon as the first scan is on screen, if it read logs (no index, or files changed
since), in a worker thread. Then, debounced and bounded: it looks every SAVE_CHECK_S seconds
whether rows changed since the last save (`DirectorySource.index_stale`: filled, appended,
added, removed); if so it saves in a worker thread (the source's lock is taken a chunk of rows
at a time, so the screen never waits on it). A save is never started sooner than
SAVE_COST_FACTOR times the last one's duration after it ended: a run streaming into a directory
of 100,000 runs costs the index at most about a tenth of a core. At exit (`at_exit`), once a
save under way is done, rows changed since the last save are saved: about 0.3 s at 100,000
rows, paid once, on the way out.

A source without an index (PostgreSQL) has nothing to save; a directory that cannot be written,
nor the cache, is said once.
"""

from __future__ import annotations

import threading
import time

from textual import work

from agentor.sources.source import IndexedSource, RunSource
from tui.controllers.controller import Controller
from tui.text import notices

SAVE_CHECK_S = 2.0
SAVE_COST_FACTOR = 10.0


class IndexSaver(Controller):
    def __init__(self, source: RunSource, live: bool) -> None:
        super().__init__()
        self.source = source if isinstance(source, IndexedSource) else None
        self.live = live
        self.saving = False
        self.next_at = 0.0  # monotonic: no save before then
        self.saves = 0  # saves done (for tests)
        self.failed = False  # said once
        self._writing = threading.Lock()  # one save at a time: the last one started wins

    def start(self) -> None:
        """The first scan is on screen: save what it read now, then look every few seconds."""
        if self.live and self.source is not None:
            self.check()
            self.set_interval(SAVE_CHECK_S, self.check)

    def at_exit(self) -> None:
        """The app is closing: save the rows changed since the last save (after a save under
        way), here and now. A failure is not said: the app is gone; the next start reads the
        logs that changed, as if there were no index."""
        source = self.source
        if not self.live or source is None:
            return
        with self._writing:
            if not source.index_stale or source.error is not None:
                return
            try:
                source.save_index()
            except (OSError, ValueError):
                return
            self.saves += 1

    def check(self) -> None:
        """Save now if rows changed since the last save and the last save is long enough ago."""
        source = self.source
        if source is None or self.saving or not source.index_stale:
            return
        if time.monotonic() < self.next_at or source.error is not None:
            return
        self.saving = True
        self._save(source)

    @work(thread=True, group="index", exclusive=True, exit_on_error=False)
    def _save(self, source: IndexedSource) -> None:
        started = time.monotonic()
        try:
            with self._writing:
                source.save_index()
        except (OSError, ValueError) as exc:  # not writable; a row field of no JSON form
            if not self.failed:
                self.failed = True
                self.say(notices.index_not_saved(source.where, exc))
            self.next_at = time.monotonic() + 60.0  # not writable: try again in a minute
        else:
            self.saves += 1
            ended = time.monotonic()
            self.next_at = ended + SAVE_COST_FACTOR * (ended - started)
        finally:
            self.saving = False
