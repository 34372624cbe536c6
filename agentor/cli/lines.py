"""The lines the `agentor` commands print: times, ages and sizes, an event as one timeline
line, a refusal on stderr, JSON on stdout.

Everything taken from a log (prompts, arguments, results, names, errors, notes) goes through
`agentor.literal` before it is printed: a log may hold escape sequences, and a terminal obeys
them. JSON output needs no such care: its encoder escapes every control character.
"""

from __future__ import annotations

import json
import math
import sys
import time
from typing import Any

from agentor.engine.events import (
    APPROVAL,
    APPROVAL_REQUEST,
    CLAIM,
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
    TOOL_WAIT,
    Event,
)
from agentor.engine.fork.recording import DRIFT, SERVED, marked_answer
from agentor.engine.history import event_time
from agentor.engine.mcp_record import offered_words
from agentor.fleet.claims import marker_words
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
    what = literal_line(_what(e), LINE)
    kind = literal_line(e.type, 24)
    return f"{clock(event_time(e))}  {kind:<16}  {what}".rstrip()


def _what(e: Event) -> str:
    if e.type == RUN_START:
        line = " · ".join(str(x) for x in (e.agent, e.model) if x)
        return f"{line} · MCP {offered_words(e.mcp)}" if e.mcp else line
    if e.type == GENERATION:
        calls = len(e.calls or [])
        parts = [f"turn {e.turn}"] if e.turn is not None else []
        if calls:
            parts.append(plural(calls, "call"))
        elif e.text:
            parts.append(e.text)
        if e.note is not None:  # a fallback model answered
            parts.append(f"by {e.model} (fallback)")
        return " · ".join(parts)
    if e.type in (TOOL_CALL, APPROVAL_REQUEST, TOOL_START):
        line = f"{e.name}{_via(e)} {compact(e.args)}"
        if e.type == APPROVAL_REQUEST:
            line = f"{e.call_id}  {line}"
            if e.reason:
                line += f"  ({e.reason}; {_ran_where(e)})"
            if finite(e.deadline) is not None:
                line += f"  (deadline {stamp(e.deadline)})"
        elif e.type == TOOL_START:
            line += f"  ({_ran_where(e)})"
        return line
    if e.type == TOOL_RESULT:
        name = f"{e.name}{_via(e)}{_answered(e)}"
        if e.error is not None:
            return f"{name} ✗ {e.error}"
        given = f"  (given by {e.by}, not run)" if e.by else ""
        return f"{name} → {compact(e.result)}{given}"
    if e.type == APPROVAL:
        line = f"{e.decision} {e.call_id} ({e.name}) by {e.by}"
        if e.note:
            line += f": {e.note}"
        if e.result is not None:
            line += f"  with the result it had: {compact(e.result)}"
        if e.args is not None:
            line += f"  edited to {compact(e.args)}"
        return line
    if e.type == TOOL_WAIT:
        return f"waiting for {e.name} to finish"
    if e.type in (CLAIM, RELEASE):
        return marker_words(e)
    if e.type == INVALID_OUTPUT:
        return f"✗ {e.error}"
    if e.type == TOOL_DISABLED:
        return f"{e.name} {e.note or 'withdrawn'}"
    if e.type in (MESSAGE, RUN_END):
        parts = [e.status or ""] if e.type == RUN_END else []
        parts += [x for x in (e.error, e.text if e.type == MESSAGE else None) if x]
        return " · ".join(p for p in parts if p)
    return compact({k: v for k, v in e.to_dict().items() if k not in ("type", "ts")})


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


def _via(e: Event) -> str:
    """` @files`: the MCP server a tool came from, if one did."""
    return f" @{e.server}" if e.server else ""


def _ran_where(e: Event) -> str:
    """`started 2025-01-02 03:04:05 in process 123 on host-a`."""
    return f"started {stamp(e.started_at or e.ts)} in process {e.pid} on {e.host}"
