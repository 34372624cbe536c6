"""Finding lines in a run's log without building events: the lines a search matches, and the
lines the timeline's jumps go to (errors, tool calls).

A scan reads whole lines of one byte range of the log by chunks, from wherever the lines are
kept (`LineLog._scan_chunks`: a file's from a descriptor of its own, `file_chunks`, so a worker
thread never shares the timeline's), and reports line indexes counted from the range's first
line, with where it stopped: the next scan of the same log starts there (a live
run grows). Cost model, on the 100,000-event bench log (37 MB): a search is one pass of
`str.find` over the lowered text (~0.1 s); the jump marks validate each line's JSON with
orjson (~0.25 s) and decode only the lines orjson refuses. `cancelled()` is asked between
chunks: a search replaced by a newer one stops early.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from agentor.engine.events import RUN_END, TOOL_CALL, TOOL_RESULT, Event
from agentor.engine.log.format import BadLine
from agentor.engine.statuses import FAILED, MAX_TURNS
from agentor.sources.logfile import _Unreadable, decode_line, open_readonly, whole_lines
from agentor.sources.source import Scan

# What a `run_end` ends with when the run did not get its answer.
ERROR_ENDS = frozenset({FAILED, MAX_TURNS})


def needles(query: str) -> list[str]:
    """The forms `query` takes in a log line, lowered: as typed, and as JSON writes it inside
    a string (`"` as `\\"`, `°` as `\\u00b0` in logs written with ASCII escapes)."""
    forms = {query, json.dumps(query, ensure_ascii=False)[1:-1], json.dumps(query)[1:-1]}
    return sorted({f.lower() for f in forms if f and "\n" not in f})  # lines hold no newline


def search(
    chunks: Iterable[tuple[int, bytes]],
    query: str,
    start: int,
    first_line: int,
    cancelled: Callable[[], bool] = lambda: False,
) -> Scan | None:
    """The lines `chunks` holds ((offset, bytes) of whole lines from `start` on, each piece
    ending with a newline) whose text holds `query`, case-insensitively (None when cancelled).
    A line is searched as it is written: field names and JSON escapes too."""
    forms = needles(query)
    scan = Scan(end=start, lines=0)
    for base, body in chunks:
        if cancelled():
            return None
        text = body.decode("utf-8", "replace").lower()
        hits: set[int] = set()
        for form in forms:
            hits.update(_lines_holding(text, form))
        scan.found += sorted(first_line + scan.lines + n for n in hits)
        scan.lines += body.count(b"\n")
        scan.end = base + len(body)
    return scan


def _lines_holding(text: str, form: str) -> Iterator[int]:
    """Indexes (within `text`) of the lines holding `form`, each once."""
    line, counted, pos = 0, 0, text.find(form)
    while pos >= 0:
        line += text.count("\n", counted, pos)
        yield line
        counted = text.find("\n", pos)  # every line of `text` ends with a newline
        line += 1
        counted += 1
        pos = text.find(form, counted)


def marks(
    chunks: Iterable[tuple[int, bytes]],
    start: int,
    first_line: int,
    cancelled: Callable[[], bool] = lambda: False,
) -> Scan | None:
    """The error lines (unreadable lines, tool results with an error, a failed or max_turns
    end) and the tool call lines `chunks` holds (see `search`), as the timeline shows them."""
    scan = Scan(end=start, lines=0)
    for base, body in chunks:
        if cancelled():
            return None
        for line in body[:-1].split(b"\n"):
            kind = _kind(line + b"\n")
            if kind == "error":
                scan.errors.append(first_line + scan.lines)
            elif kind == "call":
                scan.calls.append(first_line + scan.lines)
            scan.lines += 1
        scan.end = base + len(body)
    return scan


def _kind(line: bytes) -> str | None:
    """ "error", "call" or None for one line, as the engine's decoder reads it."""
    try:
        data: Any = orjson.loads(line)
    except orjson.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        # orjson is stricter than the decoder (NaN, huge integers): it decides.
        item = decode_line(line, 0, 0)
        if isinstance(item, BadLine):
            return "error"
        data = item.to_dict()
    event = Event.from_dict({k: data[k] for k in ("type", "error", "status") if k in data})
    if event.type == TOOL_CALL:
        return "call"
    if event.type == TOOL_RESULT and event.error is not None:
        return "error"
    if event.type == RUN_END and (event.status or FAILED) in ERROR_ENDS:
        return "error"
    return None


def file_chunks(path: str | os.PathLike[str], start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of whole lines in [start, end) of a log file, from a descriptor of the
    scan's own."""
    try:
        fd, _ = open_readonly(path)
    except _Unreadable as exc:  # the protocol's error: an OSError saying why
        raise OSError(errno.EINVAL, str(exc)) from None
    try:
        yield from whole_lines(fd, start, end)
    finally:
        os.close(fd)
