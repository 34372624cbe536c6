"""Running an experiment's pairs: each baseline replayed as its candidate, `concurrency` at a
time, then measured, scored and recorded.

A pair is done once: its candidate is a run with a fixed id (`Definition.candidate`), made by
one replay and held, as every run is, by one process at a time. So a pair is, by what the store
says of it:
- recorded (a pair record): done, unless its candidate failed and this is a resume, which
  retries it (the candidate's run is resumed: what it recorded is not asked again);
- a candidate with no record: it ran, or ran part way. Held by another process (or task): that
  one records it, and this one waits for its record (taking the pair over if that process dies
  and lets it go); else it is resumed here (a finished one just measured);
- nothing yet: replayed here. Two processes starting the same pair at once: one wins the
  candidate's id, the other waits for it as above.
A process killed at any point leaves each pair in one of these states, so whoever goes on
(`resume`, or the same command again) finishes only what is missing: no candidate is replayed
twice, none is lost.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from agentor.engine.events import RUN_END, Event
from agentor.engine.log.format import BadLine
from agentor.engine.statuses import FAILED, INCOMPLETE
from agentor.engine.store.api import ExperimentStore, Store
from agentor.engine.store.holding import load_if_any, load_lines
from agentor.errors import RunLockedError
from agentor.experiments.measures import measure
from agentor.experiments.record import Definition, PairRecord, read_records
from agentor.experiments.scorers import Scorer, judge_pair
from agentor.result import RunResult, from_log

# How often a process waiting for pairs another one holds looks at the store again.
POLL = 0.2


class CandidateAgent(Protocol):
    """What a pair asks of the agent that replays its baseline: an `Agentor`."""

    async def areplay(
        self,
        run_id: str,
        *,
        model: Any = None,
        fork_id: str | None = None,
        novel: str = "error",
        match: str = "strict",
        instructions: str | None = None,
        model_settings: dict[str, Any] | None = None,
        experiment: str | None = None,
        lines: Sequence[Event | BadLine] | None = None,
    ) -> RunResult: ...

    async def aresume(self, run_id: str) -> RunResult: ...


# The agent that replays a baseline, given its id and events.
AgentFor = Callable[[str, list[Event]], CandidateAgent]
OnPair = Callable[[PairRecord], None]
# Baselines' lines read already (when the experiment was checked), by run id.
Lines = dict[str, list[Event | BadLine]]


class _Held(Exception):
    """Another process (or task) holds the pair's candidate."""


async def run_pairs(
    store: Store,
    definition: Definition,
    agent_for: AgentFor,
    scorers: Sequence[tuple[str, Scorer]],
    *,
    concurrency: int,
    retry_failed: bool,
    on_pair: OnPair | None = None,
    lines: Lines | None = None,
) -> dict[str, PairRecord]:
    """Run every pair of `definition` that is not done; return each baseline's pair record (in
    the definition's order; pairs left to another process that stopped waiting are missing).
    `lines`: baselines' lines read already (each used once, then let go)."""
    assert isinstance(store, ExperimentStore)
    _, done = read_records(await asyncio.to_thread(store.load_experiment, definition.id))
    todo = [b for b in definition.baselines if _to_do(done.get(b), retry_failed, definition)]
    limit = asyncio.Semaphore(max(1, concurrency))
    pairs = _PairRunner(store, definition, agent_for, scorers, on_pair, lines)
    while todo:
        held = await _each(todo, limit, pairs.run)
        if not held:
            break
        await asyncio.sleep(POLL)  # another process holds these: look again in a moment
        _, done = read_records(await asyncio.to_thread(store.load_experiment, definition.id))
        todo = [b for b in held if b not in done or _newer_needed(done[b], pairs.started)]
    _, done = read_records(await asyncio.to_thread(store.load_experiment, definition.id))
    return {b: done[b] for b in definition.baselines if b in done}


def _to_do(record: PairRecord | None, retry_failed: bool, definition: Definition) -> bool:
    """Whether a pair needs work: never measured, failed (on a resume), or scored by other
    scorers than the experiment's now."""
    if record is None or (retry_failed and _failed(record)):
        return True
    return record.measures is not None and _scored_by(record) != definition.scorers


def _scored_by(record: PairRecord) -> tuple[str, ...]:
    return tuple(v.scorer for v in record.verdicts)


def _failed(record: PairRecord) -> bool:
    return record.status[1] in (FAILED, INCOMPLETE) or record.measures is None


def _newer_needed(record: PairRecord, started: float) -> bool:
    """A failed record made before this run began: retried by the process holding it."""
    return _failed(record) and record.at < started


async def _each(
    baselines: Sequence[str],
    limit: asyncio.Semaphore,
    run: Callable[[str, asyncio.Semaphore], Awaitable[None]],
) -> list[str]:
    """Run `run` on each baseline (`limit`: the places of the candidates in flight); the
    baselines held elsewhere."""

    async def one(baseline: str) -> str | None:
        try:
            await run(baseline, limit)
        except _Held:
            return baseline
        return None

    results = await asyncio.gather(*(one(b) for b in baselines))
    return [b for b in results if b is not None]


class _PairRunner:
    def __init__(
        self,
        store: Store,
        definition: Definition,
        agent_for: AgentFor,
        scorers: Sequence[tuple[str, Scorer]],
        on_pair: OnPair | None,
        lines: Lines | None = None,
    ) -> None:
        self.store = store
        self.definition = definition
        self.agent_for = agent_for
        self.scorers = scorers
        self.on_pair = on_pair
        self.lines: Lines = dict(lines or {})
        self.started = time.time()

    async def run(self, baseline: str, limit: asyncio.Semaphore) -> None:
        """The pair of `baseline`: its candidate replayed (or resumed) in one of `limit`'s
        places, then measured, scored and recorded in a thread, its place already given to
        the next candidate (measuring waits on no model)."""
        candidate = self.definition.candidate(baseline)
        async with limit:
            lines, events = await asyncio.to_thread(self._read, baseline, candidate)
            base_events = [e for e in lines if isinstance(e, Event)]
            agent = self.agent_for(baseline, base_events)
            error: str | None = None
            saved: list[Event] | None = None
            try:
                if not events:
                    saved = _as_saved(await self._replay(agent, baseline, candidate, lines))
                elif _ended(events) and not _retry(events):
                    pass  # finished (its process died before recording it): measured below
                else:
                    await agent.aresume(candidate)
            except RunLockedError:
                raise _Held from None
            except _Held:
                raise
            except Exception as exc:  # the pair fails with the error; a resume retries it
                error = _one_line(exc)
        await asyncio.to_thread(self._record, baseline, candidate, base_events, error, saved)

    def _read(self, baseline: str, candidate: str) -> tuple[list[Event | BadLine], list[Event]]:
        """The baseline's lines (read once: its replay is given them; kept from the
        experiment's check when they were) and the candidate's events (none yet, most
        often)."""
        lines = self.lines.pop(baseline, None)
        if lines is None:
            lines = load_lines(self.store, baseline)
        return lines, load_if_any(self.store, candidate)

    def _record(
        self,
        baseline: str,
        candidate: str,
        base_events: list[Event],
        error: str | None,
        saved: list[Event] | None = None,
    ) -> None:
        """The candidate as the store holds it (`saved`: the events its replay saved, every
        one of them), measured with its baseline; the pair's record saved."""
        cand_events = saved if saved is not None else load_if_any(self.store, candidate)
        self._save(self._measured(baseline, candidate, base_events, cand_events, error))

    async def _replay(
        self,
        agent: CandidateAgent,
        baseline: str,
        candidate: str,
        lines: Sequence[Event | BadLine],
    ) -> RunResult:
        d = self.definition
        try:
            return await agent.areplay(
                baseline,
                model=d.model,
                fork_id=candidate,
                novel=d.novel,
                match=d.match,
                instructions=d.instructions,
                experiment=d.id,
                lines=lines,
            )
        except ValueError:
            # Another process made the candidate between our look and our replay: it holds
            # it, or it is done; look again later.
            if await asyncio.to_thread(load_if_any, self.store, candidate):
                raise _Held from None
            raise

    def _measured(
        self,
        baseline: str,
        candidate: str,
        base_events: list[Event],
        cand_events: list[Event],
        error: str | None,
    ) -> PairRecord:
        base_result = _result(baseline, base_events)
        if not cand_events or not _ended(cand_events):
            status = (base_result.status, INCOMPLETE if cand_events else "missing")
            return PairRecord(baseline, candidate, status, None, (), error or "no candidate run")
        cand_result = _result(candidate, cand_events)
        measures = measure(base_events, cand_events)
        verdicts = tuple(
            judge_pair(spec, scorer, base_result, cand_result) for spec, scorer in self.scorers
        )
        if error is None and cand_result.status == FAILED:
            error = cand_result.error
        return PairRecord(
            baseline, candidate, measures.status, measures, verdicts, error, time.time()
        )

    def _save(self, record: PairRecord) -> None:
        store = self.store
        assert isinstance(store, ExperimentStore)
        store.append_experiment(self.definition.id, record.to_record())
        if self.on_pair is not None:
            self.on_pair(record)


def _as_saved(result: RunResult) -> list[Event] | None:
    """The events a replay saved, as the store holds them (read back, each is equal to the
    one written): the run's whole log, from its opening, when no save failed and it ended;
    else None (the store is read)."""
    events = list(result.events)
    return events if result.save_failures == 0 and _ended(events) else None


def _ended(events: Sequence[Event]) -> bool:
    """Whether the run's last segment has ended (any ending)."""
    for e in reversed(events):
        if e.type == RUN_END:
            return True
        if e.type == "run_start":
            return False
    return False


def _retry(events: Sequence[Event]) -> bool:
    """A candidate that ended failed: a resume tries its failed step again."""
    for e in reversed(events):
        if e.type == RUN_END:
            return e.status == FAILED
    return False


def _result(run_id: str, events: list[Event]) -> RunResult:
    """A run as a scorer reads it (its last ending; an unended run as incomplete)."""
    if _ended(events):
        return from_log(run_id, events, None)
    return RunResult(run_id=run_id, final_output=None, status=INCOMPLETE, events=events)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
