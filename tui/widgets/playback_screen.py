"""`PlaybackScreen`: a run's timeline played back at its recorded pace (`P`): each line appears
after the recorded gap since the one before it, divided by the speed (`agentor.sources.playback`);
space pauses, `.` steps, 1 2 0 + - set the speed. Timed by a `PlaybackClock`: Textual's timers
(the UI thread never sleeps), or a test's."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Static

from agentor.literal import literal_line
from agentor.sources.playback import PlaybackClock, Timer, faster, plan, slower
from agentor.sources.whole_run import WholeRun
from tui.keys import bindings
from tui.keys.model import PLAYBACK_SCREEN
from tui.text.formatting import clock_time, offset, short_id
from tui.widgets.keys_footer import KeysFooter
from tui.widgets.playback_list import PlaybackList

MIN_DELAY = 0.001


class TimerClock:
    """A `PlaybackClock` on Textual's timers (`set_timer` of `widget`) and the monotonic clock."""

    def __init__(self, widget: Widget) -> None:
        self.widget = widget

    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        # A timer of no delay is never called back (Textual 8): events recorded at the same
        # instant come a millisecond apart.
        return self.widget.set_timer(max(delay, MIN_DELAY), callback)


def speed_text(speed: float) -> str:
    return f"×{speed:g}"


class PlaybackScreen(ModalScreen[None]):
    """Plays `run` from its first line; `clock` times it (None: Textual's timers)."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(PLAYBACK_SCREEN)
    DEFAULT_CSS = """
    PlaybackScreen {
        background: $background;
        #playback-status {
            height: 1;
            padding: 0 1;
            background: $boost;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        PlaybackList {
            height: 1fr;
            border: round $primary;
            border-title-style: bold;
        }
    }
    """

    def __init__(self, run: WholeRun, clock: PlaybackClock | None = None) -> None:
        super().__init__()
        self.run = run
        self.steps = plan(run.items)
        self.clock: PlaybackClock = clock if clock is not None else TimerClock(self)
        self.speed = 1.0
        self.paused = False
        self.position = 0  # lines shown
        self._timer: Timer | None = None
        self._due = 0.0  # when the timer calls back (the clock's time)
        self._left: float | None = None  # paused: recorded seconds left of the wait under way

    def compose(self) -> ComposeResult:
        yield Static(id="playback-status", markup=False)
        yield PlaybackList(self.run, self.steps)
        yield KeysFooter()

    @property
    def rows(self) -> PlaybackList:
        return self.query_one(PlaybackList)

    def on_mount(self) -> None:
        rows = self.rows
        n = len(self.run.items)
        rows.border_title = f"Playback · {literal_line(short_id(self.run.run_id))} · {n:,} lines"
        rows.focus()
        if self.steps:
            self._reveal()
        else:
            self._show()

    def on_unmount(self) -> None:
        self._stop_timer()

    # -- the clock -----------------------------------------------------------------------------

    def _reveal(self) -> None:
        """The next line appears; the one after it is waited for."""
        self._timer = None
        self.position += 1
        self._schedule(self._wait_of(self.position))

    def _wait_of(self, position: int) -> float:
        """Recorded seconds the line after the first `position` waits (0 at the end)."""
        return self.steps[position].wait if position < len(self.steps) else 0.0

    def _schedule(self, recorded: float) -> None:
        """Wait `recorded` seconds (at ×1) for the next line, unless paused or at the end."""
        self._stop_timer()
        if self.paused or self.position >= len(self.steps):
            self._left = recorded if self.paused else None
            self._show()
            return
        delay = recorded / self.speed
        self._due = self.clock.now() + delay
        self._timer = self.clock.call_later(delay, self._reveal)
        self._show()

    def _left_now(self) -> float:
        """Recorded seconds left of the wait under way."""
        if self._timer is None:
            return self._left if self._left is not None else self._wait_of(self.position)
        return max(0.0, self._due - self.clock.now()) * self.speed

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _show(self) -> None:
        waiting = not self.paused and self._timer is not None
        self.rows.show_upto(self.position, waiting)
        self.query_one("#playback-status", Static).update(self.status())

    def status(self) -> Text:
        """`▶ ×2 · line 3 of 12 · recorded 2026-05-30 14:02:11.250 UTC (+1.25s)`."""
        n = len(self.steps)
        if self.position >= n:
            state, style = "■ ended", "bold"
        elif self.paused:
            state, style = "⏸ paused", "bold bright_yellow"
        else:
            state, style = "▶ playing", "bold green"
        out = Text(f"{state} {speed_text(self.speed)}", style)
        out.append(f" · event {self.position:,} of {n:,}")
        if self.position:
            step = self.steps[self.position - 1]
            start = self.rows.start
            if step.time is not None:
                out.append(f" · recorded {clock_time(step.time)}")
                if start is not None:
                    out.append(f" ({offset(step.time - start)})", "dim")
        if self.paused and self.position < n:
            out.append(" · space: play · .: step", "dim")
        return out

    # -- keys ----------------------------------------------------------------------------------

    def action_toggle_pause(self) -> None:
        if self.paused:
            self.paused = False
            left, self._left = self._left_now(), None
            self._schedule(left)
        else:
            self._left = self._left_now()
            self._stop_timer()
            self.paused = True
            self._show()

    def action_step(self) -> None:
        """One line on; a playback under way pauses first."""
        if not self.paused:
            self.action_toggle_pause()
        if self.position < len(self.steps):
            self.position += 1
            self._left = None
            self._show()

    def action_speed(self, speed: float) -> None:
        self._set_speed(float(speed))

    def action_faster(self) -> None:
        self._set_speed(faster(self.speed))

    def action_slower(self) -> None:
        self._set_speed(slower(self.speed))

    def _set_speed(self, speed: float) -> None:
        left = self._left_now()
        self.speed = speed
        if self._timer is not None:
            self._schedule(left)  # what is left of the wait, at the new speed
        else:
            self._show()
