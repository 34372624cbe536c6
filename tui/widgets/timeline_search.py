"""The timeline's search and jumps: what it looks for in the open run (`Finder`, plain state:
where `n`, `e` or `t` lead from a line) and the scans that find it (`LogScans`).

A few lines are scanned at once; more (a big run, a first search of it) in a worker thread
(`Timeline.scan_in_thread`), so a 100,000-event run never freezes the screen: the results land
when they are ready, and a search typed further replaces the one before (its thread stops at
its next chunk). Only what a scan has not read yet is scanned, so a live run's new lines cost
what they weigh. Results are taken only while they still apply (`Finder.add`: the same query
and run, the very range that follows what was taken).
"""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from textual.worker import Worker, WorkerState

from agentor.sources.logfile import os_reason
from agentor.sources.source import RunEvents, Scan

# Up to this many new bytes are scanned on the spot (a few milliseconds at most).
SYNC_BYTES = 256 * 1024

SEARCH, ERRORS, CALLS = "search", "errors", "calls"
# Each kind of line, and the scan that finds it.
SCAN_OF = {SEARCH: SEARCH, ERRORS: "marks", CALLS: "marks"}
# How a jump names what it looks for ("no error below").
NAMES = {SEARCH: "match", ERRORS: "error", CALLS: "tool call"}
PLURALS = {SEARCH: "matches", ERRORS: "errors", CALLS: "tool calls"}


@dataclass
class Scanned:
    """How far one scan has read the log, and the token of what it is for: a token moves
    on whenever earlier results no longer apply (another query, another run)."""

    token: int = 0
    end: int = 0  # bytes
    lines: int = 0
    wanted: bool = False  # a scan of this kind is kept up to date as the log grows


@dataclass
class Finder:
    query: str = ""
    found: dict[str, list[int]] = field(default_factory=dict)
    scans: dict[str, Scanned] = field(default_factory=dict)
    _tokens: int = 0

    def __post_init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Another run (or the file was replaced): nothing found, nothing scanned."""
        self.query = ""
        self.found = {SEARCH: [], ERRORS: [], CALLS: []}
        self.scans = {SEARCH: self._fresh(), "marks": self._fresh()}

    def _fresh(self, wanted: bool = False) -> Scanned:
        self._tokens += 1
        return Scanned(token=self._tokens, wanted=wanted)

    def set_query(self, query: str) -> None:
        """A new search: its scan starts over (an empty query is no search)."""
        self.query = query
        self.found[SEARCH] = []
        self.scans[SEARCH] = self._fresh(wanted=bool(query))

    def want(self, kind: str) -> None:
        """Jumps to `kind` were asked for: find those lines, and keep finding them."""
        self.scans[SCAN_OF[kind]].wanted = True

    def add(self, scan_kind: str, token: int, start: int, scan: Scan) -> bool:
        """Take a scan's results; False when they came too late (another query or run, or
        a range already taken)."""
        state = self.scans[scan_kind]
        if token != state.token or start != state.end:
            return False
        if scan_kind == SEARCH:
            self.found[SEARCH] += scan.found
        else:
            self.found[ERRORS] += scan.errors
            self.found[CALLS] += scan.calls
        state.end, state.lines = scan.end, state.lines + scan.lines
        return True

    def complete(self, kind: str, lines: int) -> bool:
        """Whether every one of the log's `lines` was scanned for `kind`."""
        return self.scans[SCAN_OF[kind]].lines >= lines

    def step(self, kind: str, index: int, forward: bool, wrap: bool) -> tuple[int | None, bool]:
        """The next (or previous) line of `kind` from `index`, and whether that wrapped
        around the end of the run."""
        lines = self.found[kind]
        if not lines:
            return None, False
        if forward:
            k = bisect_right(lines, index)
            if k < len(lines):
                return lines[k], False
            return (lines[0], True) if wrap else (None, False)
        k = bisect_left(lines, index) - 1
        if k >= 0:
            return lines[k], False
        return (lines[-1], True) if wrap else (None, False)

    def is_match(self, index: int) -> bool:
        lines = self.found[SEARCH]
        k = bisect_left(lines, index)
        return k < len(lines) and lines[k] == index

    def position(self, index: int) -> int | None:
        """Which match (1-based) line `index` is, or None when it is not one."""
        lines = self.found[SEARCH]
        k = bisect_left(lines, index)
        return k + 1 if k < len(lines) and lines[k] == index else None


# A scan to run: given `cancelled`, it scans (None: it was cancelled on the way).
ScanJob = Callable[[Callable[[], bool]], Scan | None]


class ScanHost(Protocol):
    """What `LogScans` needs of the widget it scans for (the timeline)."""

    run_log: RunEvents | None
    finder: Finder

    def scan_in_thread(self, scan_kind: str, job: ScanJob) -> Worker[Scan | None]: ...

    def scan_failed(self, reason: str) -> None: ...

    def scanned(self, found: list[int]) -> None: ...


class LogScans:
    """Starts the scans the timeline's `Finder` wants and hands their results back."""

    def __init__(self, timeline: ScanHost) -> None:
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
        start, end = state.end, log.indexed_to
        if start >= end:
            return
        job: ScanJob
        if scan_kind == SEARCH:
            job = functools.partial(log.search, timeline.finder.query, start, end, state.lines)
        else:
            job = functools.partial(log.marks, start, end, state.lines)
        if end - start > SYNC_BYTES:
            worker = timeline.scan_in_thread(scan_kind, job)
            self._running[worker] = (scan_kind, state.token, start)
            return
        try:
            scan = job(lambda: False)
        except OSError as exc:
            timeline.scan_failed(os_reason(exc))
            return
        self._took(scan_kind, state.token, start, scan)

    def finished(self, worker: Worker[Scan | None]) -> None:
        """A worker changed state (the timeline hands on Textual's message)."""
        job = self._running.get(worker)
        if job is None or not worker.is_finished:
            return
        del self._running[worker]
        if worker.state is WorkerState.SUCCESS:
            self._took(*job, worker.result)
        elif worker.state is WorkerState.ERROR and worker.error is not None:
            error = worker.error
            reason = os_reason(error) if isinstance(error, OSError) else str(error)
            self.timeline.scan_failed(reason)

    def _took(self, scan_kind: str, token: int, start: int, scan: Scan | None) -> None:
        if scan is not None and self.timeline.finder.add(scan_kind, token, start, scan):
            self._start(scan_kind)  # what the log gained while this one ran
            self.timeline.scanned(scan.found)
