"""The experiments of a store, each as a line of a list says it (`agentor experiment ls`, the
TUI's `E`): its definition, how many of its pairs are measured and how many regressed, newest
first.

Cost model: one `load_experiment` per experiment (a file read, or a query); no pair is
summed up (`Experiment.load` draws the bootstrap, this does not).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentor.engine.store.api import Store
from agentor.errors import ExperimentNotFoundError
from agentor.experiments.experiment import experiments_of, pair_of
from agentor.experiments.record import Definition, read_records


@dataclass(frozen=True)
class Listed:
    """One experiment as a list shows it."""

    definition: Definition
    measured: int  # pairs with a record
    regressions: int

    @property
    def id(self) -> str:
        return self.definition.id

    @property
    def total(self) -> int:
        return len(self.definition.baselines)

    def to_json(self) -> dict[str, Any]:
        d = self.definition
        return {
            "experiment_id": d.id,
            "name": d.name,
            "change": d.change,
            "created_at": d.created_at,
            "pairs": self.total,
            "measured": self.measured,
            "regressions": self.regressions,
        }


def listed(store: Store) -> list[Listed]:
    """Every experiment of `store` that records a definition, newest first
    (`ExperimentError` for a store that keeps none)."""
    keeper = experiments_of(store)
    found = []
    for experiment_id in keeper.list_experiments():
        try:
            records = keeper.load_experiment(experiment_id)
        except ExperimentNotFoundError:
            continue  # gone since it was listed
        definition, pairs = read_records(records)
        if definition is None:
            continue
        regressions = sum(1 for r in pairs.values() if pair_of(r).regressed)
        found.append(Listed(definition, len(pairs), regressions))
    found.sort(key=lambda f: f.definition.created_at, reverse=True)
    return found
