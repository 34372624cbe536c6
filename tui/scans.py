"""The timeline's scans of the open run (`tui.logscan`): what a search matches, where its
jumps go. A few lines are scanned at once; more (a big run, a first search of it) in a worker
thread, so a 100,000-event run never freezes the screen: the results land when they are ready,
and a search typed further replaces the one before (its thread stops at its next chunk).

Only the bytes a scan has not read yet are scanned, so a live run's new lines cost what they
weigh. Results are taken only while they still apply (`Finder.add`: the same query and run,
the very range that follows what was taken).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.worker import Worker, WorkerState, get_current_worker

from . import logscan
from .finder import SEARCH
from .logfile import Unreadable, os_reason
from .logscan import Scan

if TYPE_CHECKING:
    from .widgets.timeline import Timeline

# Up to this many new bytes are scanned on the spot (a few milliseconds at most).
SYNC_BYTES = 256 * 1024


class LogScans:
    """Starts the scans the timeline's `Finder` wants and hands their results back."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self._running: dict[Worker[Scan | None], tuple[str, int, int]] = {}

    def forget(self) -> None:
        """Another run: scans under way are of no use any more."""
        for worker in self._running:
            worker.cancel()
        self._running.clear()

    def catch_up(self) -> None:
        """Scan what the log gained for every kind of scan that is wanted."""
        for scan_kind in self.timeline.finder.scans:
            self._start(scan_kind)

    def _start(self, scan_kind: str) -> None:
        timeline = self.timeline
        log, state = timeline.run_log, timeline.finder.scans[scan_kind]
        if log is None or not state.wanted:
            return
        if any(job[:2] == (scan_kind, state.token) for job in self._running.values()):
            return  # one is under way: it goes on from where it ends
        start, end = state.end, log.indexed_bytes
        if start >= end:
            return
        job: Callable[..., Scan | None]
        if scan_kind == SEARCH:
            query = timeline.finder.query
            job = functools.partial(logscan.search, log.path, query, start, end, state.lines)
        else:
            job = functools.partial(logscan.marks, log.path, start, end, state.lines)
        if end - start <= SYNC_BYTES:
            try:
                scan = job()
            except (OSError, Unreadable) as exc:
                timeline.scan_failed(_reason(exc))
                return
            self._took(scan_kind, state.token, start, scan)
            return
        worker = timeline.run_worker(
            functools.partial(_in_thread, job),
            name=f"scan {scan_kind}",
            group=f"scan-{scan_kind}",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )
        self._running[worker] = (scan_kind, state.token, start)

    def finished(self, worker: Worker[Scan | None]) -> None:
        """A worker changed state (the timeline hands on Textual's message)."""
        job = self._running.get(worker)
        if job is None or not worker.is_finished:
            return
        del self._running[worker]
        if worker.state is WorkerState.SUCCESS:
            self._took(*job, worker.result)
        elif worker.state is WorkerState.ERROR and worker.error is not None:
            self.timeline.scan_failed(_reason(worker.error))

    def _took(self, scan_kind: str, token: int, start: int, scan: Scan | None) -> None:
        if scan is not None and self.timeline.finder.add(scan_kind, token, start, scan):
            self._start(scan_kind)  # what the log gained while this one ran
            self.timeline.scanned(scan.found)


def _in_thread(job: Callable[..., Scan | None]) -> Scan | None:
    worker = get_current_worker()
    return job(cancelled=lambda: worker.is_cancelled)


def _reason(exc: BaseException) -> str:
    return os_reason(exc) if isinstance(exc, OSError) else str(exc)
