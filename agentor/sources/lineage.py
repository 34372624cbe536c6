"""A run's lineage as the run list knows it: which run a fork was made from, where, and what was
changed there (its `RunRow.forked_from`, `fork_at`, `fork_edit`); and the tree of a run's
ancestors and forks drawn from the rows.

Where it is read from: a fork's log is a copy of its parent's events up to the fork point, then
the fork's own `fork` event (agentor.engine.fork_mark), then its own segments. The run's own marker
is the last `fork` event naming another run (a fork of a fork holds its parent's marker too, copied
earlier); an upstream log that names its parent on its `run_start` (`forked_from`) counts as well.
The row readers hand every event they fold to `note_fork`, so a row read whole knows its lineage; a
quick row (head and tail) knows it once its walk back met the marker or `fill()` has read it whole.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from agentor.engine.events import FORK, RUN_START, Event
from agentor.engine.fork_mark import MODEL, PROMPT, RESULT, ForkMark
from agentor.engine.history import event_time
from agentor.literal import literal_line
from agentor.sources.runrow import RunRow

_PARENT = attrgetter("forked_from")
WHOLE_RUN = "whole run"  # what a fork of a whole run, continued as it was, changed


def note_fork(row: RunRow, events: Sequence[Event]) -> None:
    """Take the lineage of `row` from `events` (folded in order): the last marker wins."""
    parent, mark = lineage_of(row.run_id, events)
    if mark is not None:
        row.forked_from, row.fork_at, row.fork_edit = parent, mark.at, edit_of(mark)
        made = event_time(events[mark.index])
        row.forked_at = made if made is not None and math.isfinite(made) else None
    elif parent is not None and row.forked_from is None:
        row.forked_from = parent  # upstream's way of naming a parent


def lineage_of(run_id: str, events: Sequence[Event]) -> tuple[str | None, ForkMark | None]:
    """The parent `events` name for run `run_id` and its last `fork` marker (None: none):
    the last `fork` event naming another run, else a `run_start`'s `forked_from` (upstream's
    way). Only events naming a parent are looked at further (a listing hands every event
    here: a scan at C speed first)."""
    if not any(map(_PARENT, events)):
        return None, None
    parent: str | None = None
    mark: ForkMark | None = None
    for i, e in enumerate(events):
        named = e.forked_from
        if named is None or named == run_id:
            continue
        if e.type == FORK:
            parent, mark = named, ForkMark.of(i, e)
        elif e.type == RUN_START and parent is None:
            parent = named
    return parent, mark


def edit_of(mark: ForkMark) -> str:
    """What a fork changed, in a few words: "result edited", "model gpt-4o, input added",
    "replay with gpt-4o · experiment 7f3a"..."""
    if mark.replay is not None:
        model = mark.edit.get(MODEL)
        said = f"replay with {model}" if isinstance(model, str) else "replay"
        return f"{said} · experiment {mark.experiment}" if mark.experiment else said
    words = []
    if RESULT in mark.edit:
        words.append("result edited")
    if mark.at is not None and PROMPT in mark.edit and mark.input is None:
        words.append("prompt replaced" if mark.prompt else "from the start")
    if isinstance(model := mark.edit.get(MODEL), str):
        words.append(f"model {model}")
    if mark.input is not None:
        words.append("input added")
    if not words:
        return "asked again" if mark.at is not None else WHOLE_RUN
    return ", ".join(words)


def fork_point(at: int | None, edit: str | None) -> str:
    """Where a fork was made and what it changed there: "at line 6: result edited", "whole
    run: input added", "whole run" (said once)."""
    said = literal_line(edit or "forked", 120)
    if at is not None:
        return f"at line {at}: {said}"
    return WHOLE_RUN if said == WHOLE_RUN else f"{WHOLE_RUN}: {said}"


@dataclass
class ForkNode:
    """A run in a fork tree: its row (None for an ancestor the source does not hold) and its
    forks, oldest first."""

    run_id: str
    row: RunRow | None
    forks: list[ForkNode] = field(default_factory=list)


def root_of(rows: dict[str, RunRow], run_id: str) -> str:
    """The oldest ancestor of `run_id` the rows name (a parent not held still counts: it is the
    root, shown as missing). A loop of names (a crafted log) stops where it closes."""
    seen = {run_id}
    row = rows.get(run_id)
    while row is not None and row.forked_from is not None and row.forked_from not in seen:
        run_id = row.forked_from
        seen.add(run_id)
        row = rows.get(run_id)
    return run_id


def fork_tree(rows: Iterable[RunRow], run_id: str) -> ForkNode:
    """The tree of `run_id`'s root ancestor and every fork below it (forks of forks...)."""
    by_id = {r.run_id: r for r in rows}
    children: dict[str, list[RunRow]] = {}
    for r in by_id.values():
        if r.forked_from is not None:
            children.setdefault(r.forked_from, []).append(r)
    root = root_of(by_id, run_id)
    top = ForkNode(root, by_id.get(root))
    stack, placed = [top], {root}
    while stack:
        node = stack.pop()
        kids = sorted(children.get(node.run_id, []), key=lambda r: (r.sort_key, r.run_id))
        for kid in kids:
            if kid.run_id in placed:
                continue  # a crafted loop: each run once
            placed.add(kid.run_id)
            child = ForkNode(kid.run_id, kid)
            node.forks.append(child)
            stack.append(child)
    return top


def forks_of(rows: Iterable[RunRow], run_id: str) -> list[str]:
    """The runs that name `run_id` as their parent, oldest first."""
    forks = sorted((r for r in rows if r.forked_from == run_id), key=lambda r: r.sort_key)
    return [r.run_id for r in forks]
