"""Operating a store for months: retention, pins, export, search across runs, and what runs
cost. Functions over any store; the `agentor` command and the TUI call them.

    from agentor.ops import prune, pin, export, search, run_cost

These names are the public face; the modules behind them (`retention`, `pins`, `export`,
`search`, `pricing`) are internal. Each is imported when first named, so `import agentor.ops`
loads none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentor.engine.store.matching import Hit
    from agentor.ops.pins import is_pinned, pin, pinned, unpin
    from agentor.ops.pricing import RunCost, format_cost, run_cost
    from agentor.ops.retention import PruneReport, delete_run, prune
    from agentor.ops.run_export import export
    from agentor.ops.run_search import search

_WHERE = {
    "export": "agentor.ops.run_export",
    "pin": "agentor.ops.pins",
    "unpin": "agentor.ops.pins",
    "is_pinned": "agentor.ops.pins",
    "pinned": "agentor.ops.pins",
    "prune": "agentor.ops.retention",
    "delete_run": "agentor.ops.retention",
    "PruneReport": "agentor.ops.retention",
    "search": "agentor.ops.run_search",
    "Hit": "agentor.ops.run_search",
    "run_cost": "agentor.ops.pricing",
    "format_cost": "agentor.ops.pricing",
    "RunCost": "agentor.ops.pricing",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'agentor.ops' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
