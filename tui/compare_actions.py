"""`CompareActions`: `M` marks a run and compares two (a fork with its parent), `P` plays a run
back. A part of `RunsApp`, mixed into it, kept apart so that the app's module stays its wiring;
the views are `tui.widgets.compare_screen` and `tui.widgets.playback_screen`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentor.engine.statuses import UNREADABLE

from .data.playback import PlaybackClock
from .data.whole_run import WholeRun, read_run
from .text.formatting import short_id
from .widgets.compare_screen import CompareScreen
from .widgets.playback_screen import PlaybackScreen

if TYPE_CHECKING:  # to a type checker the mixin is the App it is mixed into
    from textual.app import App
    from textual.notifications import SeverityLevel

    from .data.source import RunSource
    from .widgets.run_list import RunList

    _Base = App[str | None]
else:
    _Base = object


class CompareActions(_Base):
    """Mixed into `RunsApp` (an `App`), whose source, run list and `tell` these use."""

    # What times a playback (None: Textual's timers); a test sets a clock it moves itself.
    playback_clock: PlaybackClock | None = None

    if TYPE_CHECKING:
        source: RunSource
        run_list: RunList

        def tell(
            self,
            message: str,
            *,
            title: str = "",
            severity: SeverityLevel = "information",
            timeout: float | None = None,
        ) -> None: ...

    def action_mark_compare(self) -> None:
        """M: mark the selected run, unmark it, compare it with the marked run, or (a fork,
        nothing marked) compare it with its parent."""
        row = self.run_list.current
        if row is None:
            self.tell("No run selected.", severity="warning")
            return
        run_id, marked = row.run_id, self.run_list.compare_mark
        if marked == run_id:
            self.run_list.set_compare_mark(None)
            self.tell(f"Unmarked {short_id(run_id)}.", timeout=3)
            return
        b = self._read_whole(run_id)
        if b is None:
            return
        if marked is not None:
            a = self._read_whole(marked)
            if a is not None:
                self.push_screen(CompareScreen(a, b))
            return
        if b.parent is not None:
            self._compare_with_parent(b, b.parent)
            return
        self._mark(run_id)

    def _compare_with_parent(self, fork: WholeRun, parent_id: str) -> None:
        if self.source.get(parent_id) is None:
            self.tell(
                f"{short_id(fork.run_id)} is a fork of {parent_id}, which is not in "
                f"{self.source.where}.",
                severity="warning",
            )
            self._mark(fork.run_id)
            return
        parent = self._read_whole(parent_id)
        if parent is not None:
            self.push_screen(CompareScreen(parent, fork))

    def _mark(self, run_id: str) -> None:
        self.run_list.set_compare_mark(run_id)
        self.tell(
            f"Marked {short_id(run_id)}: M on another run compares the two (M here unmarks).",
            timeout=5,
        )

    def action_playback(self) -> None:
        """P: the selected run's timeline, played back at its recorded pace."""
        row = self.run_list.current
        if row is None:
            self.tell("No run selected.", severity="warning")
            return
        run = self._read_whole(row.run_id, requests=False)
        if run is not None:
            self.push_screen(PlaybackScreen(run, self.playback_clock))

    def _read_whole(self, run_id: str, requests: bool = True) -> WholeRun | None:
        """The run read whole, or None (and why, told) when it cannot be."""
        row = self.source.get(run_id)
        if row is not None and row.status == UNREADABLE:
            self.tell(
                f"Run {run_id} is unreadable: {row.error or 'unknown error'}", severity="error"
            )
            return None
        try:
            log = self.source.open(run_id)
        except (OSError, KeyError, ValueError) as exc:
            self.tell(f"Run {run_id} cannot be read: {exc}", severity="error")
            return None
        try:
            return read_run(run_id, log, requests)
        except OSError as exc:
            self.tell(f"Run {run_id} cannot be read: {exc}", severity="error")
            return None
        finally:
            log.close()
