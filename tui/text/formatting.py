"""Times, numbers and ids as the screen shows them: `"3m ago"`, `"4.2s"`, `"12.3k"`, `"cabc9046"`.

Times come from logs, where JSON may hold any number (`1e300`, `Infinity`, `NaN`): what no
clock can show reads `"-"` (or `"?"` for an offset), never an exception in a render.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable
from itertools import compress
from operator import not_

from agentor.durations import duration  # one definition, shared with the agentor commands

# A generated id: a uuid's 32 hex digits, or a uuid with its dashes (from a database, say).
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-?[0-9a-fA-F]{4}){3}-?[0-9a-fA-F]{12}")
ID_MAX = 20  # cells a run id may take in a list or a title


def named_ids(run_ids: Iterable[str]) -> list[str]:
    """The ids among these that are not generated (a uuid's `short_id` is its first 8 digits,
    8 cells): told apart in C loops, 100,000 ids in a few milliseconds."""
    ids = list(run_ids)
    return list(compress(ids, map(not_, map(_UUID.fullmatch, ids))))


def short_id(run_id: str) -> str:
    """A run id as lists and titles show it: a generated id (a uuid) by its first 8 digits, a
    name someone chose (`run(..., run_id="nightly-report")`) whole, up to ID_MAX cells."""
    if _UUID.fullmatch(run_id):
        return run_id[:8]
    return run_id if len(run_id) <= ID_MAX else run_id[: ID_MAX - 1] + "…"


def relative_time(t: float | None, now: float) -> str:
    """`"3m ago"`, `"2h ago"`; a future time (clock skew) reads `"in 3m"`."""
    if t is None or not math.isfinite(now - t):
        return "-"
    delta = now - t
    if abs(delta) < 10:
        return "just now"
    text = _span(abs(delta))
    return f"{text} ago" if delta > 0 else f"in {text}"


def _span(seconds: float) -> str:
    if seconds < 60:
        return f"{int(seconds)}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    if seconds < 86400 * 365:
        return f"{int(seconds // 86400)}d"
    return f"{int(seconds // (86400 * 365))}y"


def offset(seconds: float | None) -> str:
    """A timeline offset from the run's start: `"+0.00s"`, `"+12.3s"`, `"+3m05s"`."""
    if seconds is None:
        return ""
    if not math.isfinite(seconds):
        return "?"
    if seconds < 0:
        return "-" + offset(-seconds)[1:]
    if seconds < 10:
        return f"+{seconds:.2f}s"
    if seconds < 60:
        return f"+{seconds:.1f}s"
    return "+" + duration(seconds)


def count(n: int) -> str:
    """A count in at most 5 cells: `"950"`, `"9999"`, `"12.3k"`, `"123k"`, `"1.2M"`."""
    return _compact(n, 10_000)


def token_count(n: int) -> str:
    """A number of tokens, in one format from a thousand on (a column of them reads at a
    glance, "9.0k" beside "48.9k"): `"950"`, `"9.0k"`, `"48.9k"`, `"123k"`, `"1.2M"`."""
    return _compact(n, 1000)


def _compact(n: int, whole_below: int) -> str:
    if n < whole_below:
        return str(n)
    value = float(n)
    for unit in "kMGTPE":
        value /= 1000
        if value < 99.95:
            return f"{value:.1f}{unit}"
        if value < 999.5:
            return f"{value:.0f}{unit}"
    return f"{n:.0e}"


def clock_time(t: float | None) -> str:
    """An absolute time in UTC (the same on every machine, and in snapshots)."""
    if t is None:
        return "-"
    try:
        day = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))
    except (OverflowError, OSError, ValueError):
        return f"{t!r} (not a date)"
    return day + f".{int(t % 1 * 1000):03d} UTC"


def span_words(seconds: float) -> str:
    """`"40 s"`, `"12 min"`, `"3 h"`, `"2 d"`: how long an idle gap was, in words, to the
    nearest unit (2 h 59 min 56 s reads `"3 h"`)."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    if seconds < 59.5:
        return f"{round(seconds)} s"
    if seconds < 3570:
        return f"{round(seconds / 60)} min"
    if seconds < 84600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} d"
