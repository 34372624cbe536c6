"""Collected runs into a store, so that the same spans written twice change nothing.

A run's events are derived whole from its spans each time (agentor.collect.mapping), then
compared with its log: what the log already holds is kept, what is new is appended. When
spans that arrive later change what came before (a step that started earlier than one already
written, the agent span bringing the agent's name), the log no longer is a prefix of the new
events and is written again whole: removed, then appended in one durable write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from agentor.collect.mapping import CollectedRun
from agentor.engine.events import Event
from agentor.engine.store.api import BatchStore, DeletingStore, Store
from agentor.errors import RunNotFoundError

NEW = "new"
EXTENDED = "extended"
UNCHANGED = "unchanged"
REWRITTEN = "rewritten"


@dataclass
class WriteCounts:
    new: int = 0
    extended: int = 0
    unchanged: int = 0
    rewritten: int = 0

    def add(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    @property
    def runs(self) -> int:
        return self.new + self.extended + self.unchanged + self.rewritten


def write_runs(store: Store, runs: Iterable[CollectedRun]) -> WriteCounts:
    counts = WriteCounts()
    for run in runs:
        counts.add(write_run(store, run))
    return counts


def write_run(
    store: Store, run: CollectedRun, before_rewrite: Callable[[], None] | None = None
) -> str:
    """Bring the run's log to `run.events`; say what that took (NEW, EXTENDED, ...).
    `before_rewrite` is called before a log is removed to be written again (a holder of the
    run lets it go then: a held run cannot be removed)."""
    try:
        held = store.load(run.run_id)
    except (RunNotFoundError, KeyError):
        held = []
    wanted = [_comparable(e) for e in run.events]
    have = [_comparable(e) for e in held]
    if have == wanted[: len(have)]:
        if len(have) == len(wanted):
            return UNCHANGED
        _append(store, run.run_id, run.events[len(have) :])
        return NEW if not have else EXTENDED
    if not isinstance(store, DeletingStore):
        raise TypeError(f"{type(store).__name__} cannot rewrite a run it holds")
    if before_rewrite is not None:
        before_rewrite()
    store.delete(run.run_id)
    _append(store, run.run_id, run.events)
    return REWRITTEN


def _append(store: Store, run_id: str, events: list[Event]) -> None:
    if isinstance(store, BatchStore):
        store.append_many(run_id, events)
    else:
        for event in events:
            store.append(run_id, event)


def _comparable(event: Event) -> dict[str, Any]:
    return event.to_dict()
