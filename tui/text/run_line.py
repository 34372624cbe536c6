"""What the run list says about a run: its columns (`COLUMNS`, those that fit a width) and one
run as a line (`run_line`), each cell literal. Plain Rich text: no widgets here."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_DOWN, Decimal

from rich.cells import cell_len, set_cell_size
from rich.text import Text

from agentor.durations import duration
from agentor.engine.statuses import (
    AWAITING_APPROVAL,
    COMPLETED,
    DIVERGED,
    FAILED,
    MAX_TURNS,
    RUNNING,
    UNREADABLE,
)
from agentor.literal import literal_line
from agentor.ops.pricing import RunCost, format_cost
from agentor.sources.runrow import RunRow
from tui.text.formatting import count, relative_time, short_id, token_count
from tui.text.styles import FORK_MARK, FORK_STYLE, STATUS_STYLES

Column = tuple[str, int, bool]  # title, width, right-aligned

# The prompt takes what is left; on a narrow screen columns go, in `DROP` order, to leave it
# at least PROMPT_MIN cells.
COST_WIDTH = 9
COLUMNS: tuple[Column, ...] = (
    ("pin", 1, False),  # `PIN_MARK` on a pinned run; no title
    ("status", 11, False),
    ("id", 8, False),
    ("agent", 16, False),
    ("model", 14, False),
    ("started", 9, False),
    ("took", 7, True),
    ("turns", 5, True),
    ("tools", 5, True),
    ("tokens", 7, True),
    ("cost", COST_WIDTH, True),  # every generation priced (`agentor.ops.pricing`); "–" unknown
)
# How the status column writes a status whose name does not fit it (the title, the help and the
# detail say it whole).
STATUS_WORDS = {AWAITING_APPROVAL: "awaiting"}
DROP = ("model", "took", "tools", "turns", "cost", "started", "tokens", "agent")
TITLES = {"pin": ""}  # how the header writes a column, where not by its name
PIN_MARK = "*"
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


def status_word(status: str) -> str:
    """A status as the run list's status column writes it."""
    return STATUS_WORDS.get(status) or literal_line(status, 20)


def fit(text: str, width: int, right: bool = False) -> str:
    """`text` padded or cut (with an ellipsis) to exactly `width` cells."""
    if cell_len(text) > width:
        return set_cell_size(text, width - 1) + "…"
    pad = " " * (width - cell_len(text))
    return pad + text if right else text + pad


def started(row: RunRow, now: float) -> str:
    """When the run started, relative to `now` ("3m ago"): a fork's start is when it was
    made, not the start of the parent's events it copied; the list is sorted by it."""
    if row.summary is None:
        return "-"
    return relative_time(row.sort_key, now)


def took(row: RunRow, now: float) -> str:
    """How long the run was worked on: its segments' spans summed, without the idle gaps
    between a crash and its resume; a running run's counts up to `now`. "…" until a quick
    row is read whole (the segments between its first line and its tail are not known)."""
    s = row.summary
    if s is None:
        return "-"
    if not row.complete:
        return "…"
    if row.status == RUNNING:
        return duration(s.active_time(now, row.held_since))
    return duration(s.active_time())


def timed(row: RunRow, now: float) -> tuple[str, str]:
    """The texts of a row that move with the clock."""
    return started(row, now), took(row, now)


def cost_cell(row: RunRow) -> tuple[str, str]:
    """The cost column: "…" until the row is read whole and priced, "–" when unknown, never
    "$0" for what nobody knows; "≥$…" when some generations could not be priced."""
    cost = row.cost  # once: the fill's thread may set it meanwhile
    if cost is None:
        return "…", "dim"
    return _fitted(cost), "" if cost.total is not None else "dim"


def _fitted(cost: RunCost) -> str:
    """The cost as the column holds it whole: a lower bound of a fraction of a cent too wide
    for it ("≥$0.000024", a resume by an unpriced model) keeps one significant digit, rounded
    down so that it stays a lower bound ("≥$0.00002")."""
    text = format_cost(cost)
    total = cost.total
    if len(text) <= COST_WIDTH or cost.complete or total is None or total >= Decimal("0.01"):
        return text
    down = total.quantize(Decimal(1).scaleb(total.adjusted()), rounding=ROUND_DOWN)
    return f"≥${down:.{-down.adjusted()}f}"


def cells(
    row: RunRow, now: float, status: str | None = None, pinned: bool = False
) -> dict[str, tuple[str, str]]:
    """Each column's (text, style) for a run (`status`: shown in place of the row's)."""
    s = row.summary
    status = status or row.status
    out = {
        "pin": (PIN_MARK if pinned else "", "bold yellow"),
        # A `run_end` may name any status: it is text from the log like the rest.
        "status": (status_word(status), STATUS_STYLES.get(status, "")),
        "id": (literal_line(short_id(row.run_id)), "bold" if row.status != COMPLETED else ""),
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
        "tokens": ("…" if partial else token_count(s.usage.total_tokens), partial),
        "cost": cost_cell(row),
    }
    return out


def run_line(
    row: RunRow,
    now: float,
    columns: Sequence[Column] = COLUMNS,
    mark: str | None = None,
    status: str | None = None,
    pinned: bool = False,
) -> Text:
    """One run as a list line: status word in its colour, then the columns, then the prompt
    (after the `mark`, if the app has one for this run: before the prompt, it is never cut)."""
    s = row.summary
    out = Text(no_wrap=True)
    values = cells(row, now, status, pinned)
    for title, w, right in columns:
        text, style = values.get(title, ("-", "dim"))
        out.append(fit(text, w, right), style)
        out.append(GAP)
    if mark:
        out.append(literal_line(mark, 60), "bold yellow")
        out.append(GAP)
    if row.status == UNREADABLE or s is None:
        out.append(literal_line(row.error or "unreadable", 200), "red")
        return out
    if row.forked_from is not None:  # a fork: marked before its prompt (`/fork` finds them)
        out.append(f"{FORK_MARK} ", FORK_STYLE)
    out.append(literal_line(s.first_prompt or "", 300))
    if s.error and row.status in (FAILED, MAX_TURNS, DIVERGED):
        out.append("  ")
        out.append(literal_line(s.error, 200), "red" if row.status != DIVERGED else "")
    if row.error:  # a readable run with bad lines says so
        out.append("  ⚠ ", "yellow")
        out.append(literal_line(row.error, 200), "yellow")
    return out
