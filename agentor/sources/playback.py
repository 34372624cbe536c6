"""A run's timeline as a playback plays it: when each line appears (`plan`), and the clock that
times it (`PlaybackClock`). The screen (`tui.widgets.playback_screen`) runs the plan on Textual
timers, a test on a clock of its own.

Each line waits, after the one before it, the gap between their recorded times (divided by the
speed). A gap longer than IDLE_CAP (a crash, then a resume hours later) waits CAPPED_WAIT
instead, and the screen says how long it was. Lines with no time (an unreadable line, an event
without one) come at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from agentor.engine.events import RUN_START, Event
from agentor.engine.history import event_time
from agentor.engine.log.format import BadLine

IDLE_CAP = 5.0  # recorded seconds: a longer gap is shortened
CAPPED_WAIT = 1.0  # what a shortened gap waits at ×1
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 10.0, 20.0, 50.0, 100.0)  # what + and - step through


@dataclass(frozen=True)
class Step:
    """Line `index` of the run: its recorded `time` (None: it has none), the recorded `gap`
    since the line before it with a time, what it `wait`s at ×1, whether that gap was
    shortened (`idle`), and its `segment` (1 + the run_starts before it: a resume's)."""

    index: int
    time: float | None
    gap: float
    wait: float
    idle: bool
    segment: int


def plan(items: Sequence[Event | BadLine]) -> list[Step]:
    """When each line of a run appears in its playback."""
    steps: list[Step] = []
    last: float | None = None
    segment = 0
    for i, item in enumerate(items):
        t = event_time(item) if isinstance(item, Event) else None
        if isinstance(item, Event) and item.type == RUN_START:
            segment += 1
        gap = max(0.0, t - last) if t is not None and last is not None else 0.0
        if gap != gap or gap == float("inf"):  # a log may hold any number
            gap = 0.0
        idle = gap > IDLE_CAP
        steps.append(Step(i, t, gap, CAPPED_WAIT if idle else gap, idle, max(segment, 1)))
        if t is not None:
            last = t
    return steps


def faster(speed: float) -> float:
    """The next speed up (+), or the fastest."""
    return next((s for s in SPEEDS if s > speed), SPEEDS[-1])


def slower(speed: float) -> float:
    """The next speed down (-), or the slowest."""
    return next((s for s in reversed(SPEEDS) if s < speed), SPEEDS[0])


class Timer(Protocol):
    def stop(self) -> None: ...


class PlaybackClock(Protocol):
    """What times a playback: `now()` in seconds (monotonic), and `call_later(delay, callback)`
    calling back once, `delay` seconds on, unless the timer it returns is stopped first."""

    def now(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer: ...
