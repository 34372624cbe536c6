"""How long something took, as every screen and command says it: `duration`. The TUI (run
list, detail, compare) and the `agentor` commands (`show`, `diff`) import this one definition,
so a run that took 21 ms reads "21ms" in both, never "0.0s" in one of them."""

from __future__ import annotations

import math


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
