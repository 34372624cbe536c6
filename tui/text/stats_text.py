"""The stats view (`S`): runs, tokens and cost per day, per agent and per model, over the runs
the list shows, with a bar of block characters per day. Every name from a log is literal.
Plain Rich renderables: no widgets here.

A run counts on the day it started (UTC), under its agent and its first model. Its tokens and
cost are known once its row was read whole and priced (`RunRow.cost`): runs not read yet count
as runs, and make a total a lower bound ("≥"), as generations nobody can price do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from rich.console import Group
from rich.table import Table
from rich.text import Text

from agentor.literal import literal_line
from agentor.ops.pricing import RunCost, format_cost
from agentor.sources.runrow import RunRow
from tui.text.formatting import count, token_count

BAR_WIDTH = 30
EIGHTHS = " ▏▎▍▌▋▊▉"


@dataclass
class Tally:
    runs: int = 0
    tokens: int = 0
    cost: RunCost = field(default_factory=RunCost)
    pending: int = 0  # runs not read whole (their tokens) or not priced yet

    def add(self, row: RunRow) -> None:
        self.runs += 1
        cost, summary = row.cost, row.summary  # once each: the fill's thread may set them
        if summary is not None and (cost is None or not row.complete):
            self.pending += 1  # (an unreadable run has nothing to count: not pending)
        if summary is not None and row.complete:
            self.tokens += summary.usage.total_tokens
        if cost is not None:
            self.cost = self.cost + cost

    def cost_text(self) -> str:
        if self.cost.total is None:
            return "…" if self.pending else format_cost(self.cost)
        return ("≥" if self.pending or self.cost.unpriced else "") + format_cost(self.cost.total)


def day_of(row: RunRow) -> str:
    s = row.summary
    t = s.started_at if s is not None and s.started_at else row.modified_at
    if not t:
        return "unknown"  # an unreadable run that records no time
    try:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d")
    except (ValueError, OverflowError, OSError):
        return "?"


def agent_of(row: RunRow) -> str:
    return literal_line((row.summary.agent if row.summary else None) or "-", 40)


def model_of(row: RunRow) -> str:
    return literal_line((row.summary.model if row.summary else None) or "-", 40)


def tallies(rows: Sequence[RunRow], key: Callable[[RunRow], str]) -> dict[str, Tally]:
    out: dict[str, Tally] = {}
    for row in rows:
        out.setdefault(key(row), Tally()).add(row)
    return out


def bar(value: int, most: int, width: int = BAR_WIDTH) -> str:
    """`value` as a bar of block characters, `most` filling `width` cells (eighths of a cell;
    any value above 0 shows at least one)."""
    if most <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value * width * 8 / most))
    return "█" * (eighths // 8) + (EIGHTHS[eighths % 8] if eighths % 8 else "")


def _runs(n: int) -> str:
    return f"{count(n)} run{'s' if n != 1 else ''}"


def _table(title: str, first: str, groups: dict[str, Tally], chart: bool) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", expand=False)
    table.add_column(first, no_wrap=True)
    for name in ("runs", "tokens", "cost"):
        table.add_column(name, justify="right", no_wrap=True)
    if chart:
        table.add_column("runs a day", no_wrap=True, style="cyan")
    most = max((t.runs for t in groups.values()), default=0)
    for name, t in groups.items():
        tokens = token_count(t.tokens) + ("+" if t.pending else "")
        cells: list[Text | str] = [Text(name), str(t.runs), tokens, t.cost_text()]
        table.add_row(*cells, *([bar(t.runs, most)] if chart else []))
    return table


def runs_described(label: str, shown: int, hidden: int, filtered: str) -> str:
    """Which runs the stats are of: the source (`label`, literal), how many the list shows of
    how many, and its filter (`filtered`, as `RunFilter.describe` says it; "" for none)."""
    said = f"{literal_line(label)} · {shown:,} shown of {shown + hidden:,} runs"
    return f"{said} · {filtered}" if filtered else said


def stats(rows: Sequence[RunRow], described: str) -> Group:
    """The three tables over `rows` (`described`: which runs they are, for the heading)."""
    total = Tally()
    for row in rows:
        total.add(row)
    days = dict(sorted(tallies(rows, day_of).items()))
    agents = dict(sorted(tallies(rows, agent_of).items(), key=lambda kv: -kv[1].runs))
    models = dict(sorted(tallies(rows, model_of).items(), key=lambda kv: -kv[1].runs))
    head = Text()
    head.append(literal_line(described, 200), "bold")
    head.append(f"\n{_runs(total.runs)} · {token_count(total.tokens)} tokens · cost ")
    head.append(total.cost_text())
    if total.pending:
        head.append(f"\n{_runs(total.pending)} not read whole or priced yet: ", "dim")
        head.append("tokens and cost are lower bounds (+, ≥)", "dim")
    return Group(
        head,
        Text(""),
        _table("Per day (UTC)", "day", days, chart=True),
        Text(""),
        _table("Per agent", "agent", agents, chart=False),
        Text(""),
        _table("Per model", "model", models, chart=False),
    )
