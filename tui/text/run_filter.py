"""Which runs the list shows (the `/` text filter and the `s` status filter) and what its
title counts. Plain data: no widgets here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass

from rich.cells import cell_len

from agentor.engine.statuses import (
    AWAITING_APPROVAL,
    COMPLETED,
    FAILED,
    INTERRUPTED,
    MAX_TURNS,
    RUNNING,
    STOPPING,
    UNREADABLE,
)
from agentor.literal import literal_line
from agentor.sources.runrow import RunRow

NEEDS_ATTENTION = "needs attention"
# `s` cycles through these; each names the statuses it shows (None: all).
STATUS_FILTERS: tuple[tuple[str, frozenset[str] | None], ...] = (
    ("all", None),
    (NEEDS_ATTENTION, frozenset({AWAITING_APPROVAL, INTERRUPTED, FAILED, MAX_TURNS, UNREADABLE})),
    ("failed", frozenset({FAILED, MAX_TURNS})),
    ("completed", frozenset({COMPLETED})),
)
# What the run list's title counts, in this order, when there are any: a run waiting for a
# person first (nothing else moves it on). Each with its word, a shorter one and an
# abbreviation, for titles that must fit a narrow pane (`list_title`).
TITLE_COUNTS = (
    (("awaiting approval", "awaiting", "await."), (AWAITING_APPROVAL,)),
    (("running", "running", "running"), (RUNNING,)),
    (("stopping", "stopping", "stop."), (STOPPING,)),
    (("interrupted", "interrupted", "intr."), (INTERRUPTED,)),
    (("failed", "failed", "failed"), (FAILED, MAX_TURNS)),
    (("unreadable", "unreadable", "unread."), (UNREADABLE,)),
)


# Filter words that name a kind of run rather than text: `fork` (or `is:fork`) admits forks
# only (runs made by `F`, `agentor fork` or `agentor replay`).
FORK_WORDS = frozenset({"fork", "is:fork"})


def matches(row: RunRow, words: list[str]) -> bool:
    """Every word of the filter is in the run's id, agent, model, status or first prompt;
    `fork` / `is:fork` admits forks only."""
    if any(w in FORK_WORDS for w in words):
        if row.forked_from is None:
            return False
        words = [w for w in words if w not in FORK_WORDS]
    s = row.summary
    fields = [row.run_id, row.status]
    if s is not None:
        fields += [s.agent or "", s.model or "", s.first_prompt or ""]
    haystack = "\n".join(fields).lower()
    return all(w in haystack for w in words)


@dataclass
class RunFilter:
    text: str = ""
    status: int = 0  # an index into STATUS_FILTERS

    def cycle_status(self) -> None:
        self.status = (self.status + 1) % len(STATUS_FILTERS)

    def apply(self, rows: list[RunRow], keep: Collection[str] = ()) -> list[RunRow]:
        """The rows the filter admits, and those whose run id is in `keep` whatever they say.
        "needs attention" shows the runs awaiting approval first (each part newest first):
        they wait for a person, the others for a resume."""
        name, wanted = STATUS_FILTERS[self.status]
        words = self.text.lower().split()
        if wanted is None and not words:
            return rows
        shown = [r for r in rows if r.run_id in keep or self._admits(r, wanted, words)]
        if name == NEEDS_ATTENTION:
            shown.sort(key=lambda r: r.status != AWAITING_APPROVAL)  # stable: newest first
        return shown

    def admits(self, row: RunRow) -> bool:
        return self._admits(row, STATUS_FILTERS[self.status][1], self.text.lower().split())

    @staticmethod
    def _admits(row: RunRow, wanted: frozenset[str] | None, words: list[str]) -> bool:
        return (wanted is None or row.status in wanted) and (not words or matches(row, words))

    def describe(self) -> str:
        """`status: failed · filter: london`, or "" when nothing is filtered."""
        parts = []
        name, wanted = STATUS_FILTERS[self.status]
        if wanted is not None:
            parts.append(f"status: {name}")
        if self.text:
            parts.append(f"filter: {literal_line(self.text, 40)}")
        return " · ".join(parts)


def list_title(
    shown: list[RunRow],
    total: int,
    status_of: Callable[[RunRow], str] = lambda r: r.status,
    label: str = "",
    room: int | None = None,
) -> str:
    """`~/runs · Runs 12 · 3 interrupted`, or `Runs 4 of 12 · …` when a filter hides some. Each
    run is counted by the status its row shows (`status_of`: *stopping* over *running*, say).

    With `room` (the cells the title may take), the first of these that fits: the source
    (`label`) and the counts' words, then shorter words, then only the source's last part
    (`…/runs`), then without the source, then the words abbreviated: the counts are what a
    narrow title keeps."""
    runs = f"Runs {len(shown)}" if len(shown) == total else f"Runs {len(shown)} of {total}"
    counts = Counter(map(status_of, shown))  # one pass: 100,000 rows
    found = [(words, sum(counts[s] for s in statuses)) for words, statuses in TITLE_COUNTS]
    found = [(words, n) for words, n in found if n]
    head = [label] if label else []
    tail = [f"…/{label.rpartition('/')[2]}"] if "/" in label else head
    tries = [(head, 0), (head, 1), (tail, 1), ([], 1), ([], 2)] if room is not None else [(head, 0)]
    for first, level in tries:
        title = " · ".join([*first, runs, *(f"{n} {words[level]}" for words, n in found)])
        if room is None or cell_len(title) <= room:
            break
    return title
