"""A run's summary folded straight from its log's lines (`fold_lines`): what `rowread` does
with each line read whole (`logfile.decode_for_summary`, then `history.fold`,
`lineage.note_fork`, `rowread.note_asking`), without an `Event` for most of them.

Most lines of a log are tool calls and results, of which a summary reads the type and the time
alone, and generations, of which it reads a few numbers more. A chunk's lines are parsed by
msgspec into the few fields a summary reads (`_Fields`; the rest of each line checked to be JSON
and skipped: ~1.7x as fast as orjson's whole parse, in one `map` while none fails). A run's
start and end, a fork, and any line msgspec refuses, that is not UTF-8 (`_typed`) or that is no
object with a string type go the engine's way (parsed by orjson), each in its place in the
order. The lines between two such (most of a log) are folded here, one by one, the summary's
state in locals, while every value a summary reads of them is what the engine writes (a time: a
float, not 0, within 64 bits; a turn: an integer; a usage: an object of integers; a model: a
string) or what `or` and `Event.from_dict` take as such; any other line the engine's way. The
summary is the same, field for field (tests fold every kind of line both ways, and check that
msgspec reads the numbers orjson reads).

A row being priced (`rowcost` reads every generation's model, usage and time, and each
segment's model) passes a list, `priced`, that gets what pricing reads, in the lines' order: of
a generation folded here, its `rowcost.Gen` (model, tokens, time, as the engine's event has
them); of a run's start folded here, an event of its model alone; of a line decoded the
engine's way, its event (`rowcost.price_folded` prices them as `rowcost.price` prices events).

Cost model: msgspec's parse ~0.55 µs a line of ~500 bytes (orjson's whole parse: ~0.95 µs), then
~1 µs a line of Python steps (the engine's way: ~6 µs).
"""

from __future__ import annotations

from itertools import compress
from operator import attrgetter, not_
from typing import Any

import msgspec
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
    is_list_of_dicts,
)
from agentor.engine.history import (
    RunSummary,
    _new_segment,
    _segment_time,
    first_user_text,
    fold,
)
from agentor.engine.log.format import BadLine
from agentor.engine.statuses import COMPLETED, FAILED, INCOMPLETE
from agentor.sources.logfile import decode_for_summary, summary_item
from agentor.sources.rowcost import Gen

_BIG = float(2**63)  # a number from here on: `decode_for_summary` parses its line again
_SLOW = frozenset({RUN_START, RUN_END, FORK})  # read more of: the engine's way
_BOOKKEEPING = frozenset({CLAIM, RELEASE, FORK})  # `history._BOOKKEEPING`: no work on the run
_NONE = type(None)
_TAKEN = object()  # a line orjson refused: the engine's way


def fold_lines(
    s: RunSummary,
    lines: list[bytes],
    pos: int,
    lineno: int,
    asks: bool | None,
    priced: list[Event | Gen] | None = None,
) -> tuple[list[Event | BadLine], bool | None]:
    """Fold `lines` (each without its newline; the first at byte `pos`, line `lineno` of the
    log, counted from 0) into `s`. `asks`: `RunRow.asks_approval` before them. Returns the lines
    decoded the engine's way, in order (events, for the lineage; bad lines), and
    `asks_approval` after them; every other line was an event folded here. `priced`: gets what
    pricing reads of the lines (see the module)."""
    typed = _typed(lines)
    left: list[Event | BadLine] = []
    place = [0, pos]  # a line read so far, and its offset: `_engine_way` counts on from there
    i = 0
    while i < len(typed):
        i, asks = _fold_here(s, typed, i, asks, priced)
        if i < len(typed):  # a line the engine's way, in its place
            data = _loads_or_taken(lines[i])
            asks = _engine_way(s, lines, data, i, (place, lineno, left, priced), asks)
            i += 1
    return left, asks


class _Fields(msgspec.Struct, gc=False):
    """The fields of a line a summary reads when it is folded here (`_typed`)."""

    type: Any = None
    ts: Any = None
    ended_at: Any = None
    started_at: Any = None
    turn: Any = None
    model: Any = None
    at: Any = None
    usage: Any = None


_Priced = list[Event | Gen] | None  # `fold_lines`' `priced`
_DECODE = msgspec.json.Decoder(_Fields).decode
_REFUSED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)


def _typed(lines: list[bytes]) -> list[_Fields | None]:
    """Each line's `_Fields`, parsed by msgspec (the rest of the line checked to be JSON,
    skipped); None for a line it refuses (not an object; NaN, a lone surrogate, deep nesting:
    orjson refuses those too) or that is not UTF-8 (which msgspec does not check in what it
    skips, where orjson refuses the line): such a line goes the engine's way. Of what msgspec
    reads, orjson reads the same values but an integer past 64 bits (orjson: a float), which the
    fold checks (`_EXACT`)."""
    try:
        typed: list[_Fields | None] = list(map(_DECODE, lines))
    except _REFUSED:
        typed = list(map(_decoded_or_none, lines))
    if not all(map(bytes.isascii, lines)):
        for i in compress(range(len(lines)), map(not_, map(bytes.isascii, lines))):
            try:
                lines[i].decode()
            except UnicodeDecodeError:
                typed[i] = None
    return typed


def _decoded_or_none(line: bytes) -> _Fields | None:
    try:
        return _DECODE(line)
    except _REFUSED:
        return None


def _fold_here(
    s: RunSummary, typed: list[_Fields | None], i: int, asks: bool | None, priced: _Priced
) -> tuple[int, Any]:
    """Fold here the lines from `i` on while they can be (an object of a string type none of
    `_SLOW`, its times and a generation's fields as the engine writes them), the summary's state
    in locals (written back once); returns where it stopped, and `asks_approval`."""
    events, last, open_, start, seg_last = 0, s.last_event_at, s.segment_open, *_SEGMENT(s)
    turns, model, before, latest, turn_of = _CALLS(s)
    tokens, used = (0, 0, 0), False
    while i < len(typed):
        data = typed[i]
        if data is None:
            break
        kind = data.type
        if type(kind) is not str or kind in _SLOW:
            break
        ts, ended, started = data.ts, data.ended_at, data.started_at
        # As the engine writes them (floats, not 0, within 64 bits): what `or` picks, at once.
        if type(ts) is float and ts and -_BIG < ts < _BIG and _plain_or_none(ended, started):
            t = ts
        elif ts is None and type(ended) is float and ended and _plain_or_none(ended, started):
            t = ended
        elif (t := _time(ts, ended, started)) is _TAKEN:
            break
        got = _generation_of(data) if kind == GENERATION else _OTHER
        if got is None:
            break
        events += 1
        if t is not None:
            if last is None or t > last:
                last = t
            if open_ and kind not in _BOOKKEEPING:
                if start is None:
                    start = t
                if seg_last is None or t > seg_last:
                    seg_last = t
        if got is not _OTHER:  # `fold` of a generation
            turn, named, counts = got
            if turn is not None and turn > turns:
                turns = turn
            model = model or named
            if turn is None or turn != turn_of:
                before += latest  # a new turn; else it asks a rewound one again
            turn_of, latest, asks = turn, 0, False
            if counts is not None:
                tokens = (tokens[0] + counts[0], tokens[1] + counts[1], tokens[2] + counts[2])
                used = True
            if priced is not None:
                priced.append((named, counts, t))
        elif kind == TOOL_CALL:
            latest += 1
        elif kind == APPROVAL_REQUEST:
            asks = True
        i += 1
    _put(s, events, (last, start, seg_last), (turns, model, before, latest, turn_of))
    if used:
        s.usage = s.usage + Usage(*tokens)  # as `fold` adds each one's: `Usage.__add__`
    return i, asks


def _put(s: RunSummary, events: int, times: tuple[Any, ...], calls: tuple[Any, ...]) -> None:
    """The state `_fold_here` held, written back into the summary."""
    s.events += events
    s.last_event_at, s.segment_started_at, s.segment_last_at = times
    s.turns, s.model, s.calls_before, s.calls_latest, s.calls_turn = calls
    s.tool_calls = s.calls_before + s.calls_latest


_SEGMENT = attrgetter("segment_started_at", "segment_last_at")
_CALLS = attrgetter("turns", "model", "calls_before", "calls_latest", "calls_turn")
_OTHER: Any = ()  # not a generation: nothing more read of it


def _plain_or_none(ended: Any, started: Any) -> bool:
    """Both times none, or a float within 64 bits (nothing parsed again)."""
    return (ended is None or (type(ended) is float and -_BIG < ended < _BIG)) and (
        started is None or (type(started) is float and -_BIG < started < _BIG)
    )


def _loads_or_taken(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return _TAKEN  # the engine's way: `json` may read it (NaN), else a bad line


def _engine_way(
    s: RunSummary,
    lines: list[bytes],
    data: Any,
    i: int,
    into: tuple[list[int], int, list[Event | BadLine], _Priced],
    asks: bool | None,
) -> bool | None:
    """Line `i` (`data`: as orjson parsed it, or `_TAKEN`) decoded (`decode_for_summary`) and
    folded into `s` as `rowread` folds it, in its place (`into`: `fold_lines`' place, lineno,
    lines left and `priced`); returns `asks_approval` after it."""
    place, lineno, left, priced = into
    if _fold_start_or_end(s, data):  # as the engine folds it, needed no more
        if priced is not None and data["type"] == RUN_START:
            priced.append(Event(RUN_START, model=_text(data.get("model"))))
        return asks
    done, offset = place
    offset += sum(map(len, lines[done:i])) + i - done
    place[:] = [i, offset]
    raw = lines[i] + b"\n"
    item = (
        decode_for_summary(raw, offset, lineno + i)
        if data is _TAKEN
        else summary_item(data, raw, offset, lineno + i)
    )
    left.append(item)
    if isinstance(item, Event):
        if priced is not None:
            priced.append(item)
        fold(s, [item])
        if item.type == GENERATION:
            return False
        if item.type == APPROVAL_REQUEST:
            return True
    return asks


def _fold_start_or_end(s: RunSummary, data: Any) -> bool:
    """Fold a run's start or end as `history.fold` folds the event `decode_for_summary` makes of
    it (its fields as `Event.from_dict` keeps them: a string, a number that is no bool, a list
    of objects; else none), when nothing else reads it: no parent named (the lineage reads a
    start that names one), no number orjson may have made a float of (`_kept_as_read`: else
    parsed again). False, nothing folded, otherwise: the engine's way."""
    if type(data) is not dict:
        return False
    kind = data.get("type")
    if kind not in (RUN_START, RUN_END) or data.get("forked_from") is not None:
        return False
    if not _kept_as_read(data):
        return False
    get = data.get
    ts, ended, started = get("ts"), get("ended_at"), get("started_at")
    if type(ts) is not float and type(ts) is not int:
        ts = None
    if type(ended) is not float and type(ended) is not int:
        ended = None
    if type(started) is not float and type(started) is not int:
        started = None
    # `history.fold`, of this one event:
    s.events += 1
    t = ts or ended or started  # `event_time`
    if t is not None:
        s.last_event_at = t if s.last_event_at is None else max(s.last_event_at, t)
    if kind == RUN_START:
        _new_segment(s, started or t)
    _segment_time(s, t)
    if kind == RUN_START:
        messages = get("messages")
        s.segments += 1
        s.status = INCOMPLETE
        s.ended_at = None
        s.error = None
        s.agent = s.agent or _text(get("agent"))
        s.model = s.model or _text(get("model"))
        if s.started_at is None:
            s.started_at = started or ts
        if s.first_prompt is None:
            s.first_prompt = first_user_text(messages if is_list_of_dicts(messages) else None)
    else:
        status = _text(get("status"))
        s.segment_open = False
        s.status = status or FAILED
        s.ended_at = ended or ts
        s.error = _text(get("error"))
        if status == COMPLETED:
            s.final_output = _text(get("text"))
    s.tool_calls = s.calls_before + s.calls_latest
    return True


def _kept_as_read(data: dict[str, Any]) -> bool:
    """`not logfile._lost_an_integer(data)` for what orjson parsed (no NaN, no infinity): no
    float past 64 bits among the numbers a summary keeps, nor in a usage."""
    for key in _NUMBERS_KEPT:
        v = data.get(key)
        if type(v) is float and not -_BIG < v < _BIG:
            return False
    usage = data.get("usage")
    return type(usage) is not dict or all(map(_no_big_float, usage.values()))


_NUMBERS_KEPT = ("turn", "started_at", "ended_at", "ts", "at")  # `logfile._NUMBERS_KEPT`


def _text(v: Any) -> str | None:
    return v if type(v) is str else None


_USAGE = ("input_tokens", "output_tokens", "total_tokens")


def _generation_of(data: _Fields) -> tuple[int | None, str | None, Any] | None:
    """(turn, model, tokens or None) of a generation, as `Event.from_dict` keeps them of
    `decode_for_summary`'s fields, when they are what the engine writes: a turn an integer, a
    model a string, a usage an object of integer tokens (and no float past 64 bits there, nor in
    `at`: `_lost_an_integer` would have the line parsed again; no integer orjson would have read
    as such a float, `_EXACT`). None otherwise."""
    turn, model, usage, at = data.turn, data.model, data.usage, data.at
    if turn is not None and (type(turn) is not int or turn not in _EXACT):
        return None
    if model is not None and type(model) is not str:
        return None
    if type(at) is float or (type(at) is int and at not in _EXACT):
        return None
    if usage is None:
        return turn, model, None
    if type(usage) is not dict:
        return None
    a, b, c = usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")
    if type(a) is int and type(b) is int and type(c) is int and len(usage) == 3:
        if a in _EXACT and b in _EXACT and c in _EXACT:
            return turn, model, (a, b, c)  # what the engine writes: no other value in it
        return None
    if not (_plain(a) and _plain(b) and _plain(c)) or not all(map(_no_big_float, usage.values())):
        return None
    return turn, model, (a or 0, b or 0, c or 0)


def _plain(v: Any) -> bool:
    """A token count `Usage.from_value` keeps as it is: an integer (not a bool), or none (0)."""
    return v is None or (type(v) is int and v in _EXACT)


def _no_big_float(v: Any) -> bool:
    """No float past 64 bits, nor an integer orjson would have read as one (`_EXACT`)."""
    if type(v) is int:
        return v in _EXACT
    return type(v) is not float or -_BIG < v < _BIG


_EXACT = range(-(2**63), 2**64)  # the integers orjson reads as such (others: as floats)


def _time(ts: Any, ended: Any, started: Any) -> Any:
    """`event_time` of the event `decode_for_summary` makes of a line of these times: its `ts`,
    else `ended_at`, else `started_at`, as `or` picks among them (each a number, not a bool, or
    None); `_TAKEN` when one of them is past 64 bits (`decode_for_summary` parses such a line
    again)."""
    times: list[Any] = []
    for v in (ts, ended, started):
        if type(v) is not float and type(v) is not int:
            times.append(None)
        elif -_BIG < v < _BIG:
            times.append(v)
        else:
            return _TAKEN
    return times[0] or times[1] or times[2]
