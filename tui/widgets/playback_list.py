"""`PlaybackList`: the lines of a run a playback has shown so far, drawn as the timeline draws
them, with a line of its own before each shortened idle gap ("… 3 h later")."""

from __future__ import annotations

from rich.text import Text

from agentor.engine.log.format import BadLine
from agentor.sources.playback import Step
from agentor.sources.whole_run import WholeRun
from tui.text.event_views import timeline_line, type_label, type_style
from tui.text.formatting import offset, span_words
from tui.text.run_line import fit
from tui.widgets.cursor_list import CursorList

GAP_STYLE = "italic #9d65ff"


class PlaybackList(CursorList):
    """Rows: each line shown, a gap note before a line whose wait was shortened."""

    def __init__(self, run: WholeRun, steps: list[Step]) -> None:
        super().__init__(id="playback-rows")
        self.run, self.steps = run, steps
        self.start = next((s.time for s in steps if s.time is not None), None)
        self.rows: list[tuple[bool, int]] = []  # (a gap note?, step index)
        self.row_of: list[int] = []  # step index -> its line's row
        for i, step in enumerate(steps):
            if step.idle:
                self.rows.append((True, i))
            self.row_of.append(len(self.rows))
            self.rows.append((False, i))
        self.shown = 0  # rows shown

    def show_upto(self, position: int, waiting: bool) -> None:
        """The first `position` lines are shown (and, `waiting` for the next after a long
        gap, its note); the cursor follows the newest row unless it was moved away."""
        shown = self.row_of[position - 1] + 1 if position > 0 else 0
        if waiting and position < len(self.steps) and self.steps[position].idle:
            shown += 1
        if shown == self.shown:
            return
        following = self.cursor < 0 or self.cursor >= self.shown - 1
        before, self.shown = self.shown, shown
        if shown > before:
            self.rows_appended(before)
        else:
            self.rows_changed()
        if following:
            self.move_cursor(shown - 1)

    def row_count(self) -> int:
        return self.shown

    def render_row(self, index: int, width: int) -> Text:
        note, i = self.rows[index]
        step = self.steps[i]
        if note:
            return Text(" " * 9 + f"… {span_words(step.gap)} later", GAP_STYLE)
        item = self.run.items[step.index]
        out = Text(no_wrap=True)
        if isinstance(item, BadLine):
            out.append(fit("", 8) + " " + fit("?", 11) + "      ", "dim")
            out.append_text(timeline_line(item))
            return out
        start, t = self.start, step.time
        at = offset(t - start) if t is not None and start is not None else ""
        out.append(fit(at, 8, True) + " ")
        out.append(fit(type_label(item.type), 11), type_style(item.type, "dim"))
        out.append(
            " " + fit(str(item.turn) if item.turn is not None else "", 3, True) + "  ", "dim"
        )
        out.append_text(timeline_line(item, step.segment))
        return out
