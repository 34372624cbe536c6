"""The worker fleet in one process: what `Agentor.submit` records, which runs a worker takes
and which it leaves alone, how fast it wakes, how it counts the attempts that died. Each
worker test runs on a FileStore and on a PostgresStore. (Real processes killed and stopped:
tests/test_fleet_crash.py.)"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, approve, function_tool
from agentor.engine.events import CLAIM, RELEASE, RUN_END, RUN_START, Event
from agentor.engine.history import RunSummary, fold, status
from agentor.engine.log.format import LogEncoder
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED, FAILED, MAX_TURNS
from agentor.engine.store.api import Store
from agentor.engine.store.file import LOCK_PATIENCE, FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.errors import RunLockedError
from agentor.fleet.claims import GAVE_UP, ClaimingStore, Claims, Wanted, attempts
from agentor.fleet.worker import CLAIMED, FINISHED, LOST, Report, Worker
from agentor.testing import ScriptedModel
from tests.approvalkit import TRAVEL_PROMPT, Travel
from tests.pg_support import PgStores

SYSTEM = {"role": "system", "content": "You are a careful assistant."}


@pytest.fixture(params=["file", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "file":
        yield FileStore(tmp_path / "runs")
    else:
        yield request.getfixturevalue("pg_stores")()


def lines(events: list[Event]) -> list[bytes]:
    encoder = LogEncoder(compact=False)
    return [encoder.encode(e) for e in events]


class Served:
    """A worker running in this event loop; counts its looks for runs and keeps its reports."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.looks = 0
        self.reports: list[Report] = []
        worker.report = self.reports.append
        looking = worker.finder.candidates

        def counted(limit: int) -> Any:
            found = looking(limit)
            self.looks += 1
            return found

        worker.finder.candidates = counted  # type: ignore[method-assign]

    def of(self, kind: str) -> list[str | None]:
        return [r.run_id for r in self.reports if r.kind == kind]

    async def looked_again(self) -> None:
        """Wait until the worker has looked for runs twice more: whatever it would take, it
        has had the chance to."""
        seen = self.looks
        await until(lambda: self.looks >= seen + 2, what="the worker to look again")


@contextlib.asynccontextmanager
async def serving(store: Store, agents: list[Agentor], **kw: Any) -> AsyncIterator[Served]:
    kw.setdefault("poll_interval", 0.1)
    served = Served(Worker(store, agents, **kw))
    task = asyncio.create_task(served.worker.run())
    try:
        yield served
    finally:
        served.worker.stop()
        await asyncio.wait_for(task, 30)


async def until(check: Callable[[], Any], timeout: float = 15.0, what: str = "it") -> Any:
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)
    return value


def by_hand(store: Store, run_id: str, *events: Event, agent: str = "Travel Agent") -> None:
    """A run written directly: a run_start with the travel prompt, then `events`."""
    start = Event(
        RUN_START,
        run_id=run_id,
        agent=agent,
        model="scripted",
        messages=[{"role": "user", "content": TRAVEL_PROMPT}],
        ts=time.time(),
    )
    store.append_many(run_id, [start, *events])


# -- submit --------------------------------------------------------------------------------------


def test_submit_records_a_run_start_alone_and_a_second_submit_of_the_same_input_writes_nothing(
    store: Store,
) -> None:
    travel = Travel(store)
    run_id = travel.agent.submit(TRAVEL_PROMPT)
    events = store.load(run_id)
    assert [e.type for e in events] == [RUN_START]
    start = events[0]
    assert (start.run_id, start.agent, start.model) == (run_id, "Travel Agent", "scripted")
    assert start.messages == [{"role": "user", "content": TRAVEL_PROMPT}]
    assert [t["function"]["name"] for t in start.tools or []] == ["book_hotel", "get_weather"]
    assert travel.model.requests == [], "submitting never calls the model"

    assert travel.agent.submit(TRAVEL_PROMPT, run_id=run_id) == run_id
    assert lines(store.load(run_id)) == lines(events)
    with pytest.raises(ValueError, match="started with a different input"):
        travel.agent.submit("Something else", run_id=run_id)
    assert lines(store.load(run_id)) == lines(events)

    assert travel.agent.submit(TRAVEL_PROMPT, run_id="job-42") == "job-42"
    assert [e.type for e in store.load("job-42")] == [RUN_START]


def test_submit_refuses_bad_input_a_bad_run_id_and_an_agent_without_a_store() -> None:
    store = MemoryStore()
    agent = Travel(store).agent
    with pytest.raises(TypeError, match="input must be"):
        agent.submit(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid run id"):
        agent.submit("hi", run_id="../etc")
    with pytest.raises(ValueError, match="submit needs a store"):
        agent.clone(store=None).submit("hi")
    assert store.list_runs() == []


# -- which runs a worker takes -------------------------------------------------------------------


async def test_a_worker_takes_free_incomplete_and_decided_runs_and_leaves_every_other_alone(
    store: Store,
) -> None:
    gated = Travel(store)
    plain = Travel(store, gate=False)
    submitted = gated.agent.submit(TRAVEL_PROMPT)
    undecided = (await gated.agent.arun(TRAVEL_PROMPT)).run_id
    decided = (await gated.agent.arun(TRAVEL_PROMPT)).run_id
    approve(store, decided, by="alice")
    completed = (await plain.agent.arun(TRAVEL_PROMPT)).run_id
    by_hand(store, "failed", Event(RUN_END, status=FAILED, error="boom", ts=time.time()))
    by_hand(store, "maxed", Event(RUN_END, status=MAX_TURNS, ts=time.time()))
    by_hand(store, "given-up", Event(RUN_END, status=FAILED, error="gave up", extra={GAVE_UP: 3}))
    by_hand(store, "others", agent="Someone Else")  # incomplete, of another agent
    Agentor("Other Agent", model=ScriptedModel([]), store=store).submit("Hi", run_id="theirs")
    store.append("no-prompt", Event("message", text="a log with no run_start"))
    before = {r: lines(store.load(r)) for r in store.list_runs()}
    worker_agent = Travel(store).agent  # a new process would load its own agent

    async with serving(store, [worker_agent]) as served:
        await until(lambda: status(store.load(decided)) == COMPLETED, what="the decided run")
        await until(lambda: status(store.load(submitted)) == AWAITING_APPROVAL, what="submitted")
        await served.looked_again()
    assert sorted(served.of(CLAIMED)) == sorted([submitted, decided])
    assert sorted(served.of(FINISHED)) == sorted([submitted, decided])
    for run_id in set(before) - {submitted, decided}:
        assert lines(store.load(run_id)) == before[run_id], f"{run_id} was left alone"
    assert [e.extra.get("attempt") for e in store.load(decided) if e.type == CLAIM] == [1]

    # --retry-failed: failed and max_turns runs too, never one the fleet gave up on.
    async with serving(store, [Travel(store).agent], retry_failed=True) as served:
        await until(lambda: len(served.of(FINISHED)) >= 2, what="the failed runs")
        await served.looked_again()
    assert sorted(served.of(CLAIMED)) == ["failed", "maxed"]
    for run_id in ("given-up", "others", "theirs", "no-prompt", undecided, completed):
        assert lines(store.load(run_id)) == before[run_id], f"{run_id} was left alone"


async def test_a_run_of_another_agent_is_left_alone_and_several_agents_each_take_their_own(
    store: Store,
) -> None:
    travel = Travel(store, gate=False)
    other = travel.agent.clone(name="Other Agent")
    mine, theirs = travel.agent.submit(TRAVEL_PROMPT), other.submit(TRAVEL_PROMPT)
    async with serving(store, [Travel(store, gate=False).agent]) as served:
        await until(lambda: status(store.load(mine)) == COMPLETED, what="its own run")
        await served.looked_again()
    assert [e.type for e in store.load(theirs)] == [RUN_START]
    async with serving(store, [travel.agent, other]) as served:
        await until(lambda: status(store.load(theirs)) == COMPLETED, what="the other's run")
    assert served.of(CLAIMED) == [theirs]
    segment = [e for e in store.load(theirs) if e.type == RUN_START][-1]
    assert segment.agent == "Other Agent", "each run is resumed by the agent of its name"


def test_a_worker_refuses_agents_of_one_name_no_agent_and_a_store_that_does_not_lock() -> None:
    agent = Travel(MemoryStore()).agent
    with pytest.raises(ValueError, match="two agents are named 'Travel Agent'"):
        Worker(MemoryStore(), [agent, agent.clone()])
    with pytest.raises(ValueError, match="at least one agent"):
        Worker(MemoryStore(), [])
    with pytest.raises(ValueError, match="concurrency"):
        Worker(MemoryStore(), [agent], concurrency=0)

    class Unlocked:
        def append(self, run_id: str, event: Event) -> None: ...
        def load(self, run_id: str) -> list[Event]: ...
        def list_runs(self) -> list[str]: ...

    with pytest.raises(TypeError, match="a worker needs a store that locks runs"):
        Worker(Unlocked(), [agent])  # type: ignore[arg-type]


def test_a_run_held_when_the_worker_reaches_for_it_is_refused_at_once_and_nothing_written(
    store: Store, request: pytest.FixtureRequest
) -> None:
    run_id = Travel(store).agent.submit(TRAVEL_PROMPT)
    if isinstance(store, FileStore):
        other: Any = FileStore(store.directory)  # as another process opens it
    else:
        other = request.getfixturevalue("pg_stores")()
    claiming = ClaimingStore(store, Claims(Wanted(frozenset({"Travel Agent"}))))
    with other.lock(run_id):
        started = time.monotonic()
        with pytest.raises(RunLockedError), claiming.lock(run_id):
            pass
        assert time.monotonic() - started < LOCK_PATIENCE, "another worker was quicker: no wait"
    assert [e.type for e in store.load(run_id)] == [RUN_START]


async def test_a_worker_whose_database_session_is_cut_while_its_tool_runs_reports_the_run_lost(
    pg_stores: PgStores,
) -> None:
    store = pg_stores()
    started, go = threading.Event(), threading.Event()

    @function_tool
    def book_hotel(city: str, nights: int = 1) -> str:
        """Book a hotel room."""
        started.set()
        go.wait(30)
        return "booked"

    travel = Travel(store, gate=False)
    agent = travel.agent.clone(tools=[book_hotel, travel.agent.tools[1]])
    run_id = agent.submit(TRAVEL_PROMPT)
    async with serving(store, [agent]) as served:
        await until(started.is_set, what="the tool to start")
        assert pg_stores.terminate("lock") == 1  # the worker's hold ends with its session
        other = pg_stores()
        with other.lock(run_id):  # another process takes the run over at once
            other.append(run_id, Event("message", text="the new holder's"))
            go.set()
            await until(lambda: served.of(LOST), what="the worker to report the run lost")
            served.worker.stop()
    events = store.load(run_id)
    assert events[-1].text == "the new holder's", "the late result was refused: no interleaving"
    assert [e.type for e in events].count("tool_result") == 1  # get_weather's, before the cut
    assert next(r.text for r in served.reports if r.kind == LOST).startswith(
        f"run {run_id} was lost by this process"
    )
    assert len(travel.model.requests) == 1, "the worker never asked the model again"


# -- waking --------------------------------------------------------------------------------------


async def test_a_worker_is_woken_by_a_new_run_long_before_its_next_look(store: Store) -> None:
    travel = Travel(store, gate=False)
    async with serving(store, [Travel(store, gate=False).agent], poll_interval=60) as served:
        await until(lambda: served.looks >= 1, what="the first look")
        await asyncio.sleep(0.3)  # the watch (inotify, LISTEN) is set up by now
        submitted = time.monotonic()
        run_id = travel.agent.submit(TRAVEL_PROMPT)
        await until(lambda: status(store.load(run_id)) == COMPLETED, timeout=10, what="the run")
        took = time.monotonic() - submitted
    assert took < 10, "woken by the change, not by the next look a minute later"
    assert served.of(CLAIMED) == [run_id]


# -- counting attempts ---------------------------------------------------------------------------


def claim(n: int) -> Event:
    return Event(CLAIM, by="w", pid=n, host="h", ts=float(n), extra={"attempt": n})


def test_attempts_count_the_claims_that_neither_a_run_end_nor_a_release_followed() -> None:
    end = Event(RUN_END, status="awaiting_approval")
    release = Event(RELEASE, note="stopping")
    assert attempts([]).died == 0
    assert attempts([claim(1)]).died == 1  # read under the lock: its worker is gone
    assert attempts([claim(1), release]).died == 0
    assert attempts([claim(1), claim(2), claim(3)]).died == 3
    assert attempts([claim(1), claim(2), claim(3)]).last_died == claim(3)
    assert attempts([claim(1), release, claim(2), claim(3), release]).died == 1
    # A run that reached an end (a pause for approval, a failure retried) starts over.
    assert attempts([claim(1), claim(2), end, claim(3), release]).died == 0


def test_why_a_run_is_not_taken_is_said_from_its_log() -> None:
    wanted = Wanted(frozenset({"A"}))
    start = Event(RUN_START, agent="A", messages=[{"role": "user", "content": "hi"}])
    assert wanted.why_not([start]) is None
    assert wanted.why_not([Event("message")]) == "nothing to resume: no prompt recorded"
    assert wanted.why_not([start, Event(RUN_END, status=COMPLETED)]) == "completed"
    assert wanted.why_not([start, Event(RUN_END, status=FAILED)]) == "failed"
    assert (
        Wanted(frozenset({"A"}), retry_failed=True).why_not([start, Event(RUN_END, status=FAILED)])
        is None
    )
    other = Event(RUN_START, agent="B", messages=start.messages)
    assert "written by B" in (wanted.why_not([other]) or "")


def test_a_claim_after_a_crash_does_not_count_as_time_the_run_was_worked_on() -> None:
    crashed = [
        Event(RUN_START, agent="A", started_at=100.0, ts=100.0),
        Event("generation", turn=1, ts=101.0),
    ]
    later = [claim(1), Event(RUN_START, agent="A", started_at=500.0, ts=500.0)]
    later[0].ts = 499.0
    summary = fold(RunSummary(run_id="r"), [*crashed, *later, Event(RUN_END, ts=502.0)])
    assert summary.active_time() == pytest.approx(1.0 + 2.0)
