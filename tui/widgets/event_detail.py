"""`EventDetail`: everything about the highlighted event, scrollable."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from agentor.engine.events import (
    APPROVAL,
    APPROVAL_REQUEST,
    GENERATION,
    MESSAGE,
    RUN_END,
    RUN_START,
    Event,
)
from agentor.engine.history import RunSummary
from agentor.literal import literal_line
from agentor.sources.gated import decision_of, request_of
from agentor.sources.source import RunEvents
from tui.text.approval_text import approval_sections, request_sections
from tui.text.detail import DetailText, RunTotals, segment_start
from tui.text.event_views import detail

# While the timeline follows new events, the detail is rebuilt at most this often.
LIVE_DETAIL_S = 0.1
# What to show: a run's log, the run's id, a line of it, the whole run's summary (when it is
# known); or, with no line, why there is none.
Target = tuple[RunEvents | None, str | None, int | None, RunSummary | None, str]


class EventDetail(VerticalScroll):
    """Shows prepared text (see `tui.text.event_views.detail`); never parses markup."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.due: Target | None = None  # the event to show once the frame is drawn (`point_at`)
        # What the app knows of a whole run beyond its log (its cost, its pin), by run id.
        self.totals_of: Callable[[str], RunTotals | None] = lambda run_id: None
        self._shown_at = 0.0
        # The open run's lineage when it is a fork (`fork_text.lineage_line`), above each event.
        self.lineage: Text | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(""), markup=False, id="detail-body")

    def on_mount(self) -> None:
        self.border_title = Content("Detail")

    def show(self, body: Text | DetailText, title: str = "Detail") -> None:
        self.query_one("#detail-body", Static).update(body)
        self.border_title = Content(title)
        self.scroll_home(animate=False, immediate=True)

    def point_at(self, target: Target, live: bool = False) -> None:
        """Show `target` now; with `live` (the timeline's cursor follows new events), after
        the new lines are drawn and at most every LIVE_DETAIL_S. Building a detail and laying
        it out costs as much as the rest of the frame; in a burst only the newest event's
        detail is built."""
        if not live:
            self.due = None  # a key moved the cursor: show its event now
            self._show_target(target)
            return
        if self.due is not None:
            self.due = target  # one is on its way: it shows the newest
            return
        self.due = target
        wait = self._shown_at + LIVE_DETAIL_S - time.monotonic()
        if wait > 0:
            self.set_timer(wait, self._show_due)
        else:
            self.call_after_refresh(self._show_due)

    def _show_due(self) -> None:
        if self.due is not None:
            target, self.due = self.due, None
            self._shown_at = time.monotonic()
            self._show_target(target)

    def _show_target(self, target: Target) -> None:
        log, run_id, index, run, empty = target
        if index is None or index < 0 or log is None or run_id is None or index >= len(log):
            self.clear(empty if log is None else "")
        else:
            self.show_event(log, run_id, index, run)

    def show_event(
        self, log: RunEvents, run_id: str, index: int, run: RunSummary | None = None
    ) -> None:
        """Line `index` of a run's log (`run`: the whole run's summary, when it is known)."""
        item = log.item(index)
        kind = getattr(item, "type", None)
        request = log.request(index) if kind == GENERATION else None
        setup = segment_start(log, index) if kind in (GENERATION, MESSAGE, RUN_END) else None
        totals = self.totals_of(run_id) if kind == RUN_START else None
        body = detail(
            item, index, run_id, log.start_time, request, setup, run, self.lineage, totals
        )
        if kind == APPROVAL_REQUEST and isinstance(item, Event):
            request_sections(body, item, decision_of(log, index), time.time())
        elif kind == APPROVAL and isinstance(item, Event):
            approval_sections(body, item, request_of(log, index))
        title = f"Detail · {literal_line(kind, 20)}" if kind else "Detail · unreadable line"
        self.show(body, f"{title} · line {index + 1}")

    def clear(self, message: str = "") -> None:
        self.show(Text(message, "italic"))

    @property
    def text(self) -> str:
        """What is shown, as plain text (for tests and copying)."""
        content = self.query_one("#detail-body", Static).content
        return content.plain if isinstance(content, Text | DetailText) else str(content)
