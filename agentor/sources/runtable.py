"""`RunTable`: the rows of a listing as columns, one list per field a listing shows, newest
first: what `agentor ls` prints, for any source.

Made from rows (`of_rows`), or from a run index's columns without a `RunRow` per run
(`runindex.Aside.table`): a listing of 100,000 runs that a fresh index holds builds its table
in C loops, and its JSON in one call. A row with no summary (an unreadable entry) is shown as an
empty summary of its status: no agent, no model, no times, 0 turns, calls and tokens, its
reason as its error.

Cost model: `of_rows` reads a field of every row at a time (`attrgetter` maps, ~0.3 µs a row);
`take`, `keep`, `joined` and `arranged` cut and join lists, in C.
"""

from __future__ import annotations

import dataclasses
from itertools import compress, repeat
from operator import and_, attrgetter, is_not
from typing import Any

from agentor.engine.history import RunSummary
from agentor.engine.statuses import AWAITING_APPROVAL, INCOMPLETE, UNREADABLE
from agentor.sources.runrow import RunRow


@dataclasses.dataclass
class RunTable:
    """The rows of a listing, a list per field (all of one length)."""

    run_id: list[str]
    status: list[str]
    agent: list[str | None]
    model: list[str | None]
    started_at: list[Any]  # the summary's, as folded (any number; None): shown by `finite`
    last_event_at: list[Any]
    turns: list[int]
    tool_calls: list[int]
    total_tokens: list[int]
    first_prompt: list[str | None]
    error: list[str | None]  # the run's own error (a failed run's), else the row's reason
    sort_key: list[Any]  # `RunRow.sort_key`
    # Whether calls of the run may wait for a person (`listing.may_wait`), unless its latest
    # turn, read whole, asked for none (`RunRow.asks_approval` False): whose log to read.
    may_wait: list[bool]

    def __len__(self) -> int:
        return len(self.run_id)

    @classmethod
    def empty(cls) -> RunTable:
        return cls(*([] for _ in FIELDS))

    @classmethod
    def of_rows(cls, rows: list[RunRow]) -> RunTable:
        """The table of these rows, in their order (a field at a time, in C loops)."""
        summaries = list(map(_SUMMARY, rows))
        if None in summaries:  # an unreadable entry: an empty summary of no status
            summaries = [_EMPTY if s is None else s for s in summaries]
        errors = list(map(_ERROR, summaries))
        reasons = list(map(_ERROR, rows))
        if any(errors):  # the run's own error, else the row's reason
            reasons = [e or r for e, r in zip(errors, reasons, strict=True)]
        statuses = list(map(_STATUS, summaries))
        asks = list(map(_ASKS, rows))
        return cls(
            run_id=list(map(_RUN_ID, rows)),
            status=list(map(_STATUS, rows)),
            agent=list(map(_AGENT, summaries)),
            model=list(map(_MODEL, summaries)),
            started_at=list(map(_STARTED_AT, summaries)),
            last_event_at=list(map(_LAST_EVENT_AT, summaries)),
            turns=list(map(_TURNS, summaries)),
            tool_calls=list(map(_TOOL_CALLS, summaries)),
            total_tokens=list(map(_TOTAL_TOKENS, summaries)),
            first_prompt=list(map(_FIRST_PROMPT, summaries)),
            error=reasons,
            sort_key=list(map(_SORT_KEY, rows)),
            may_wait=list(
                map(and_, map(WAITING.__contains__, statuses), map(is_not, asks, repeat(False)))
            ),
        )

    def take(self, at: list[int]) -> RunTable:
        """The rows at these positions, in that order."""
        return RunTable(*(list(map(col.__getitem__, at)) for col in self._columns()))

    def keep(self, mask: list[bool]) -> RunTable:
        """The rows `mask` says, in their order."""
        return RunTable(*(list(compress(col, mask)) for col in self._columns()))

    def joined(self, other: RunTable) -> RunTable:
        """This table's rows, then the other's."""
        if not len(other):
            return self
        return RunTable(*(a + b for a, b in zip(self._columns(), other._columns(), strict=True)))

    def arranged(self, order: list[int]) -> RunTable:
        """`take(order)` of an order of every row: this table when it is its own."""
        return self if order == list(range(len(self))) else self.take(order)

    def _columns(self) -> list[list[Any]]:
        return list(map(self.__getattribute__, FIELDS))


FIELDS = tuple(f.name for f in dataclasses.fields(RunTable))
WAITING = frozenset({AWAITING_APPROVAL, INCOMPLETE})  # `listing.may_wait`: a summary's statuses
_EMPTY = RunSummary("", status=UNREADABLE)  # what a row with no summary shows (`runs_cmd.Run`)
_SUMMARY, _RUN_ID, _STATUS, _ERROR = map(attrgetter, ("summary", "run_id", "status", "error"))
_ASKS, _SORT_KEY = attrgetter("asks_approval"), attrgetter("sort_key")
_AGENT, _MODEL, _TURNS = attrgetter("agent"), attrgetter("model"), attrgetter("turns")
_STARTED_AT, _LAST_EVENT_AT = attrgetter("started_at"), attrgetter("last_event_at")
_TOOL_CALLS, _FIRST_PROMPT = attrgetter("tool_calls"), attrgetter("first_prompt")
_TOTAL_TOKENS = attrgetter("usage.total_tokens")
