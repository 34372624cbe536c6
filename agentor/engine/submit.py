"""`Agentor.submit`: record a new run for a fleet of workers to run, without running it.

A submitted run is its `run_start` alone (the agent's name, model, tools, settings and the
input messages, as a run records it): incomplete and held by nobody, so a worker of that
agent's name takes it (agentor.fleet.worker) and appends its own segment. Submitting the
same input again under the same `run_id` writes nothing and returns the id (a job retried by
its scheduler); another input under an existing id is refused, as `run(run_id=)` refuses it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from agentor.engine.events import Event
from agentor.engine.inputs import check_same_input
from agentor.engine.store.api import Store
from agentor.engine.store.holding import holding_briefly, load_if_any
from agentor.engine.store.run_ids import validate_run_id


def submit_run(
    store: Store,
    messages: list[dict[str, Any]],
    run_start: Callable[[str], Event],
    run_id: str | None = None,
) -> str:
    """Record `run_start(run_id)` as a new run in `store` unless the run exists with these
    `messages`; the run id. `RunIdTakenError` (a `ValueError`) when it exists with other
    messages."""
    run_id = uuid.uuid4().hex if run_id is None else validate_run_id(run_id)
    if _exists(store, run_id, messages):
        return run_id
    with holding_briefly(store, run_id):
        if not _exists(store, run_id, messages):  # another submitter may have been first
            store.append(run_id, run_start(run_id))
    return run_id


def _exists(store: Store, run_id: str, messages: list[dict[str, Any]]) -> bool:
    events = load_if_any(store, run_id)  # an empty log: killed before its first line
    if events:
        check_same_input(run_id, events, messages)
    return bool(events)
