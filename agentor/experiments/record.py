"""What an experiment records in its store (an `ExperimentStore`): its definition, written once
when it starts, then one record per pair each time the pair is measured.

    {"kind": "definition", "v": 1, "id", "name", "created_at", "baselines": [run ids],
     "model", "agent", "agent_spec", "instructions", "model_settings", "match", "novel",
     "scorers": [specs], "rubric", "candidates": {baseline: candidate run id}}
    {"kind": "scorers", "scorers": [specs], "rubric"}   other scorers: every pair scored again
    {"kind": "pair", "baseline", "candidate", "status": [baseline's, candidate's], "error",
     "measures": {PairMeasures' fields}, "verdicts": [{"scorer", "values", "error"}], "at"}

The last pair record of a baseline is the pair's (a failed pair retried by a resume gets a new
one). The candidates are ordinary runs of the store: their id is made from the experiment's id
and the baseline's (`candidate_id`), so whoever goes on with the experiment finds them. The
experiment's id is made from what decides its candidates (`experiment_id`): the same command
again names the same experiment, and goes on with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.experiments.measures import PairMeasures
from agentor.experiments.scorers import Verdict

DEFINITION = "definition"
PAIR = "pair"
SCORERS = "scorers"
VERSION = 1


def experiment_id(identity: Mapping[str, Any]) -> str:
    """The id of the experiment `identity` (what decides its candidates) defines."""
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "exp-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def candidate_id(experiment: str, baseline: str) -> str:
    """The run id of the candidate of `baseline` in `experiment`."""
    return hashlib.sha256(f"{experiment}\0{baseline}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Definition:
    """An experiment as it was started: its baselines and the one change its candidates make."""

    id: str
    name: str
    baselines: tuple[str, ...]
    model: str | None = None  # None: the agent's own model
    agent: str | None = None  # the candidate agent's name; None: each baseline's recorded one
    agent_spec: str | None = None  # how the command loaded it (`--agent`), to resume with
    instructions: str | None = None  # None: the recorded prompt's
    model_settings: dict[str, Any] = field(default_factory=dict)
    match: str = "strict"
    novel: str = "error"
    scorers: tuple[str, ...] = ()
    rubric: str | None = None  # a judge's, when not the default (agentor.experiments.judge)
    created_at: float = 0.0

    @staticmethod
    def identity(
        *,
        name: str | None,
        baselines: Sequence[str],
        model: str | None,
        agent: str | None,
        instructions: str | None,
        model_settings: Mapping[str, Any],
        match: str,
        novel: str,
    ) -> dict[str, Any]:
        """What decides the candidates: two starts that agree on it are one experiment."""
        return {
            "name": name,
            "baselines": list(baselines),
            "model": model,
            "agent": agent,
            "instructions": instructions,
            "model_settings": dict(model_settings),
            "match": match,
            "novel": novel,
        }

    def candidate(self, baseline: str) -> str:
        return candidate_id(self.id, baseline)

    def scorers_record(self) -> dict[str, Any]:
        """The record that gives an experiment other scorers (its pairs are scored again)."""
        return {"kind": SCORERS, "scorers": list(self.scorers), "rubric": self.rubric}

    def rescored(self, record: Mapping[str, Any]) -> Definition:
        scorers = record.get("scorers")
        rubric = record.get("rubric")
        if not isinstance(scorers, list):
            return self
        return dataclasses.replace(
            self,
            scorers=tuple(s for s in scorers if isinstance(s, str)),
            rubric=rubric if isinstance(rubric, str) else None,
        )

    @property
    def change(self) -> str:
        """The change in a few words: "model gpt-4o, instructions changed"."""
        parts = []
        if self.agent_spec or (self.agent and self.model is None):
            parts.append(f"agent {self.agent}")
        if self.model:
            parts.append(f"model {self.model}")
        if self.instructions is not None:
            parts.append("instructions changed")
        if self.model_settings:
            keys = ", ".join(f"{k}={json.dumps(v)}" for k, v in self.model_settings.items())
            parts.append(f"settings {keys}")
        return ", ".join(parts) or "no change"

    def to_record(self) -> dict[str, Any]:
        return {
            "kind": DEFINITION,
            "v": VERSION,
            "id": self.id,
            "name": self.name,
            "created_at": self.created_at,
            "baselines": list(self.baselines),
            "model": self.model,
            "agent": self.agent,
            "agent_spec": self.agent_spec,
            "instructions": self.instructions,
            "model_settings": self.model_settings,
            "match": self.match,
            "novel": self.novel,
            "scorers": list(self.scorers),
            "rubric": self.rubric,
            "candidates": {b: self.candidate(b) for b in self.baselines},
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Definition:
        def text(key: str) -> str | None:
            value = record.get(key)
            return value if isinstance(value, str) else None

        baselines = record.get("baselines")
        scorers = record.get("scorers")
        settings = record.get("model_settings")
        created = record.get("created_at")
        return cls(
            id=str(record.get("id")),
            name=text("name") or str(record.get("id")),
            baselines=tuple(b for b in baselines if isinstance(b, str))
            if isinstance(baselines, list)
            else (),
            model=text("model"),
            agent=text("agent"),
            agent_spec=text("agent_spec"),
            instructions=text("instructions"),
            model_settings=dict(settings) if isinstance(settings, dict) else {},
            match=text("match") or "strict",
            novel=text("novel") or "error",
            scorers=tuple(s for s in scorers if isinstance(s, str))
            if isinstance(scorers, list)
            else (),
            rubric=text("rubric"),
            created_at=float(created) if isinstance(created, int | float) else 0.0,
        )


@dataclass(frozen=True)
class PairRecord:
    """One pair as last measured: both runs' statuses, the measures, each scorer's verdict;
    `error` when the candidate could not be run to an end (its run failed, or never began)."""

    baseline: str
    candidate: str
    status: tuple[str, str]
    measures: PairMeasures | None
    verdicts: tuple[Verdict, ...] = ()
    error: str | None = None
    at: float = 0.0

    def to_record(self) -> dict[str, Any]:
        return {
            "kind": PAIR,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "status": list(self.status),
            "error": self.error,
            "measures": None if self.measures is None else _measures_json(self.measures),
            "verdicts": [_verdict_json(v) for v in self.verdicts],
            "at": self.at or time.time(),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PairRecord | None:
        """The pair a record holds; None for a record of another shape (left out)."""
        try:
            status = record["status"]
            measures = record.get("measures")
            return cls(
                baseline=str(record["baseline"]),
                candidate=str(record["candidate"]),
                status=(str(status[0]), str(status[1])),
                measures=None if measures is None else _measures(measures),
                verdicts=tuple(_verdict(v) for v in record.get("verdicts") or ()),
                error=record.get("error") if isinstance(record.get("error"), str) else None,
                at=float(record.get("at") or 0.0),
            )
        except (KeyError, IndexError, TypeError, ValueError):
            return None


def _measures_json(m: PairMeasures) -> dict[str, Any]:
    # Field by field (its values are numbers, text and pairs of them): `asdict` copies deeply.
    values = ((f.name, getattr(m, f.name)) for f in dataclasses.fields(m))
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values}


def _measures(d: Mapping[str, Any]) -> PairMeasures:
    values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items()}
    return PairMeasures(**values)


def _verdict_json(v: Verdict) -> dict[str, Any]:
    return {
        "scorer": v.scorer,
        "values": {name: list(pair) for name, pair in v.values.items()},
        "error": v.error,
    }


def _verdict(d: Mapping[str, Any]) -> Verdict:
    values = d.get("values") or {}
    return Verdict(
        scorer=str(d["scorer"]),
        values={str(k): (pair[0], pair[1]) for k, pair in values.items()},
        error=d.get("error") if isinstance(d.get("error"), str) else None,
    )


def read_records(
    records: Sequence[Mapping[str, Any]],
) -> tuple[Definition | None, dict[str, PairRecord]]:
    """An experiment's definition (its first, with the scorers of its last `scorers` record)
    and each baseline's last pair record."""
    definition: Definition | None = None
    pairs: dict[str, PairRecord] = {}
    for record in records:
        kind = record.get("kind")
        if kind == DEFINITION and definition is None:
            definition = Definition.from_record(record)
        elif kind == SCORERS and definition is not None:
            definition = definition.rescored(record)
        elif kind == PAIR:
            pair = PairRecord.from_record(record)
            if pair is not None:
                pairs[pair.baseline] = pair
    return definition, pairs
