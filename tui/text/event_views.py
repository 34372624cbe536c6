"""Each type of event as the TUI shows it, declared once (`EVENT_VIEWS`): the colour of its type
(the timeline's type column, the detail's heading), the type column's word when its name does
not fit, its timeline row (tui.text.timeline_line) and its detail (tui.text.detail).

Every type a log holds (agentor.engine.events.LOGGED_TYPES) has its entry; a type this version
does not know is shown by its fields (`OTHER`). tests/test_event_types.py fails when a type
lacks its entry here or in any other view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from agentor.engine.events import (
    APPROVAL,
    APPROVAL_REQUEST,
    CLAIM,
    FORK,
    GENERATION,
    INVALID_OUTPUT,
    MESSAGE,
    RELEASE,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_DISABLED,
    TOOL_RESULT,
    TOOL_START,
    Event,
)
from agentor.engine.history import RunSummary
from agentor.engine.log.format import BadLine
from agentor.literal import literal_line
from tui.text import detail as details
from tui.text import timeline_line as rows
from tui.text.detail import Around, DetailText, RunTotals
from tui.text.styles import AWAITING_STYLE, FORK_STYLE
from tui.text.timeline_line import Row

RowMaker = Callable[[Text, Event, Row], None]
DetailMaker = Callable[[DetailText, Event, Around], None]


@dataclass(frozen=True)
class EventView:
    """One type of event on screen: its `style`, its timeline `row`, its `detail` (what is under
    the detail's heading), and its `label` in the timeline's type column (11 cells) when its
    name does not fit there."""

    style: str
    row: RowMaker
    detail: DetailMaker
    label: str | None = None


EVENT_VIEWS: dict[str, EventView] = {
    RUN_START: EventView("bold green", rows.run_start_row, details.run_start_detail),
    GENERATION: EventView("blue", rows.generation_row, details.generation_detail),
    TOOL_CALL: EventView("yellow", rows.call_row, details.call_detail),
    TOOL_START: EventView("yellow", rows.tool_start_row, details.call_detail),
    TOOL_RESULT: EventView("green", rows.tool_result_row, details.tool_result_detail),
    MESSAGE: EventView("default", rows.message_row, details.answer_detail),
    RUN_END: EventView("bold", rows.run_end_row, details.answer_detail),
    FORK: EventView(FORK_STYLE, rows.fork_row, details.common_detail),
    APPROVAL_REQUEST: EventView(
        AWAITING_STYLE, rows.approval_request_row, details.approval_request_detail, "approval?"
    ),
    APPROVAL: EventView("#ff87d7", rows.approval_row, details.common_detail),
    # A worker of a fleet took the run (cyan: it is alive there), or let it go unfinished.
    CLAIM: EventView("cyan", rows.claim_row, details.claim_detail),
    RELEASE: EventView("dim cyan", rows.release_row, details.release_detail),
    INVALID_OUTPUT: EventView(
        "bold red", rows.invalid_output_row, details.follow_up_detail, "invalid"
    ),
    TOOL_DISABLED: EventView(
        "bright_yellow", rows.tool_disabled_row, details.follow_up_detail, "withdrawn"
    ),
}
# A type this version does not know: its fields; its colour, the caller's default.
OTHER = EventView("", rows.fields_row, details.common_detail)


def view_of(kind: str) -> EventView:
    return EVENT_VIEWS.get(kind, OTHER)


def type_style(kind: str, default: str) -> str:
    """The colour of an event type; `default` for a type this version does not know."""
    return view_of(kind).style or default


def type_label(kind: str) -> str:
    """An event type as the timeline's type column writes it."""
    return view_of(kind).label or literal_line(kind, 20)


def timeline_line(
    item: Event | BadLine,
    segment: int = 1,
    request: Event | None = None,
    cost: str = "",
    fork: Event | None = None,
) -> Text:
    """What one timeline row says about an event (what the row knows besides it: `Row`)."""
    if isinstance(item, BadLine):
        return Text(f"unreadable line {item.lineno}: {literal_line(item.reason)}", "dim")
    out = Text(no_wrap=True, overflow="ellipsis")
    view_of(item.type).row(out, item, Row(segment, request, cost, fork))
    return out


def detail(
    item: Event | BadLine,
    index: int,
    run_id: str,
    start: float | None,
    request: list[dict[str, Any]] | None = None,
    setup: Event | None = None,
    run: RunSummary | None = None,
    lineage: Text | None = None,
    totals: RunTotals | None = None,
) -> DetailText:
    """Everything about one event: fields, the request as a conversation, values as JSON.

    `setup` is the run_start of a generation's segment: the tools offered and the settings
    it records are shown when the generation names them (its `config`); of an answer's
    (a message, a run_end): a structured output it records is shown as the object. `run`, the whole
    run's summary (when it was read whole), adds the run's active and wall times to a
    `run_start`. `lineage`, a fork's parent and fork point, comes first."""
    out = DetailText()
    if lineage is not None:
        out.block(lineage.copy(), indent=0)  # a block crops its final newline in place
    if isinstance(item, BadLine):
        details.unreadable(out, item, run_id)
        return out
    e = item
    view = view_of(e.type)
    out.append(literal_line(e.type, 40), (view.style or "bold") + " bold")
    if e.turn is not None:
        out.append(f" · turn {e.turn}")
    out.append(f" · line {index + 1}", "dim")
    out.append("\n")
    view.detail(out, e, Around(run_id, start, request, setup, run, totals))
    return out
