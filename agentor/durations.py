"""How long something took, as every screen and command says it: `duration`. The TUI (run
list, detail, compare) and the `agentor` commands (`show`, `diff`) import this one definition,
so a run that took 21 ms reads "21ms" in both, never "0.0s" in one of them. And how long ago,
as every command takes it (`prune --older-than`, `export --older-than`, `ls --since`):
`parse_age`, one rule for all of them."""

from __future__ import annotations

import math
import re
from datetime import timedelta

_AGE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def duration(seconds: float | None) -> str:
    """`"850ms"`, `"4.2s"`, `"3m05s"`, `"2h03m"`; `"-"` for no time, or one no clock can show
    (a log may hold any number)."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return "-"
    if seconds < 1:
        return f"{int(seconds * 1000)}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"


def parse_age(value: timedelta | str) -> timedelta:
    """An age as a timedelta: a timedelta, or a number and a unit ("30d", "12h", "90m", "45s",
    "2w"). Anything else is a `ValueError` saying what is expected, in one line."""
    if isinstance(value, timedelta):
        age = value
    elif isinstance(value, str) and (m := _AGE.fullmatch(value)):
        try:
            age = timedelta(**{_UNITS[m.group(2).lower()]: float(m.group(1))})
        except OverflowError:
            raise ValueError(f"an age too long: {value!r}; at most 999999999d") from None
    else:
        raise ValueError(
            f"not an age: {value!r}; use a number and a unit: 30d, 12h, 90m, 45s or 2w"
        )
    if age < timedelta(0):
        raise ValueError(f"an age cannot be negative: {value!r}")
    return age
