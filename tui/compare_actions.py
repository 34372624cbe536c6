"""`CompareActions`: `M` marks a run and compares two (a fork with its parent), `P` plays a run
back. A part of `RunsApp`, mixed into it, kept apart so that the app's module stays its wiring;
the views are `tui.widgets.compare_screen` and `tui.widgets.playback_screen`.

Runs are read whole and compared in a worker thread (two runs of 1,000 turns take seconds);
what the worker finds reaches the screen through `call_from_thread`. A newer `M` or `P`
replaces a read still under way."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import work
from textual.worker import get_current_worker

from agentor.engine.statuses import UNREADABLE
from agentor.sources.playback import PlaybackClock
from agentor.sources.whole_run import WholeRun, read_run
from tui.text.compare_rows import Compared, compared
from tui.text.formatting import short_id
from tui.widgets.compare_screen import CompareScreen
from tui.widgets.playback_screen import PlaybackScreen

if TYPE_CHECKING:  # to a type checker the mixin is the App it is mixed into
    from textual.app import App
    from textual.notifications import SeverityLevel

    from agentor.sources.source import RunSource
    from tui.widgets.run_list import RunList

    _Base = App[str | None]
else:
    _Base = object

# Runs this long (lines of both) are said to be compared, as it may take a moment.
SAY_FROM_LINES = 2000


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
        self._compare_in_thread(run_id, marked)

    @work(thread=True, group="compare", exclusive=True, exit_on_error=False)
    def _compare_in_thread(self, run_id: str, marked: str | None) -> None:
        a_id = marked
        if a_id is None:  # a fork, compared with its parent; else the run is marked
            quick = self._read_whole(run_id, requests=False)
            if quick is None:
                return
            if quick.parent is None or self.source.get(quick.parent) is None:
                self.call_from_thread(self._mark, quick)
                return
            a_id = quick.parent
        a = self._read_whole(a_id)
        if a is None and marked is not None:  # gone, or broken: nothing to compare with
            self.call_from_thread(self.run_list.set_compare_mark, None)
        b = self._read_whole(run_id) if a is not None else None
        if a is None or b is None:
            return
        if len(a.items) + len(b.items) >= SAY_FROM_LINES:
            said = f"Comparing {len(a.items):,} and {len(b.items):,} lines…"
            self._tell_from_thread(said, "information", timeout=3)
        made = compared(a, b)
        if not get_current_worker().is_cancelled:
            self.call_from_thread(self._show_comparison, made)

    def _show_comparison(self, made: Compared) -> None:
        self.push_screen(CompareScreen(made))

    def _mark(self, run: WholeRun) -> None:
        self.run_list.set_compare_mark(run.run_id)
        parent = run.parent
        if parent is not None:  # a fork, its parent gone: it can be compared with another
            self.tell(
                f"{short_id(run.run_id)} is a fork of {parent}, which is not in "
                f"{self.source.where}: marked it instead.",
                severity="warning",
            )
            return
        self.tell(
            f"Marked {short_id(run.run_id)}: M on another run compares the two (M here unmarks).",
            timeout=3,
        )

    def action_playback(self) -> None:
        """P: the selected run's timeline, played back at its recorded pace."""
        row = self.run_list.current
        if row is None:
            self.tell("No run selected.", severity="warning")
            return
        self._playback_in_thread(row.run_id)

    @work(thread=True, group="playback", exclusive=True, exit_on_error=False)
    def _playback_in_thread(self, run_id: str) -> None:
        run = self._read_whole(run_id, requests=False)
        if run is not None and not get_current_worker().is_cancelled:
            self.call_from_thread(self._show_playback, run)

    def _show_playback(self, run: WholeRun) -> None:
        self.push_screen(PlaybackScreen(run, self.playback_clock))

    def _read_whole(self, run_id: str, requests: bool = True) -> WholeRun | None:
        """The run read whole, or None (and why, told) when it cannot be (a worker thread)."""
        row = self.source.get(run_id)
        if row is not None and row.status == UNREADABLE:
            self._tell_from_thread(f"Run {run_id} is unreadable: {row.error or 'unknown error'}")
            return None
        try:
            log = self.source.open(run_id)
        except (OSError, KeyError, ValueError) as exc:
            self._tell_from_thread(f"Run {run_id} cannot be read: {exc}")
            return None
        try:
            return read_run(run_id, log, requests)
        except OSError as exc:
            self._tell_from_thread(f"Run {run_id} cannot be read: {exc}")
            return None
        finally:
            log.close()

    def _tell_from_thread(
        self, message: str, severity: SeverityLevel = "warning", timeout: float | None = None
    ) -> None:
        self.call_from_thread(self.tell, message, severity=severity, timeout=timeout)
