"""`RunList`: every run of the directory, newest first, one line each."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from rich.cells import cell_len, set_cell_size
from rich.text import Text

from ..formatting import count, duration, relative_time, short_id
from ..literal import literal_line
from ..messages import RunHighlighted
from ..runs import RUNNING, RunRow
from ..styles import STATUS_STYLES
from .cursor_list import CursorList

Column = tuple[str, int, bool]  # title, width, right-aligned

# The prompt takes what is left; on a narrow screen columns go, in `DROP` order, to leave it
# at least PROMPT_MIN cells.
COLUMNS: tuple[Column, ...] = (
    ("status", 11, False),
    ("id", 8, False),
    ("agent", 16, False),
    ("model", 14, False),
    ("started", 9, False),
    ("took", 7, True),
    ("turns", 5, True),
    ("tools", 5, True),
    ("tokens", 7, True),
)
DROP = ("model", "took", "tools", "turns", "started", "tokens", "agent")
PROMPT_MIN = 30
GAP = "  "


def columns_for(width: int, id_width: int = 8) -> tuple[Column, ...]:
    """The columns that fit beside a readable prompt in `width` cells (the id column as wide
    as `id_width`: runs named by their callers have longer ids than generated ones)."""
    shown = [(t, id_width if t == "id" else w, r) for t, w, r in COLUMNS]
    for title in DROP:
        if sum(w + len(GAP) for _, w, _ in shown) + PROMPT_MIN <= width:
            break
        shown = [c for c in shown if c[0] != title]
    return tuple(shown)


def fit(text: str, width: int, right: bool = False) -> str:
    """`text` padded or cut (with an ellipsis) to exactly `width` cells."""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


class RunList(CursorList):
    """The run rows it is given (already filtered and sorted by the app)."""

    has_header = True

    def __init__(self, clock: Callable[[], float] = time.time, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.clock = clock
        self.rows: list[RunRow] = []
        self.empty_message = "No runs yet."
        self.hidden = 0  # runs a filter hides (an empty list then says so)
        # A note shown before a run's prompt, kept for the session (e.g. "⚠ unsaved").
        self.marks: dict[str, str] = {}
        # A status the app knows better than the file, shown in place of the row's.
        self.statuses: dict[str, str] = {}
        self._where: dict[str, int] | None = None  # run id -> index, built when asked
        # run id -> its "started" and "took" texts as last drawn (the clock moves them)
        self._timed: dict[str, tuple[str, str]] = {}
        self.id_width = 8  # the widest id shown, at least 8

    @property
    def current(self) -> RunRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def set_rows(self, rows: Sequence[RunRow], hidden: int = 0) -> None:
        """Show `rows` (`hidden`: how many more a filter hides); the cursor stays on its run
        when that is still there."""
        before = self.current.run_id if self.current else None
        self.rows = list(rows)
        self.hidden = hidden
        self.id_width = max([8, *(cell_len(short_id(r.run_id)) for r in self.rows)])
        self._where = None
        index = next((i for i, r in enumerate(self.rows) if r.run_id == before), None)
        if index is not None:
            self.cursor = index
        self.rows_changed()
        self.scroll_to_cursor()
        after = self.current.run_id if self.current else None
        if after != before:
            self.cursor_moved()

    def index_of(self, run_id: str) -> int | None:
        if self._where is None:
            self._where = {r.run_id: i for i, r in enumerate(self.rows)}
        return self._where.get(run_id)

    def select(self, run_id: str) -> bool:
        index = self.index_of(run_id)
        if index is None:
            return False
        self.move_cursor(index)
        return True

    def runs_updated(self, run_ids: Iterable[str]) -> None:
        """These runs' rows changed in place (their order and filtering did not): redraw
        their lines only."""
        self.rows_updated(i for i in map(self.index_of, run_ids) if i is not None)

    def clock_moved(self) -> None:
        """Redraw the rows on screen whose relative start ("12s ago") or duration (a running
        run's ticks) reads differently now."""
        now = self.clock()
        top = round(self.scroll_y)
        shown = range(top, min(len(self.rows), top + self.scrollable_content_region.height))
        self.rows_updated(
            [i for i in shown if self._timed.get(self.rows[i].run_id) != timed(self.rows[i], now)]
        )

    def mark(self, run_id: str, note: str) -> None:
        self.marks[run_id] = note
        self.runs_updated([run_id])

    def shown_status(self, row: RunRow) -> str:
        """The status the row shows: the app's, where it knows better, else the row's own."""
        return self.statuses.get(row.run_id, row.status)

    def show_status(self, run_id: str, status: str | None) -> None:
        """Show `status` for the run in place of its own (None: its own again)."""
        if status is None:
            self.statuses.pop(run_id, None)
        else:
            self.statuses[run_id] = status
        self.runs_updated([run_id])

    # -- CursorList ----------------------------------------------------------------------------

    def row_count(self) -> int:
        return len(self.rows)

    def cursor_moved(self) -> None:
        row = self.current
        self.post_message(RunHighlighted(row.run_id if row else None))

    def empty_text(self) -> Text:
        message = "No run matches the filter." if self.hidden else self.empty_message
        return Text("  " + literal_line(message), "italic")

    def render_header(self, width: int) -> Text:
        out = Text(no_wrap=True)
        for title, w, right in columns_for(width, self.id_width):
            out.append(fit(title, w, right) + GAP)
        out.append("prompt")
        return out

    def render_row(self, index: int, width: int) -> Text:
        row, now = self.rows[index], self.clock()
        self._timed[row.run_id] = timed(row, now)
        columns = columns_for(width, self.id_width)
        return run_line(
            row, now, columns, self.marks.get(row.run_id), self.statuses.get(row.run_id)
        )


def started(row: RunRow, now: float) -> str:
    """When the run started, relative to `now` ("3m ago")."""
    s = row.summary
    if s is None:
        return "-"
    return relative_time(s.started_at if s.started_at else row.mtime, now)


def took(row: RunRow, now: float) -> str:
    """How long the run was worked on: its segments' spans summed, without the idle gaps
    between a crash and its resume; a running run's counts up to `now`. "…" until a quick
    row is read whole (the segments between its first line and its tail are not known)."""
    s = row.summary
    if s is None:
        return "-"
    if not row.complete:
        return "…"
    return duration(s.active_time(now if row.status == RUNNING else None))


def timed(row: RunRow, now: float) -> tuple[str, str]:
    """The texts of a row that move with the clock."""
    return started(row, now), took(row, now)


def cells(row: RunRow, now: float, status: str | None = None) -> dict[str, tuple[str, str]]:
    """Each column's (text, style) for a run (`status`: shown in place of the row's)."""
    s = row.summary
    status = status or row.status
    out = {
        # A `run_end` may name any status: it is text from the log like the rest.
        "status": (literal_line(status, 20), STATUS_STYLES.get(status, "")),
        "id": (literal_line(short_id(row.run_id)), "bold" if row.status != "completed" else ""),
    }
    if s is None:
        return out
    # Quick rows (head and tail read) do not know their counts until the whole file is read.
    partial = "dim" if not row.complete else ""
    out |= {
        "agent": (literal_line(s.agent or "-", 40), ""),
        "model": (literal_line(s.model or "-", 40), "dim"),
        "started": (started(row, now), ""),
        "took": (took(row, now), partial),
        "turns": ("…" if partial else count(s.turns), partial),
        "tools": ("…" if partial else count(s.tool_calls), partial),
        "tokens": ("…" if partial else count(s.usage.total_tokens), partial),
    }
    return out


def run_line(
    row: RunRow,
    now: float,
    columns: Sequence[Column] = COLUMNS,
    mark: str | None = None,
    status: str | None = None,
) -> Text:
    """One run as a list line: status word in its colour, then the columns, then the prompt
    (after the `mark`, if the app has one for this run: before the prompt, it is never cut)."""
    s = row.summary
    out = Text(no_wrap=True)
    values = cells(row, now, status)
    for title, w, right in columns:
        text, style = values.get(title, ("-", "dim"))
        out.append(fit(text, w, right), style)
        out.append(GAP)
    if mark:
        out.append(literal_line(mark, 60), "bold yellow")
        out.append(GAP)
    if row.status == "unreadable" or s is None:
        out.append(literal_line(row.error or "unreadable", 200), "red")
        return out
    out.append(literal_line(s.first_prompt or "", 300))
    if s.error and row.status in ("failed", "max_turns"):
        out.append("  ")
        out.append(literal_line(s.error, 200), "red")
    if row.error:  # a readable run with bad lines says so
        out.append("  ⚠ ", "yellow")
        out.append(literal_line(row.error, 200), "yellow")
    return out
