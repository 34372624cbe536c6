"""A run's summary folded straight from its log's lines (`fold_lines`): what `rowread` does
with each line read whole (`logfile.decode_for_summary`, then `history.fold`,
`lineage.note_fork`, `rowread.note_asking`), without an `Event` for most of them.

Most lines of a log are tool calls and results, of which a summary reads the type and the time
alone, and generations, of which it reads a few numbers more. Each line is parsed by orjson (a
chunk's lines in one `map` while none fails), and such a line whose fields are what the engine
writes (a time: a number within 64 bits; a turn: an integer; a usage: an object of integers; a
model: a string) is folded here, its effects held in locals: what `fold` would do with the event
`decode_for_summary` makes of it. Every other line (a run's start and end, a fork, any odd
value, a line orjson refuses, a bad line) goes the engine's way, in its place in the order: the
summary is the same, field for field (tests fold every kind of line both ways). Not for a row
being priced (`rowcost` reads every generation's model and usage): `rowread` folds those lines
the engine's way.

Cost model: ~0.5 µs a line beyond orjson's parse (the engine's way: ~6 µs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from agentor.engine.events import (
    APPROVAL_REQUEST,
    CLAIM,
    FORK,
    GENERATION,
    RELEASE,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    Event,
    Usage,
)
from agentor.engine.history import RunSummary, fold
from agentor.engine.log.format import BadLine

_BIG = float(2**63)  # a time from here on: as `decode_for_summary` (orjson may have made it)
_SLOW = frozenset({RUN_START, RUN_END, FORK})  # read more of: the engine's way
_BOOKKEEPING = frozenset({CLAIM, RELEASE, FORK})  # `history._BOOKKEEPING`: no work on the run
_NUMBER = (int, float)
_TAKEN = object()  # a line left to the engine's way


def fold_lines(
    s: RunSummary,
    lines: list[bytes],
    pos: int,
    lineno: int,
    decode: Callable[[bytes, int, int], Event | BadLine],
    asks: bool | None,
) -> tuple[list[Event | BadLine], int, bool | None]:
    """Fold `lines` (each without its newline; the first at byte `pos`, line `lineno` of the
    log, counted from 0) into `s`. `decode(line, offset, lineno)` is the engine's way for a
    line not folded here (`decode_for_summary`). `asks`: `RunRow.asks_approval` before them.
    Returns the lines decoded the engine's way, in order (events, for the lineage; bad lines),
    the number of events folded here, and `asks_approval` after them."""
    try:
        parsed = list(map(orjson.loads, lines))
    except orjson.JSONDecodeError:
        parsed = list(map(_loads_or_taken, lines))
    left: list[Event | BadLine] = []
    here = 0
    # The summary's state, in locals while lines are folded here (`_State.put` writes it back).
    st = _State(s)
    last, open_, start, seg_last = st.last, st.open, st.start, st.seg_last
    turns, model, before, latest, turn_of = st.turns, st.model, st.before, st.latest, st.turn_of
    tokens_in = tokens_out = tokens_total = 0
    used = False  # whether a usage was folded here since the summary's was written
    done = 0  # lines folded up to here (`pos` is the offset of the first of the rest)
    for i, data in enumerate(parsed):
        if type(data) is dict:
            kind = data.get("type")
            t = _time(data)
            if kind == GENERATION:
                turn = data.get("turn")
                named = data.get("model")
                usage = data.get("usage")
                if (
                    t is not _TAKEN
                    and (turn is None or (type(turn) is int and _MIN <= turn < _MAX))
                    and (named is None or type(named) is str)
                    and (usage is None or type(usage) is dict)
                    and type(data.get("at")) is not float  # `logfile._lost_an_integer` reads it
                ):
                    if usage is not None:
                        a = usage.get("input_tokens")
                        b = usage.get("output_tokens")
                        c = usage.get("total_tokens")
                        if not (_plain(a) and _plain(b) and _plain(c)) or not all(
                            map(_not_big_float, usage.values())
                        ):
                            t = _TAKEN  # kept otherwise by `Usage.from_value`, or parsed again
                        else:
                            tokens_in += a or 0
                            tokens_out += b or 0
                            tokens_total += c or 0
                            used = True
                    if t is not _TAKEN:
                        here += 1
                        if t is not None:
                            if last is None or t > last:
                                last = t
                            if open_:
                                if start is None:
                                    start = t
                                if seg_last is None or t > seg_last:
                                    seg_last = t
                        if turn is not None and turn > turns:
                            turns = turn
                        model = model or named
                        if turn is None or turn != turn_of:
                            before += latest
                        turn_of, latest = turn, 0
                        asks = False
                        continue
            elif type(kind) is str and kind not in _SLOW and t is not _TAKEN:
                here += 1
                if t is not None:
                    if last is None or t > last:
                        last = t
                    if open_ and kind not in _BOOKKEEPING:
                        if start is None:
                            start = t
                        if seg_last is None or t > seg_last:
                            seg_last = t
                if kind == TOOL_CALL:
                    latest += 1
                elif kind == APPROVAL_REQUEST:
                    asks = True
                continue
        # The engine's way, in its place: the state written back, folded, read again.
        st.last, st.open, st.start, st.seg_last = last, open_, start, seg_last
        st.turns, st.model, st.before, st.latest, st.turn_of = turns, model, before, latest, turn_of
        st.put(s, here, (tokens_in, tokens_out, tokens_total) if used else None)
        here, tokens_in, tokens_out, tokens_total, used = 0, 0, 0, 0, False
        pos += sum(map(len, lines[done:i])) + i - done
        done = i
        item = decode(lines[i] + b"\n", pos, lineno + i)
        left.append(item)
        if isinstance(item, Event):
            fold(s, [item])
            if item.type == GENERATION:
                asks = False
            elif item.type == APPROVAL_REQUEST:
                asks = True
        st = _State(s)
        last, open_, start, seg_last = st.last, st.open, st.start, st.seg_last
        turns, model, before, latest, turn_of = st.turns, st.model, st.before, st.latest, st.turn_of
    st.last, st.open, st.start, st.seg_last = last, open_, start, seg_last
    st.turns, st.model, st.before, st.latest, st.turn_of = turns, model, before, latest, turn_of
    st.put(s, here, (tokens_in, tokens_out, tokens_total) if used else None)
    return left, len(lines) - len(left), asks


class _State:
    """What folding a line here changes of a summary, read from it (and written back, `put`)."""

    __slots__ = (
        "before",
        "last",
        "latest",
        "model",
        "open",
        "seg_last",
        "start",
        "turn_of",
        "turns",
    )

    def __init__(self, s: RunSummary) -> None:
        self.last, self.open = s.last_event_at, s.segment_open
        self.start, self.seg_last = s.segment_started_at, s.segment_last_at
        self.turns, self.model = s.turns, s.model
        self.before, self.latest, self.turn_of = s.calls_before, s.calls_latest, s.calls_turn

    def put(self, s: RunSummary, events: int, tokens: tuple[int, int, int] | None) -> None:
        """Into `s`: this state, `events` more events, these tokens more (as `fold` adds a
        usage: `Usage.__add__`), and the calls as `fold` counts them."""
        s.events += events
        s.last_event_at, s.segment_started_at, s.segment_last_at = (
            self.last,
            self.start,
            self.seg_last,
        )
        s.turns, s.model = self.turns, self.model
        s.calls_before, s.calls_latest, s.calls_turn = self.before, self.latest, self.turn_of
        if tokens is not None:
            s.usage = s.usage + Usage(*tokens)
        s.tool_calls = self.before + self.latest


def _loads_or_taken(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return _TAKEN  # the engine's way: `json` may read it (NaN), else a bad line


def _time(data: dict[str, Any]) -> Any:
    """`event_time` of the event `decode_for_summary` makes of a line: its `ts`, else
    `ended_at`, else `started_at`, as `or` picks among them (each a number, not a bool, or
    None); `_TAKEN` when one of them is past 64 bits (`decode_for_summary` parses such a line
    again, the engine's way)."""
    ts, ended, started = data.get("ts"), data.get("ended_at"), data.get("started_at")
    if type(ts) is float and ts and -_BIG < ts < _BIG and ended is None and started is None:
        return ts  # what the engine writes of most lines
    times = []
    for v in (ts, ended, started):
        if type(v) is not float and type(v) is not int:
            times.append(None)
        elif -_BIG < v < _BIG:
            times.append(v)
        else:
            return _TAKEN
    return times[0] or times[1] or times[2]


_TIMES = ("ts", "ended_at", "started_at")
_MIN, _MAX = -(2**63), 2**63


def _not_big_float(v: Any) -> bool:
    """Not a float orjson may have made of an integer past 64 bits (`_lost_an_integer`)."""
    return type(v) is not float or -_BIG < v < _BIG


def _plain(v: Any) -> bool:
    """A token count `Usage.from_value` keeps as it is: an integer (not a bool) within 64 bits,
    or none (0)."""
    return v is None or (type(v) is int and _MIN <= v < _MAX)
