"""Reading one run log file safely: opening it, exact reads, whole lines by chunks, a line's type
from its first bytes, decoding a line on its own.

Shared by the directory source's rows (`rowread`, `quickread`), the lazy log of one run
(`runlog`) and its scans (`logscan`).
"""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import os
import re
import stat
from collections.abc import Callable, Iterator
from typing import Any

import orjson

from agentor.engine.events import FORK, GENERATION, RUN_END, RUN_START, Event
from agentor.engine.fork_mark import EXPERIMENT
from agentor.engine.log.file_io import READ_FLAGS
from agentor.engine.log.format import BadLine, LogDecoder

CHUNK = 1024 * 1024  # reads of whole files go by chunks of about this size

# A line's type as every writer of the format puts it: first (json.dumps keeps key order), so
# a line's type is known from its first bytes without decoding it. `TYPE_AT` tells any type;
# `line_of_type` and `line_of_type_after_newline` look for one (a literal first character lets
# the regex engine scan a big buffer fast).
_TYPE_PREFIX = rb'\{\s*"type"\s*:\s*"'
TYPE_AT = re.compile(_TYPE_PREFIX + rb'(\w+)"')


def line_of_type(kind: str) -> re.Pattern[bytes]:
    return re.compile(_TYPE_PREFIX + re.escape(kind.encode()) + b'"')


def line_of_type_after_newline(kind: str) -> re.Pattern[bytes]:
    return re.compile(b"\n" + _TYPE_PREFIX + re.escape(kind.encode()) + b'"')


class _Unreadable(Exception):
    """A file that is there but cannot be read as a log; the message is the row's error."""


def os_reason(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ELOOP:
        return "is a symlink (not followed)"
    if exc.errno == errno.EISDIR:
        return "is a directory"
    return (exc.strerror or str(exc)).lower()


def open_readonly(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """A read-only fd on a regular file (never through a symlink); `_Unreadable` for anything
    else, FileNotFoundError if it is gone."""
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise _Unreadable(os_reason(exc)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise _Unreadable("is a directory")
        if not stat.S_ISREG(st.st_mode):
            raise _Unreadable("not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def not_a_log(path: str | os.PathLike[str]) -> str | None:
    """Why the file at `path` is not a run log (it cannot be read, or its first line is no
    event), or None when it may be one: an empty file is a run just being started, and a
    first line longer than FIRST_LINE_MAX is not looked at."""
    try:
        fd, _ = open_readonly(path)
    except FileNotFoundError:
        return "no such file"
    except _Unreadable as exc:
        return str(exc)
    try:
        head = pread(fd, FIRST_LINE_MAX, 0)
    except OSError as exc:
        return os_reason(exc)
    finally:
        os.close(fd)
    end = head.find(b"\n")
    if end < 0:
        return None
    item = decode_line(head[: end + 1], 0, 0)
    if isinstance(item, BadLine):
        return f"its first line is not an event ({item.reason})"
    return None


FIRST_LINE_MAX = 4 * 1024 * 1024


def whole_lines(
    fd: int, start: int, end: int, on_read: Callable[[int], object] | None = None
) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of the whole lines in [start, end), about CHUNK bytes at a time, each
    piece ending in a newline; a last line without its newline is left for the next read.
    `on_read(n)` is told the size of every read (what reading costs)."""
    pos = start
    while pos < end:
        size = min(CHUNK, end - pos)
        while True:
            data = pread(fd, size, pos)
            if on_read is not None:
                on_read(len(data))
            cut = data.rfind(b"\n")
            if cut >= 0 or pos + len(data) >= end or not data:
                break
            size = min(size * 4, end - pos)  # a line longer than the chunk
        if cut < 0:
            return
        yield pos, data[: cut + 1]
        pos += cut + 1


def pread(fd: int, size: int, offset: int) -> bytes:
    """Read exactly `size` bytes unless the file ends first."""
    data = os.pread(fd, size, offset)
    if len(data) == size or not data:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        more = os.pread(fd, size - got, offset + got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while decoding many lines: JSON makes no cycles, and the
    collections that the flood of new containers triggers would each walk the whole heap
    (twice the time of a long walk through a big log; more in the app, whose heap is big)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def promote_young() -> None:
    """Move every object the cyclic GC holds as young into its oldest generation at once (two
    list splices: `gc.freeze` then `gc.unfreeze`), unless something keeps objects frozen (the
    app, once started: its set is left alone). For rows built in bulk that live as long as their
    source: the young collections that would walk them one after the other (100,000 rows:
    half a million objects, ~0.1 s each) are skipped; garbage cycles among them wait for a full
    collection."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def decode_line(line: bytes, offset: int, lineno: int) -> Event | BadLine:
    """One line through the engine's decoder, on its own.

    A fresh decoder has no base for compact generations, so their messages stay unbuilt: the
    index and the timeline need none, and rebuilding them copies the conversation per line.
    """
    decoder = LogDecoder()
    decoder.offset, decoder.lineno = offset, lineno
    return decoder.decode(line)


# What `replay.fold` reads of an event (plus `messages`, read of a `run_start` only).
# `Event.from_dict` checks each field on its own, so an event built from these fields alone
# folds exactly as the whole one does, for a fraction of the cost: a row needs no request
# messages, tool results or unknown fields (tests compare the two).
FOLD_FIELDS = (
    "type",
    "agent",
    "model",
    "turn",
    "usage",
    "status",
    "error",
    "text",
    "started_at",
    "ended_at",
    "ts",
)
_FOLD_START_FIELDS = (*FOLD_FIELDS, "messages", "forked_from")
# A fork's own marker: where it came from (`agentor.sources.lineage`); a replay's recording is not
# kept (only that there is one, and the experiment it is a candidate of).
_FOLD_FORK_FIELDS = (*FOLD_FIELDS, "forked_from", "at", "edit")


def decode_for_summary(line: bytes, offset: int, lineno: int) -> Event | BadLine:
    """A line as `decode_line` gives it, keeping only what a `RunSummary` is folded from."""
    return summary_item(_loads(line), line, offset, lineno)


def summary_item(data: Any, line: bytes, offset: int, lineno: int) -> Event | BadLine:
    """`decode_for_summary` of a line orjson has parsed already (`data`: what `_loads`
    gives)."""
    if not isinstance(data, dict) or not isinstance(kind := data.get("type"), str):
        return decode_line(line, offset, lineno)  # not an event: the engine says why
    if kind not in _FOLDED_FOR_MORE:  # a tool call or result, a message...: its time alone
        times: dict[str, Any] = {
            k: v for k in _TIME_FIELDS if type(v := data.get(k)) in _NUMBER_TYPES
        }
        if not times or max(abs(v) for v in times.values()) < _TOO_BIG:
            return Event(
                kind,
                started_at=times.get("started_at"),
                ended_at=times.get("ended_at"),
                ts=times.get("ts"),
            )
    elif not _lost_an_integer(data):
        return _kept(data, kind)
    # A number orjson may have made a float of an integer past 64 bits: as `json` reads it.
    data = _json_loads(line)
    if not isinstance(data, dict):
        return decode_line(line, offset, lineno)
    return _kept(data, kind)


def _kept(data: dict[str, Any], kind: str) -> Event:
    """The event of a decoded line, of the fields a summary is folded from."""
    if kind == FORK:
        kept = {k: data[k] for k in _FOLD_FORK_FIELDS if k in data}
        replay = data.get("replay")
        if isinstance(replay, dict):
            experiment = replay.get(EXPERIMENT)
            kept["replay"] = {EXPERIMENT: experiment} if isinstance(experiment, str) else {}
        return Event.from_dict(kept)
    keys = _FOLD_START_FIELDS if kind == RUN_START else FOLD_FIELDS
    return Event.from_dict({k: data[k] for k in keys if k in data})


# The events `replay.fold` (and the lineage, the pricing of a row) read more of than the type
# and the time; of every other one, most lines of a log, they read only those, so it is built
# of them alone, as `Event.from_dict` would keep them (a number, not a bool), for less than
# half its cost.
_FOLDED_FOR_MORE = frozenset({RUN_START, GENERATION, RUN_END, FORK})
_TIME_FIELDS = ("started_at", "ended_at", "ts")
_NUMBER_TYPES = frozenset({int, float})  # what `Event.from_dict` keeps of a time (not a bool)
_NUMBERS_KEPT = ("turn", "started_at", "ended_at", "ts", "at")
_TOO_BIG = float(2**63)  # orjson makes a float of an integer from here on (or below minus it)


def _lost_an_integer(data: dict[str, Any]) -> bool:
    """Whether a number a summary keeps may be an integer orjson turned into a float."""
    values = [v for v in map(data.get, _NUMBERS_KEPT) if type(v) is float]
    usage = data.get("usage")
    if type(usage) is dict:
        values += [v for v in usage.values() if type(v) is float]
    return bool(values) and max(map(abs, values)) >= _TOO_BIG


# The C scanner `json.loads` ends in; set by JSONDecoder.__init__, so typeshed does not list it.
_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _loads(line: bytes) -> Any:
    """`json.loads(line)`, or None where it raises, but for an integer past 64 bits.

    orjson first (several times faster): what it parses, `json` parses to the same value, but
    an integer past 64 bits, which orjson makes a float (`decode_for_summary` has `json` parse
    again a line where a value it keeps may be one); what orjson refuses (NaN, lone
    surrogates, bytes that are not UTF-8, deep nesting) goes to `json` here.
    """
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return _json_loads(line)


def _json_loads(line: bytes) -> Any:
    """`json.loads(line)`, or None where it raises.

    A line that starts an object (`{` then not a NUL, so `json.loads` would take it as UTF-8)
    goes to the scanner directly: the wrapper's encoding detection and checks cost a third of
    the decoding of a typical line.
    """
    if line[:1] == b"{" and line[1:2] != b"\x00":
        try:
            text = line.decode("utf-8", "surrogatepass")  # as `json.loads` decodes UTF-8
            data, end = _scan(text, 0)
        except (ValueError, StopIteration, RecursionError):
            return None
        if end != len(text) and text[end:].strip(" \t\n\r"):
            return None  # "Extra data" for `json.loads`
        return data
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None
