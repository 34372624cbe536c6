"""Runs for the retention tests: written through a store's own `append_many` (the engine's
encoding), at chosen times; and a real process holding a run's lock."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

from agentor.engine.events import FORK, GENERATION, RUN_END, RUN_START, Event, Usage
from agentor.engine.store.api import Store
from tests.conftest import ROOT

DAY = 86400.0
NOW = 1_800_000_000.0  # the clock of these tests (a day in 2027)


def write_run(
    store: Store,
    run_id: str,
    *,
    age_days: float,
    ending: str | None = "completed",
    forked_from: str | None = None,
    prompt: str = "What is the weather in Oslo?",
    now: float = NOW,
) -> None:
    """A one-turn run whose last event is `age_days` before `now` (default NOW); `ending`
    None: no run_end."""
    t = now - age_days * DAY
    events = [
        Event(
            RUN_START,
            run_id=run_id,
            agent="Weather Agent",
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": prompt}],
            started_at=t - 2,
            ts=t - 2,
        ),
        Event(
            GENERATION,
            turn=1,
            model="gpt-4o-mini",
            text="Sunny.",
            usage=Usage(30, 5, 35),
            messages=[{"role": "user", "content": prompt}],
            ts=t - 1,
        ),
    ]
    if ending is not None:
        events.append(Event(RUN_END, status=ending, text="Sunny.", ts=t))
    if forked_from is not None:  # upstream's fork marker, last, at the fork's time
        events.append(Event(FORK, forked_from=forked_from, ts=t))
    store.append_many(run_id, events)


_HOLDER = textwrap.dedent(
    """
    import sys
    from agentor.engine.store.file import FileStore
    store = FileStore(sys.argv[1])
    with store.lock(sys.argv[2]):
        print("held", flush=True)
        sys.stdin.read()
    """
)
_PG_HOLDER = textwrap.dedent(
    """
    import sys
    from agentor.engine.store.postgres import PostgresStore
    with PostgresStore(sys.argv[1], schema=sys.argv[3]) as store, store.lock(sys.argv[2]):
        print("held", flush=True)
        sys.stdin.read()
    """
)


@contextlib.contextmanager
def held_by_another_process(
    directory: Path | str, run_id: str, schema: str | None = None
) -> Iterator[subprocess.Popen[str]]:
    """A real process holding the run's lock until the block ends: a FileStore's directory,
    or with `schema`, a database's (`directory` is then its DSN; its own connections)."""
    script, extra = (_HOLDER, []) if schema is None else (_PG_HOLDER, [schema])
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(directory), run_id, *extra],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)
