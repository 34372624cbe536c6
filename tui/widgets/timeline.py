"""`Timeline`: the events of one run, one line each, read lazily from its `RunLog`."""

from __future__ import annotations

from bisect import bisect_right

from rich.text import Text

from agentor.engine.logformat import BadLine
from agentor.engine.replay import event_time

from ..formatting import offset, short_id
from ..literal import literal_line
from ..messages import EventHighlighted
from ..runs import RunLog
from ..styles import TYPE_STYLES
from ..summaries import summary
from .cursor_list import CursorList
from .run_list import fit

# The turn column is as wide as the run's turns need (turn 1234 is not cut to "12…"), within
# these bounds: a log may hold any number, and a turn of 10**30 is cut rather than take the line.
TURN_WIDTH = 3
TURN_WIDTH_MAX = 9


class Timeline(CursorList):
    """Opens at the newest event; with `follow` on, new events keep the cursor at the end."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_log: RunLog | None = None
        self.run_id: str | None = None
        self.follow = True
        self.empty_message = "Select a run to see its events."
        self.turn_width = TURN_WIDTH

    # -- what it shows -------------------------------------------------------------------------

    def show(self, run_id: str, log: RunLog) -> None:
        if run_id != self.run_id:
            self.follow = True
        if self.run_log is not None and self.run_log is not log:
            self.run_log.close()
        self.run_id, self.run_log = run_id, log
        self.turn_width = TURN_WIDTH
        self._widen_turns(len(log))
        self.cursor = len(log) - 1
        self.rows_changed()
        self.move_cursor(len(log) - 1, notify=False)
        self.cursor_moved()
        self._retitle()

    def clear(self, message: str) -> None:
        if self.run_log is not None:
            self.run_log.close()
        self.run_id, self.run_log, self.empty_message = None, None, message
        self.cursor = -1
        self.rows_changed()
        self.cursor_moved()
        self._retitle()

    def grow(self) -> int:
        """Read what was appended to the run's file; returns how many lines are new."""
        if self.run_log is None:
            return 0
        try:
            added = self.run_log.poll()
        except OSError as exc:
            self.clear(f"The run's file cannot be read: {exc}")
            return 0
        if self.run_log.reset_happened:
            # The file was replaced: the old lines mean nothing now.
            self.show(self.run_id or "", self.run_log)
            return added
        if added:
            before = self.cursor
            self._widen_turns(len(self.run_log))
            # Lines only come at the end (a partial line waits for its newline): the lines
            # drawn so far stay as they are.
            self.rows_appended(len(self.run_log) - added)
            if self.follow:
                self.move_cursor(len(self.run_log) - 1, notify=False)
                self.post_message(EventHighlighted(self.cursor, live=True))
            elif before < 0:
                self.cursor_moved()
            self._retitle()
        return added

    def _widen_turns(self, end: int) -> None:
        """Make the turn column as wide as the latest turns (turns only grow in a log, so
        the last lines hold the widest); a wider turn met in a row drawn later widens it too."""
        assert self.run_log is not None
        for index in range(end - 1, max(-1, end - 21), -1):
            item = self.run_log.item(index)
            turn = getattr(item, "turn", None)
            if turn is not None:
                self._fit_turn(str(turn))
                return

    def _fit_turn(self, text: str) -> bool:
        """Widen the turn column for `text`; True when it grew (every row is drawn again)."""
        width = min(len(text), TURN_WIDTH_MAX)
        if width <= self.turn_width:
            return False
        self.turn_width = width
        return True

    def toggle_follow(self) -> bool:
        self.follow = not self.follow
        if self.follow:
            self.move_cursor(self.row_count() - 1)
        self._retitle()
        return self.follow

    def _retitle(self) -> None:
        if self.run_log is None or self.run_id is None:
            title, subtitle = "Timeline", None
        else:
            n = len(self.run_log)
            lines = f"{n:,} line{'s' if n != 1 else ''}"
            title = f"Timeline · {literal_line(short_id(self.run_id))} · {lines}"
            subtitle = "following" if self.follow else "follow off (f)"
        self.set_titles(title, subtitle)

    # -- CursorList ----------------------------------------------------------------------------

    def row_count(self) -> int:
        return len(self.run_log) if self.run_log is not None else 0

    def cursor_moved(self) -> None:
        if self.follow and not self.at_end:
            # Reading back through the run: stop pulling the cursor to the newest event.
            self.follow = False
            self._retitle()
        self.post_message(EventHighlighted(self.cursor if self.cursor >= 0 else None))

    def empty_text(self) -> Text:
        return Text("  " + literal_line(self.empty_message), "italic")

    def render_row(self, index: int, width: int) -> Text:
        assert self.run_log is not None
        item = self.run_log.item(index)
        out = Text(no_wrap=True)
        if isinstance(item, BadLine):
            gutter = fit("", 8) + " " + fit("?", 11) + " " + fit("", self.turn_width) + "  "
            out.append(gutter, "dim")
            out.append_text(summary(item))
            return out
        start = self.run_log.start_time
        t = event_time(item)
        out.append(fit(offset(t - start) if t is not None and start is not None else "", 8, True))
        out.append(" ")
        out.append(fit(literal_line(item.type, 20), 11), TYPE_STYLES.get(item.type, "dim"))
        out.append(" ")
        turn = str(item.turn) if item.turn is not None else ""
        if self._fit_turn(turn):
            self.call_after_refresh(self.rows_changed)  # the rows drawn so far are narrower
        out.append(fit(turn, self.turn_width, True), "dim")
        out.append("  ")
        segment = bisect_right(self.run_log.segment_starts, index)
        out.append_text(summary(item, segment))
        return out
