"""`agentor trace DIR|DSN`: follow a store beside whoever writes to it (our agents, a fleet,
upstream Agentor processes) and send each span as soon as the log closes it.

The store is read through the TUI's sources (a directory: watchfiles and the logs' locks; a
database: its change feed and its sessions' locks), so the follower sees what the TUI sees,
when it sees it. Each run being written is kept open (`Followed`: its lines, indexed as they
come, and its `RunSpans`); a run with nothing open is let go, and read again from its start if
it grows (a resume). Liveness decides the end of a segment without a run_end: a run nobody
holds was interrupted, unless its segment was written by a process that takes no lock
(upstream Agentor, whose run_start has no `v`): that one is taken as gone once it wrote
nothing for `idle` seconds.

What was sent is kept in a `SentFile` (a journal) at every send, so a restart sends what it had not
(the log is read again; spans are the same), and nothing twice. A collector that does not
answer loses nothing: the spans wait, and are sent again every RETRY_S seconds; until then no
other run is sent to it either (one try, bounded by the exporter's timeout, not one a run).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agentor.engine.events import GENERATION, Event
from agentor.engine.log.format import BadLine
from agentor.engine.statuses import RUNNING
from agentor.sources.source import RunEvents, RunSource
from agentor.telemetry.sending import Collector, _SendError
from agentor.telemetry.sent import SentFile
from agentor.telemetry.spans import RunSpans, SpanRecord

IDLE_S = 300.0  # an upstream writer that wrote nothing for this long is taken as gone
TICK_S = 0.5  # how often liveness is asked again (a killed writer changes no file)
RETRY_S = 5.0  # how often spans a collector did not take are sent again


@dataclass
class Followed:
    """A run being followed: its lines, read so far, and its spans."""

    log: RunEvents
    spans: RunSpans
    read: int = 0
    grew_at: float = field(default_factory=time.monotonic)
    outbox: list[SpanRecord] = field(default_factory=list)


class Follower:
    """Sends the spans of a store's runs as their logs close them (see the module)."""

    def __init__(
        self,
        source: RunSource,
        collector: Collector,
        state: SentFile,
        *,
        content: bool = False,
        idle: float = IDLE_S,
        said: Callable[[str], None] = print,
        once: bool = False,
    ) -> None:
        self.source = source
        self.collector = collector
        self.state = state
        self.content = content
        self.idle = idle
        self.say = said
        self.once = once  # one pass (`--once`): a refusal is the caller's to say, not retried
        self.followed: dict[str, Followed] = {}
        self.error: str | None = None  # the collector's last refusal, until it takes spans
        self._last_try = 0.0

    # -- one pass ----------------------------------------------------------------------------

    def catch_up(self) -> int:
        """List the store and follow every run; spans sent."""
        self.source.scan()
        return self.sweep(row.run_id for row in self.source.rows())

    def sweep(self, run_ids: Iterable[str]) -> int:
        """Read what these runs gained, send what closed; spans sent."""
        sent = sum(self._sweep_one(run_id) for run_id in dict.fromkeys(run_ids))
        return sent + self.retry()

    def retry(self) -> int:
        """Send again what a collector did not take (every RETRY_S at most)."""
        waiting = [r for r, f in self.followed.items() if f.outbox]
        if not waiting or time.monotonic() - self._last_try < RETRY_S:
            return 0
        return sum(self._send(run_id, self.followed[run_id]) for run_id in waiting)

    def _sweep_one(self, run_id: str) -> int:
        followed = self.followed.get(run_id) or self._open(run_id)
        if followed is None:
            return 0
        try:
            self._read(followed)
        except OSError as exc:  # deleted meanwhile, unreadable: read again from the start later
            self._let_go(run_id, followed)
            self.say(f"cannot read run {run_id}: {exc}")
            return 0
        if followed.spans.segment is not None and self._writer_gone(run_id, followed):
            followed.outbox += followed.spans.interrupted()
        sent = self._send(run_id, followed)
        if not followed.outbox and followed.spans.open_spans == 0:
            self.state.settle(run_id, followed.read)
            self._let_go(run_id, followed)
        return sent

    def _open(self, run_id: str) -> Followed | None:
        try:
            log = self.source.open(run_id)
        except KeyError:  # gone
            self.state.forget(run_id)
            return None
        except OSError as exc:
            self.say(f"cannot read run {run_id}: {exc}")
            return None
        record = self.state.run(run_id)
        if record.upto == len(log) and not record.sent:
            log.close()  # nothing new since every span of it was sent
            return None
        followed = Followed(log, RunSpans(run_id, content=self.content))
        self.followed[run_id] = followed
        return followed

    def _read(self, f: Followed) -> None:
        before = len(f.log)
        f.log.poll()
        if f.log.reset_happened:  # rewritten: its spans are made again from the start
            f.spans, f.read = RunSpans(f.spans.run_id, content=self.content), 0
        if len(f.log) != before or f.read < len(f.log):
            f.grew_at = time.monotonic()
        f.outbox += f.spans.feed((i + 1, self._item(f.log, i)) for i in range(f.read, len(f.log)))
        f.read = len(f.log)

    def _item(self, log: RunEvents, i: int) -> Event | BadLine:
        item = log.item(i)
        if self.content and isinstance(item, Event) and item.type == GENERATION:
            item.messages = log.request(i)  # the whole request, as the engine rebuilds it
        return item

    def _writer_gone(self, run_id: str, f: Followed) -> bool:
        row = self.source.get(run_id)
        if row is None or row.status == RUNNING:
            return False
        segment = f.spans.segment
        if segment is not None and segment.start_event.v is None:  # takes no lock
            return time.monotonic() - f.grew_at >= self.idle
        return True

    def _send(self, run_id: str, f: Followed) -> int:
        record = self.state.run(run_id)
        todo = [s for s in f.outbox if not record.has(s.line)]
        f.outbox = todo
        if not todo:
            return 0
        if self.error is not None and time.monotonic() - self._last_try < RETRY_S:
            return 0  # it refused a moment ago: the spans wait for the next try (retry())
        self._last_try = time.monotonic()
        try:
            self.collector.send(todo)
        except _SendError as exc:
            if self.error != str(exc) and not self.once:
                self.say(f"{exc}; the spans wait and are sent again")
            self.error = str(exc)
            self._last_try = time.monotonic()  # the exporter's retries took a while
            return 0
        if self.error is not None:
            self.say(f"the collector at {self.collector.url} takes spans again")
        self.error = None
        self.state.sent(run_id, [s.line for s in todo])
        f.outbox = []
        self.say(f"sent {len(todo)} span{'s' * (len(todo) != 1)} of run {run_id}")
        return len(todo)

    def _let_go(self, run_id: str, f: Followed) -> None:
        f.log.close()
        self.followed.pop(run_id, None)

    # -- following -----------------------------------------------------------------------------

    async def follow(self, stop: asyncio.Event) -> None:
        """Catch up, then follow the store until `stop` is set (or the store is gone)."""
        lock = asyncio.Lock()

        async def sweep(run_ids: Iterable[str] | None) -> None:
            async with lock:
                if run_ids is None:
                    await asyncio.to_thread(self.catch_up)
                else:
                    await asyncio.to_thread(self.sweep, list(run_ids))

        async def watch() -> None:
            async for changes in self.source.watch():
                await sweep({*changes.added, *changes.updated, *changes.appended})

        async def tick() -> None:
            while True:
                await asyncio.sleep(TICK_S)
                moved = await asyncio.to_thread(self.source.refresh_liveness, 200)
                await sweep([*moved, *self._idle_candidates()])

        await sweep(None)
        tasks = [asyncio.ensure_future(watch()), asyncio.ensure_future(tick())]
        waiter = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait([*tasks, waiter], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in [*tasks, waiter]:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            for task in tasks:  # a watch that failed says why
                if task.done() and not task.cancelled():
                    failure = task.exception()
                    if failure is not None:
                        raise failure

    def _idle_candidates(self) -> list[str]:
        """Runs waiting on a writer that takes no lock, or on a collector: look again."""
        return [r for r, f in self.followed.items() if f.outbox or f.spans.segment is not None]

    def close(self) -> None:
        for run_id, f in list(self.followed.items()):
            self._let_go(run_id, f)
        self.state.close()
