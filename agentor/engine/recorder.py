"""`Recorder`: a run's events are saved before anyone hears of them.

Every event is saved (off the event loop) before listeners see it, so what a stream shows is
what a resume will find. A save under way when the run is cancelled is finished before the run
is let go (`drain`): the write never lands after another process could take the run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .events import Event
from .store import BatchStore, Store

log = logging.getLogger("agentor")

Listener = Callable[[Event], None]


@dataclass
class Recorder:
    """Saves a run's events to its store (if any) and hands them to listeners."""

    run_id: str | None
    store: Store | None
    events: list[Event] = field(default_factory=list)
    listeners: list[Listener] = field(default_factory=list)
    save_failures: int = 0
    _saving: set[asyncio.Future[None]] = field(default_factory=set)
    _held: Event | None = None

    def hold(self, event: Event) -> None:
        """Save `event` (a resume's run_start) with the next durable event, not before: a
        resume stopped before it has anything to record leaves the log as it found it (no
        empty segment). It is announced after that save, like any other event."""
        if event.ts is None:
            event.ts = time.time()
        self._held = event

    async def emit(self, *events: Event) -> None:
        now = time.time()
        for e in events:
            if e.ts is None:
                e.ts = now
        durable = [e for e in events if not e.transient]
        if durable and self._held is not None:
            events = (self._held, *events)
            durable.insert(0, self._held)
            self._held = None
        if durable and self.store is not None and self.run_id is not None:
            # Shielded: a cancelled run still finishes the save it started (`drain`).
            saving = asyncio.get_running_loop().run_in_executor(None, self._save, durable)
            self._saving.add(saving)
            saving.add_done_callback(self._saving.discard)
            await asyncio.shield(saving)
        self.events.extend(durable)
        for e in events:
            for listener in self.listeners:
                listener(e)

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait for saves still under way. Called before the run's lock is let go: a cancelled
        `emit` leaves its save running, and that write must land while the run is still
        held (never after another process may have taken it); the event is kept, too."""
        if self._saving:
            await asyncio.wait(set(self._saving), timeout=timeout)

    def _save(self, events: list[Event]) -> None:
        assert self.store is not None and self.run_id is not None
        try:
            if isinstance(self.store, BatchStore):
                self.store.append_many(self.run_id, events)
            else:
                for e in events:
                    self.store.append(self.run_id, e)
        except Exception as exc:
            # Best effort: the run carries on; it may not be resumable from this point.
            self.save_failures += 1
            log.error(
                "run %s: could not save %s event: %s",
                self.run_id,
                "/".join(e.type for e in events),
                exc,
                exc_info=True,
            )
