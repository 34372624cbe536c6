"""`CompareList`: the compare view's rows (`tui.text.compare_rows`), the two runs side by side in
one list, so that both sides always scroll together; `n` `N` go from difference to difference."""

from __future__ import annotations

from rich.text import Text
from textual.message import Message

from agentor.literal import literal_line
from tui.text.compare_rows import TURN_ROW, CompareRow
from tui.text.formatting import short_id
from tui.widgets.cursor_list import CursorList

FIRST_MARK, DIFFERS_MARK = "▶", "≠"
# A cell that differs; the first divergence's cells stand out more.
DIFFERS_STYLE = "bold #ffd75f"
FIRST_STYLE = "bold black on #ffaf00"
RULE = " │ "
MARKS = 2  # cells of the mark column


class CompareList(CursorList):
    """Rows given by the screen; `first`: the row of the first divergence (None: the same)."""

    has_header = True

    class Moved(Message):
        """The cursor is on another row (the screen shows that row's differences whole)."""

    def __init__(self, rows: list[CompareRow], first: int | None, ids: tuple[str, str]) -> None:
        super().__init__(id="compare-rows")
        self.rows = rows
        self.first = first
        self.ids = ids
        self.note = ""  # what the last jump said ("no difference below")

    @property
    def current(self) -> CompareRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def center_cursor(self) -> None:
        """Scroll so that the cursor's row is a third down the view (what led to it above,
        what followed below)."""
        height = self.scrollable_content_region.height - self.header_height
        if height <= 0:  # not laid out yet
            self.call_after_refresh(self.center_cursor)
            return
        top = max(0, self.cursor - height // 3)
        self.scroll_to(y=top, animate=False, immediate=True, force=True)

    def difference_rows(self) -> list[int]:
        return [i for i, r in enumerate(self.rows) if r.differences]

    def jump(self, forward: bool) -> None:
        """To the next (previous) row with a difference, from the cursor."""
        rows = self.difference_rows()
        ahead = [i for i in rows if i > self.cursor] if forward else []
        behind = [i for i in rows if i < self.cursor] if not forward else []
        target = ahead[0] if ahead else (behind[-1] if behind else None)
        if target is None:
            self.note = "no difference " + ("below" if forward else "above") if rows else ""
            self.retitle()
            return
        self.move_cursor(target)

    def retitle(self) -> None:
        rows = self.difference_rows()
        if not rows:
            subtitle = "no difference"
        elif self.cursor in rows:
            subtitle = f"difference row {rows.index(self.cursor) + 1} of {len(rows)} (n/N)"
        else:
            subtitle = f"{len(rows)} rows differ (n/N)"
        self.set_titles(self.border_title_text, " · ".join(p for p in (subtitle, self.note) if p))

    @property
    def border_title_text(self) -> str:
        a, b = (literal_line(short_id(i)) for i in self.ids)
        return f"Compare · a {a} · b {b}"

    # -- CursorList ----------------------------------------------------------------------------

    def row_count(self) -> int:
        return len(self.rows)

    def cursor_moved(self) -> None:
        self.note = ""
        self.retitle()
        self.post_message(self.Moved())

    def render_header(self, width: int) -> Text:
        half = _half(width)
        out = Text(" " * MARKS, no_wrap=True)
        for label, run_id in (("a", self.ids[0]), ("b", self.ids[1])):
            cell = Text(f"{label} · {literal_line(short_id(run_id))}")
            cell.truncate(half, overflow="ellipsis", pad=True)
            out.append_text(cell)
            if label == "a":
                out.append(RULE)
        return out

    def render_row(self, index: int, width: int) -> Text:
        row, half = self.rows[index], _half(width)
        first = index == self.first
        mark = FIRST_MARK if first else (DIFFERS_MARK if row.differences else " ")
        out = Text(no_wrap=True)
        out.append(mark.ljust(MARKS), "bold #ffaf00" if row.differences else "")
        style = FIRST_STYLE if first else (DIFFERS_STYLE if row.differences else "")
        for side, cell in enumerate((row.a, row.b)):
            text = cell.copy()
            if row.turn is not None and row.kind != TURN_ROW:
                text = Text("  ") + text  # a turn's rows under its heading
            if style:
                text.stylize(style)
            text.truncate(half, overflow="ellipsis", pad=True)
            out.append_text(text)
            if side == 0:
                out.append(RULE, "dim")
        return out


def _half(width: int) -> int:
    return max(8, (width - MARKS - len(RULE)) // 2)
