"""`FeedReading`: how `PostgresSource` (`agentor.sources.postgres.source`) reads the store's
change feed in its watch's thread: open it, wait for what it reports (a short while at a time),
read those runs' rows, and notice a lost connection and its return. A part of the source, kept
apart so that its module holds the rows."""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING

from agentor.engine.store.pg.dsn import scrub
from agentor.engine.store.pg.feed import ChangeFeed
from agentor.sources.source import Changes

if TYPE_CHECKING:
    from collections.abc import Iterable

    from agentor.sources.postgres.telling import TellingStore

WAIT_S = 0.25  # the longest the watch's thread waits on the feed before it looks around again


class FeedReading:
    """Mixed into `PostgresSource`, whose store, lock on the feed and rows these use."""

    store: TellingStore
    poll_interval: float
    where: str
    error: str | None
    _dsn: str
    _feed: ChangeFeed | None
    _feed_lock: threading.Lock
    _unreachable: bool

    if TYPE_CHECKING:

        def refresh(self, run_ids: Iterable[str] | None = None) -> Changes: ...

    def _open_feed(self) -> ChangeFeed:
        feed = self.store.changes(poll_interval=self.poll_interval)
        with self._feed_lock:
            old, self._feed = self._feed, feed
        if old is not None:
            self._close_feed(old)
        return feed

    def _next_changes(self, feed: ChangeFeed) -> Changes:
        """What the feed reports within WAIT_S, read from the runs table."""
        with self._feed_lock:
            if self._feed is not feed:
                return Changes()  # closed meanwhile
            seen = feed.wait(WAIT_S)
            if not feed.connected:
                seen.update(feed.wait(0))  # dropped: connect again at once, once
            connected, why = feed.connected, feed.error
        if not connected:
            self._unreachable = True
            self.error = scrub(f"lost {self.where}: {why or 'no connection'}", self._dsn)
            return Changes()
        if self._unreachable:
            # Back: the feed polled from where it was; read every row again all the same (who
            # holds which run may have moved without a write).
            self._unreachable = False
            self.error = None
            return self.refresh()
        return self.refresh(seen) if seen else Changes()

    def _close_feed(self, feed: ChangeFeed) -> None:
        with self._feed_lock:
            if self._feed is feed:
                self._feed = None
            with contextlib.suppress(Exception):
                feed.close()
