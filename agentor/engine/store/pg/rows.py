"""A run's row in the `runs` table: its summary as the list shows it, written with each append.

The summary is `agentor.engine.history.RunSummary`, folded in Python by `replay.fold` (one
definition of what a run list shows) and written as columns, so that listing 100,000 runs is
one indexed query and the row is also the fold's state: the next append folds its events
into the row it read, not into the whole log. `pending_approvals` is kept beside it by
`fold_pending` (approvals are not in `RunSummary` yet).

No psycopg here: plain data in, plain data out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from agentor.engine.events import Event, Usage
from agentor.engine.history import RunSummary
from agentor.engine.statuses import live_status

# The event types of human approval (issue 11). Named here until the engine names them.
APPROVAL_REQUEST = "approval_request"
APPROVAL = "approval"

# RunSummary's fields as columns, in the table's order; `usage` is three columns.
SUMMARY_COLUMNS = (
    "status",
    "agent",
    "model",
    "started_at",
    "last_event_at",
    "ended_at",
    "turns",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "first_prompt",
    "final_output",
    "error",
    "segments",
    "events",
    "bad_lines",
    "calls_before",
    "calls_latest",
    "calls_turn",
    "active_before",
    "segment_started_at",
    "segment_last_at",
    "segment_open",
)
USAGE_COLUMNS = ("input_tokens", "output_tokens", "total_tokens")
_PLAIN = tuple(c for c in SUMMARY_COLUMNS if c not in USAGE_COLUMNS)
_INT64 = 2**63 - 1


def fold_pending(pending: list[str], events: Iterable[Event]) -> list[str]:
    """Update the run's pending approvals (call ids, oldest first) with the events that follow:
    an `approval_request` is pending until an `approval` of its call id comes after it."""
    for e in events:
        if e.type == APPROVAL_REQUEST and e.call_id and e.call_id not in pending:
            pending.append(e.call_id)
        elif e.type == APPROVAL and e.call_id in pending:
            pending.remove(e.call_id)
    return pending


# The SQL type of each summary column, for the append function's parameters
# (agentor.engine.store.pg.queries).
COLUMN_TYPES = {
    **dict.fromkeys(SUMMARY_COLUMNS, "bigint"),
    **dict.fromkeys(("status", "agent", "model", "first_prompt", "final_output", "error"), "text"),
    **dict.fromkeys(
        (
            "started_at",
            "last_event_at",
            "ended_at",
            "active_before",
            "segment_started_at",
            "segment_last_at",
        ),
        "float8",
    ),
    "segment_open": "boolean",
}


def summary_params(s: RunSummary, pending: Sequence[str]) -> tuple[Any, ...]:
    """The summary columns' values, in `SUMMARY_COLUMNS` order, then `pending_approvals`
    (JSON text): the append function's summary parameters.

    The log keeps every value as it was; a column cannot hold everything a log may: NUL
    characters and lone surrogates in text become U+FFFD, integers are clamped to 64 bits.
    """
    u = s.usage
    values = (
        s.status,
        s.agent,
        s.model,
        s.started_at,
        s.last_event_at,
        s.ended_at,
        s.turns,
        s.tool_calls,
        u.input_tokens,
        u.output_tokens,
        u.total_tokens,
        s.first_prompt,
        s.final_output,
        s.error,
        s.segments,
        s.events,
        s.bad_lines,
        s.calls_before,
        s.calls_latest,
        s.calls_turn,
        s.active_before,
        s.segment_started_at,
        s.segment_last_at,
        s.segment_open,
        orjson.dumps([storable_text(p) for p in pending]).decode() if pending else "[]",
    )
    if _storable_as_is(values):
        return values
    return tuple(_storable(v) for v in values)


_TEXTS = tuple(i for i, c in enumerate(SUMMARY_COLUMNS) if COLUMN_TYPES[c] == "text")
_INTS = tuple(i for i, c in enumerate(SUMMARY_COLUMNS) if COLUMN_TYPES[c] == "bigint")


def _storable_as_is(values: tuple[Any, ...]) -> bool:
    """Whether every value fits its column (run before every append: a few checks, in C)."""
    for i in _TEXTS:
        text = values[i]
        plain = text is None or (text.isascii() and "\x00" not in text)
        if not plain and ("\x00" in text or not _utf8(text)):
            return False
    ints: list[int] = [values[i] for i in _INTS if values[i] is not None]
    return min(ints) >= -_INT64 - 1 and max(ints) <= _INT64


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _storable(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return max(-_INT64 - 1, min(_INT64, value))
    return value


def storable_text(text: str) -> str:
    """`text` as a Postgres text column can hold it: NUL and lone surrogates become U+FFFD."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text


# What `summary_from_row` reads, in this order: select these, then what RunListing adds.
ROW_COLUMNS = ("run_id", *SUMMARY_COLUMNS)


def summary_from_row(row: Sequence[Any]) -> RunSummary:
    """A RunSummary from `ROW_COLUMNS` values (a row of the `runs` table). Positional: a list
    of 100,000 runs builds 100,000 of these."""
    return RunSummary(*(*row[:9], Usage(row[9], row[10], row[11]), *row[12:25]))


@dataclass
class RunListing:
    """One run as a list shows it: the summary, whether someone holds the run now, and what a
    fleet needs to pick it (`claims`: how many times it was taken; `last_seq`: its newest
    event, for reading on from there)."""

    summary: RunSummary
    held: bool
    holder_pid: int | None
    holder_host: str | None
    pending_approvals: int
    last_seq: int
    claims: int

    @property
    def run_id(self) -> str:
        return self.summary.run_id

    @property
    def status(self) -> str:
        """The status to show (`statuses.live_status`: running while held, else interrupted)."""
        return live_status(self.summary.status, self.held)


# Selected after ROW_COLUMNS (or BRIEF_COLUMNS) by a listing query, in this order.
LISTING_EXTRA = ("held", "holder_pid", "holder_host", "pending_approvals", "last_seq", "claims")

# What a brief listing selects (`list_summaries(brief=True)`): what a run list shows before it
# knows the counts: status, agent, model, times, the prompt, the error, how many events.
BRIEF_COLUMNS = (
    "run_id",
    "status",
    "agent",
    "model",
    "started_at",
    "last_event_at",
    "ended_at",
    "first_prompt",
    "error",
    "events",
    "bad_lines",
)


def brief_from_row(row: Sequence[Any]) -> RunSummary:
    """A RunSummary from `BRIEF_COLUMNS` values: the other fields (the counts, the times of
    the segments) are left at their defaults. Positional, in one call (a list of 100,000 runs
    builds 100,000 of these): RunSummary's fields run_id .. ended_at, turns, tool_calls,
    usage, first_prompt, final_output, error, segments, events, bad_lines."""
    return RunSummary(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], 0, 0, Usage(),
        row[7], None, row[8], 0, row[9], row[10],
    )  # fmt: skip


def listing_from_row(row: Sequence[Any]) -> RunListing:
    n = len(ROW_COLUMNS)
    return RunListing(summary_from_row(row[:n]), *row[n:])


# Where a brief row (`RunListings.brief_rows`) holds whether the run is held, and its last seq.
_BRIEF_HELD = len(BRIEF_COLUMNS) + LISTING_EXTRA.index("held")
_BRIEF_LAST_SEQ = len(BRIEF_COLUMNS) + LISTING_EXTRA.index("last_seq")


def brief_of(row: Sequence[Any]) -> tuple[RunSummary, bool, int]:
    """What a live list needs of a brief row: the run's summary, whether it is held now, and
    its newest event's seq."""
    return brief_from_row(row), row[_BRIEF_HELD], row[_BRIEF_LAST_SEQ]


def brief_listing_from_row(row: Sequence[Any]) -> RunListing:
    return RunListing(brief_from_row(row), row[11], row[12], row[13], row[14], row[15], row[16])
