"""The lines the `agentor` commands print: times, ages and sizes, an event as one timeline
line, a refusal on stderr, JSON on stdout.

Everything taken from a log (prompts, arguments, results, names, errors, notes) goes through
`agentor.literal` before it is printed: a log may hold escape sequences, and a terminal obeys
them. JSON output needs no such care: its encoder escapes every control character.
"""

from __future__ import annotations

import codecs
import json
import math
import sys
import time
from collections.abc import Callable
from typing import Any

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
    TEXT_DELTA,
    TOOL_CALL,
    TOOL_DISABLED,
    TOOL_RESULT,
    TOOL_START,
    TOOL_WAIT,
    Event,
)
from agentor.engine.fork.recording import DRIFT, SERVED, marked_answer
from agentor.engine.history import event_time
from agentor.engine.mcp_record import offered_words
from agentor.literal import literal_line

LINE = 160  # characters of an event's text on a timeline line


class Refusal(Exception):
    """The command cannot do what it was asked (not found, already decided, locked...): one
    line on stderr saying why, exit status 1."""

    status = 1


class UsageError(Refusal):
    """The command was given something it cannot take: one line on stderr, exit status 2."""

    status = 2


def say(command: str, exc: Refusal) -> int:
    """A refusal's one line on stderr; its exit status."""
    prefix = "error: " if isinstance(exc, UsageError) else ""
    print(f"agentor {command}: {prefix}{literal_line(str(exc))}", file=sys.stderr)
    return exc.status


def print_json(value: Any) -> None:
    """`value` as JSON on stdout (UTF-8, two-space indent, keys in the documented order)."""
    print(json.dumps(value, ensure_ascii=False, indent=2, default=str))


def print_utf8(data: bytes) -> None:
    """`print(data.decode())` of UTF-8 text, written as it is when stdout encodes text as
    UTF-8 (the same bytes, none decoded and encoded again), else printed."""
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is None or not _utf8(getattr(out, "encoding", None)):
        print(data.decode())
        return
    out.flush()  # what was printed before comes first
    for piece in (data, b"\n"):
        view = memoryview(piece)
        while view:  # an unbuffered stdout (`python -u`) may take a part at a time
            written = buffer.write(view)
            if written is None:  # a non-blocking stdout that is full
                raise BlockingIOError("stdout would block")
            view = view[written:]
    buffer.flush()


def _utf8(encoding: object) -> bool:
    try:
        return isinstance(encoding, str) and codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def finite(t: Any) -> float | None:
    """A time from a log that a clock can show, else None (a log may hold any number)."""
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        return None
    return float(t) if abs(t) < 1e11 else None


def clock(t: float | None) -> str:
    """`HH:MM:SS` local time, or `--:--:--`."""
    t = finite(t)
    return time.strftime("%H:%M:%S", time.localtime(t)) if t is not None else "--:--:--"


def stamp(t: float | None) -> str:
    """`YYYY-MM-DD HH:MM:SS` local time, or `-`."""
    t = finite(t)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t is not None else "-"


def span(seconds: float | None) -> str:
    """`42s`, `5m`, `3h`, `2d`; `-` for no time."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    seconds = abs(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def compact(value: Any) -> str:
    """A value as one line of JSON (a string as it is)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def human_bytes(n: int | None) -> str:
    """`512 B`, `1.5 kB`, `12.0 MB` (powers of 1000, as `du --si`); `? bytes` when unknown."""
    if n is None:
        return "? bytes"
    size = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def event_line(e: Event) -> str:
    """One timeline line: `HH:MM:SS  type  what happened`, made literal and cut to fit."""
    what = literal_line(LINES.get(e.type, _fields)(e), LINE)
    kind = literal_line(e.type, 24)
    return f"{clock(event_time(e))}  {kind:<16}  {what}".rstrip()


def _run_start(e: Event) -> str:
    line = " · ".join(str(x) for x in (e.agent, e.model) if x)
    return f"{line} · MCP {offered_words(e.mcp)}" if e.mcp else line


def _generation(e: Event) -> str:
    calls = len(e.calls or [])
    parts = [f"turn {e.turn}"] if e.turn is not None else []
    if calls:
        parts.append(plural(calls, "call"))
    elif e.text:
        parts.append(e.text)
    if e.note is not None:  # a fallback model answered
        parts.append(f"by {e.model} (fallback)")
    return " · ".join(parts)


def _call(e: Event) -> str:
    return f"{e.name}{_via(e)} {compact(e.args)}"


def _tool_start(e: Event) -> str:
    return f"{_call(e)}  ({_ran_where(e)})"


def _approval_request(e: Event) -> str:
    line = f"{e.call_id}  {_call(e)}"
    if e.reason:
        line += f"  ({e.reason}; {_ran_where(e)})"
    if finite(e.deadline) is not None:
        line += f"  (deadline {stamp(e.deadline)})"
    return line


def _tool_result(e: Event) -> str:
    name = f"{e.name}{_via(e)}{_answered(e)}"
    if e.error is not None:
        return f"{name} ✗ {e.error}"
    given = f"  (given by {e.by}, not run)" if e.by else ""
    return f"{name} → {compact(e.result)}{given}"


def _answered(e: Event) -> str:
    """How a tool result was answered, when not the plain way (run here): served from a
    record (with the recorded arguments, when they were others), or, for a replay's call with
    no recorded answer, executed or refused."""
    how = marked_answer(e)
    if how is None:
        return ""
    if how != SERVED or DRIFT not in e.extra:
        return f" · {how}"
    recorded = compact(e.extra[DRIFT])
    recorded = recorded if len(recorded) <= 60 else recorded[:59] + "…"
    return f" · served, recorded args {recorded}"


def _approval(e: Event) -> str:
    line = f"{e.decision} {e.call_id} ({e.name}) by {e.by}"
    if e.note:
        line += f": {e.note}"
    if e.result is not None:
        line += f"  with the result it had: {compact(e.result)}"
    if e.args is not None:
        line += f"  edited to {compact(e.args)}"
    return line


def _message(e: Event) -> str:
    return " · ".join(x for x in (e.error, e.text) if x)


def _run_end(e: Event) -> str:
    return " · ".join(p for p in (e.status, e.error) if p)


def _fields(e: Event) -> str:
    """An event as its fields, in JSON (a type with no words of its own, or one this version
    does not know)."""
    return compact({k: v for k, v in e.to_dict().items() if k not in ("type", "ts")})


# What each type of event says on its line (agentor.engine.events.EVENT_TYPES: every type).
LINES: dict[str, Callable[[Event], str]] = {
    RUN_START: _run_start,
    GENERATION: _generation,
    TOOL_CALL: _call,
    TOOL_START: _tool_start,
    TOOL_RESULT: _tool_result,
    MESSAGE: _message,
    RUN_END: _run_end,
    FORK: _fields,
    APPROVAL_REQUEST: _approval_request,
    APPROVAL: _approval,
    CLAIM: lambda e: _marker_words(e),
    RELEASE: lambda e: _marker_words(e),
    INVALID_OUTPUT: lambda e: f"✗ {e.error}",
    TOOL_DISABLED: lambda e: f"{e.name} {e.note or 'withdrawn'}",
    TEXT_DELTA: _fields,
    TOOL_WAIT: lambda e: f"waiting for {e.name} to finish",
}


def _marker_words(e: Event) -> str:
    """A fleet's claim or release (`fleet.claims`, which brings logging and sockets: loaded
    when one is met, not by every command)."""
    from agentor.fleet.claims import marker_words

    return marker_words(e)


def _via(e: Event) -> str:
    """` @files`: the MCP server a tool came from, if one did."""
    return f" @{e.server}" if e.server else ""


def _ran_where(e: Event) -> str:
    """`started 2025-01-02 03:04:05 in process 123 on host-a`."""
    return f"started {stamp(e.started_at or e.ts)} in process {e.pid} on {e.host}"
