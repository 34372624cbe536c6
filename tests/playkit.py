"""A run with recorded gaps (a crash, and its resume three hours later), a clock a test
moves itself, and `press` (a key, then the worker it started), for the compare and playback
tests and snapshots."""

from __future__ import annotations

from collections.abc import Callable

T = 1796039000.0
HOURS = 3 * 3600
EVENTS = [
    {"type": "run_start", "agent": "A", "model": "m", "started_at": T, "ts": T},
    {"type": "generation", "turn": 1, "calls": [], "text": "thinking", "ended_at": T + 1.0},
    {"type": "tool_call", "turn": 1, "name": "f", "args": {"x": 1}, "call_id": "c", "ts": T + 1.5},
    {"type": "tool_result", "turn": 1, "name": "f", "result": "[b]ok[/b]", "call_id": "c",
     "ts": T + 3.5},
    # A crash, and a resume three hours later.
    {"type": "run_start", "agent": "A", "model": "m", "started_at": T + HOURS, "ts": T + HOURS},
    {"type": "run_end", "turn": 1, "status": "completed", "text": "done", "ts": T + HOURS + 0.5},
]  # fmt: skip


class ManualClock:
    """A `PlaybackClock` that moves only when told (`advance`), calling back what falls due."""

    def __init__(self) -> None:
        self.t = 0.0
        self.pending: list[list] = []  # [due, order, callback, live]
        self.order = 0

    def now(self) -> float:
        return self.t

    def call_later(self, delay: float, callback: Callable[[], None]) -> ManualClock.Handle:
        self.order += 1
        entry = [self.t + delay, self.order, callback, True]
        self.pending.append(entry)
        return self.Handle(entry)

    class Handle:
        def __init__(self, entry: list) -> None:
            self.entry = entry

        def stop(self) -> None:
            self.entry[3] = False

    @property
    def live(self) -> list[list]:
        return [e for e in self.pending if e[3]]

    def advance(self, seconds: float) -> None:
        target = self.t + seconds
        while True:
            due = sorted((e for e in self.live if e[0] <= target + 1e-9), key=lambda e: e[:2])
            if not due:
                break
            entry = due[0]
            entry[3] = False
            self.t = max(self.t, entry[0])
            entry[2]()
        self.t = target


async def press(pilot, key: str) -> None:
    """Press `key` and wait for what it started in a worker thread (reading runs whole)."""
    await pilot.press(key)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
