"""`agentor diff RUN_A RUN_B [--json]`: how two runs differ (a fork and its parent, a replay
and the run it replayed, any two), as `agentor.engine.fork.compare` finds it: both runs in a line
each, the first divergence, every difference with both values, and the tokens and time each
took. Reads only: nothing is written, no lock taken, no model called.

Exit status 0 whether or not the runs differ (`--json`'s `same` says which), 1 when a run is
refused (not found, unreadable), 2 for a usage error. Positions are lines of each run's log,
numbered as the TUI and `agentor show` number them.
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from agentor.cli.lines import LINE, Refusal, compact, plural, print_json
from agentor.cli.stores import the_run
from agentor.durations import duration
from agentor.engine.events import Event
from agentor.engine.fork.compare import (
    REQUEST,
    Comparison,
    Difference,
    Side,
    compare,
    first_differing_message,
)
from agentor.engine.store.holding import load_lines
from agentor.literal import literal_line


def diff(args: Namespace) -> int:
    a_id, a_lines = _read(args, args.run_a)
    b_id, b_lines = _read(args, args.run_b)
    a_events = [e for e in a_lines if isinstance(e, Event)]
    b_events = [e for e in b_lines if isinstance(e, Event)]
    found = compare(a_events, b_events)
    lines = _line_numbers(a_lines), _line_numbers(b_lines)
    if args.json:
        print_json(_as_json(found, (a_id, b_id), lines))
        return 0
    for label, run_id, s in (("a", a_id, found.a), ("b", b_id, found.b)):
        print(f"{label}  {run_id}  {_overview(s)}")
    if found.same:
        print(f"no difference: the runs did the same ({plural(len(found.a.turns), 'turn')})")
    else:
        first = found.first
        assert first is not None
        print(f"first divergence: {literal_line(first.describe())}")
        print(plural(len(found.differences), "difference") + ":")
        for d in found.differences:
            _print_difference(d, lines)
    _print_totals(found)
    return 0


def _read(args: Namespace, given: str) -> tuple[str, list[Any]]:
    store, run_id = the_run(Namespace(**{**vars(args), "run_id": given}))
    try:
        return run_id, load_lines(store, run_id)
    except OSError as exc:
        raise Refusal(f"cannot read run {run_id}: {exc.strerror or exc}") from None


def _line_numbers(lines: list[Any]) -> list[int]:
    """Each event's line (1-based, unreadable lines counted), by its position in the events."""
    return [n for n, item in enumerate(lines, 1) if isinstance(item, Event)]


def _line(index: int | None, numbers: list[int]) -> int | None:
    """The log line of the event at `index` of a run's events."""
    return numbers[index] if index is not None and 0 <= index < len(numbers) else None


def _overview(s: Side) -> str:
    parts = [s.status, plural(len(s.turns), "turn"), plural(s.tool_calls, "tool call")]
    parts += [f"{s.usage.total_tokens:,} tokens", f"took {duration(s.duration)}"]
    if s.fork is not None and s.fork.forked_from:
        at = f" at line {s.fork.at}" if s.fork.at is not None else ""
        kind = "replay" if s.fork.replay is not None else "fork"
        parts.append(f"{kind} of {s.fork.forked_from}{at}")
    return literal_line(" · ".join(parts), 300)


def _print_difference(d: Difference, lines: tuple[list[int], list[int]]) -> None:
    print("  " + literal_line(d.describe()))
    a, b = (d.a, d.b) if d.kind != REQUEST else first_differing_message(d.a, d.b)
    for label, value, n in (
        ("a", a, _line(d.a_index, lines[0])),
        ("b", b, _line(d.b_index, lines[1])),
    ):
        where = "" if n is None else f"  (line {n})"
        shown = "-" if value is None else compact(value)
        print(f"    {label}: {literal_line(shown, LINE)}{where}")


def _print_totals(found: Comparison) -> None:
    a, b = found.a, found.b
    print(f"tokens: a {a.usage.total_tokens:,}, b {b.usage.total_tokens:,}", end="")
    first = found.first
    if first is not None and first.turn is not None:
        since = a.usage_since(first.turn).total_tokens, b.usage_since(first.turn).total_tokens
        print(f" (from turn {first.turn} on: a {since[0]:,}, b {since[1]:,})", end="")
    print()
    print(f"took: a {duration(a.duration)}, b {duration(b.duration)}")


def _as_json(
    found: Comparison, ids: tuple[str, str], lines: tuple[list[int], list[int]]
) -> dict[str, Any]:
    """`agentor diff --json` (docs/forks.md): fields are only ever added."""
    first = found.first
    turn = first.turn if first is not None else None
    return {
        "a": _side_json(ids[0], found.a, turn),
        "b": _side_json(ids[1], found.b, turn),
        "same": found.same,
        "first_divergence": None if first is None else _difference_json(first, lines),
        "differences": [_difference_json(d, lines) for d in found.differences],
    }


def _side_json(run_id: str, s: Side, since: int | None) -> dict[str, Any]:
    fork = s.fork
    return {
        "run_id": run_id,
        "status": s.status,
        "final_output": s.final_output,
        "error": s.error,
        "turns": len(s.turns),
        "tool_calls": s.tool_calls,
        "usage": s.usage.to_dict(),
        "usage_since_divergence": None if since is None else s.usage_since(since).to_dict(),
        "duration": s.duration,
        "forked_from": fork.forked_from if fork is not None else None,
        "fork_at": fork.at if fork is not None else None,
        "replay": fork is not None and fork.replay is not None,
    }


def _difference_json(d: Difference, lines: tuple[list[int], list[int]]) -> dict[str, Any]:
    return {
        "kind": d.kind,
        "turn": d.turn,
        "call": d.call,
        "name": d.name,
        "a": d.a,
        "b": d.b,
        "a_line": _line(d.a_index, lines[0]),
        "b_line": _line(d.b_index, lines[1]),
        "description": d.describe(),
    }
