"""`Worker`: find runs that are incomplete and held by nobody, claim each, finish it; up to
`concurrency` at a time, until stopped.

What a worker takes: runs of one of its agents' names (the name on the run's first
`run_start`) that are incomplete (crashed, stopped, or submitted and never started), or paused
for approval with every call decided, and with `retry_failed` failed or max_turns ones too;
never a run with a call waiting for a decision, a completed one, nor one the fleet gave up on
(agentor.fleet.claims). Claiming is resuming: the engine's lock on the run is the claim, so two
workers never run one run, and a run that another worker took first is simply passed over.

Each of the worker's agents is a clone writing through a `ClaimingStore` (agentor.fleet.claims:
the claim and release events, the count of attempts that died, giving up) and asking a
`StoppableModel` (agentor.fleet.stopping: `stop()` lets every run finish its turn and start no
new one; `abort()` cancels them). Runs are found by a finder (agentor.fleet.finders) when it
wakes the worker, and every `poll_interval` seconds, which is how runs freed by a worker that
died are found.

What happens is told to `report` as `Report`s, in the event loop's thread.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from agentor.agent import Agentor
from agentor.agents import AgentSet
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.api import Store
from agentor.errors import NothingToResumeError, RunLockedError, RunLostError, RunNotFoundError
from agentor.fleet.claims import MAX_ATTEMPTS, ClaimingStore, Claims, Wanted, _GaveUp, _NotClaimed
from agentor.fleet.finders import WAKE_GAP, Candidate, finder_for
from agentor.fleet.stopping import StoppableModel, _StopBeforeTurn
from agentor.result import RunResult

log = logging.getLogger("agentor")

POLL_INTERVAL = 1.0  # seconds between looks that nothing woke (a dead worker's runs)
SKIP_FOR = 30.0  # seconds a run found not to be taken is passed over, unless it changes

# What a Report says happened.
CLAIMED = "claimed"
FINISHED = "finished"  # the resume returned: completed, awaiting approval, failed, max_turns
STOPPED = "stopped"  # left interrupted: the worker was stopping
GAVE_UP = "gave-up"
LOST = "lost"  # another process took the run while this one ran it (fencing)
SKIPPED = "skipped"  # taken by another worker first, or not this worker's to run
ERROR = "error"
STOPPING = "stopping"


@dataclass(frozen=True)
class Report:
    kind: str
    run_id: str | None
    text: str


class Worker:
    """See the module. `agents` are matched to runs by name (unique names); `name` is how the
    worker signs its claims (default `host:pid`)."""

    def __init__(
        self,
        store: Store,
        agents: Iterable[Agentor],
        *,
        concurrency: int = 4,
        retry_failed: bool = False,
        max_attempts: int = MAX_ATTEMPTS,
        poll_interval: float = POLL_INTERVAL,
        name: str | None = None,
        report: Callable[[Report], None] | None = None,
    ) -> None:
        agents = list(agents)
        names = [a.name for a in agents]
        if not agents:
            raise ValueError("a worker needs at least one agent")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"two agents are named {dup[0]!r}: runs are matched to agents by name")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if not poll_interval > 0:
            raise ValueError("poll_interval must be more than 0 seconds")
        self.stopping = threading.Event()
        self.claims = Claims(
            Wanted(frozenset(names), retry_failed),
            max_attempts,
            stopping=self.stopping,
            on_claim=self._on_claim,
        )
        if name is not None:
            self.claims.worker = name
        claiming = ClaimingStore(store, self.claims)
        self.agents = AgentSet(
            a.clone(store=claiming, model=StoppableModel(a.model, self.stopping)) for a in agents
        )
        self.finder = finder_for(store, self.claims.wanted)
        self.concurrency = concurrency
        self.poll_interval = poll_interval
        self.report = report or (lambda r: None)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._skipped: dict[str, tuple[object, float]] = {}  # run id -> (mark, until)
        self._attempt_of: dict[str, int] = {}  # runs claimed and running -> attempt
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()  # look for runs: something changed, or a slot is free
        self._freed = asyncio.Event()  # a slot is free, or stopping
        self._slot_free = threading.Event()  # for the finder's thread: wakes are wanted
        self._slot_free.set()

    @property
    def name(self) -> str:
        return self.claims.worker

    @property
    def running(self) -> list[str]:
        return list(self._tasks)

    # -- control (any thread) ------------------------------------------------------------------

    def stop(self) -> None:
        """Take no new run; let each run finish its turn (see agentor.fleet.stopping); `run`
        returns once they all have."""
        if not self.stopping.is_set():
            self.stopping.set()
            self._call(self._stopping)

    def abort(self) -> None:
        """Stop now: cancel every run (a running tool's thread is still waited for)."""
        self.stopping.set()
        self._call(self._cancel_all)

    def _call(self, fn: Callable[[], None]) -> None:
        if self._loop is None:
            return
        try:
            self._loop.call_soon_threadsafe(fn)
        except RuntimeError:  # the loop is closed: nothing runs any more
            pass

    # -- the loop ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve until `stop()` (or `abort()`), then wait for the runs in hand. It sets the
        loop's default executor (threads for saves, locks and sync tools of every run)."""
        loop = self._loop = asyncio.get_running_loop()
        loop.set_default_executor(
            ThreadPoolExecutor(self.concurrency * 4 + 4, thread_name_prefix="agentor-worker")
        )
        self._wake.set()  # look at once
        watch_stop = threading.Event()
        watcher = threading.Thread(
            target=self.finder.watch,
            args=(self._woken_from_thread, watch_stop, self._slot_free),
            name="agentor-worker-watch",
            daemon=True,
        )
        watcher.start()
        try:
            await self._serve()
            while self._tasks:
                await asyncio.wait(set(self._tasks.values()))
        finally:
            watch_stop.set()
            for agent in self.agents.agents:
                close = getattr(agent.model, "aclose", None)
                if close is not None:
                    await close()
            await asyncio.to_thread(watcher.join, 5.0)

    async def _serve(self) -> None:
        next_look = 0.0
        last_look = float("-inf")
        while not self.stopping.is_set():
            if len(self._tasks) >= self.concurrency:
                self._wake.clear()  # a slot freed makes it look anyway
                self._slot_free.clear()  # so the finder may rest meanwhile
                await self._freed.wait()
                self._freed.clear()
                self._slot_free.set()
                continue
            now = time.monotonic()
            if not self._wake.is_set() and now < next_look:
                await _wait(self._wake, next_look - now)
                continue
            if now - last_look < WAKE_GAP:  # a burst of changes: one look per gap
                await asyncio.sleep(WAKE_GAP - (now - last_look))
                continue
            self._wake.clear()
            last_look = time.monotonic()
            next_look = last_look + self.poll_interval
            await self._look()

    async def _look(self) -> None:
        free = self.concurrency - len(self._tasks)
        try:
            found = await asyncio.to_thread(
                self.finder.candidates, free * 4 + len(self._skipped) + len(self._tasks)
            )
        except Exception as exc:  # a store that cannot be read now: say so, try again later
            self._say(ERROR, None, f"cannot look for runs: {_one_line(exc)}")
            return
        now = time.monotonic()
        fresh = [c for c in found if c.run_id not in self._tasks and not self._passed(c, now)]
        # Workers looking at once see the same runs: each tries them in an order of its own
        # (rendezvous hashing), so they rarely reach for the same run.
        fresh = fresh[: free * 4]
        fresh.sort(key=lambda c: hashlib.blake2b(f"{self.name}/{c.run_id}".encode()).digest())
        for c in fresh[:free]:
            if self.stopping.is_set():
                return
            task = asyncio.create_task(self._attempt(c))
            self._tasks[c.run_id] = task
            task.add_done_callback(functools.partial(self._task_done, c.run_id))

    def _passed(self, c: Candidate, now: float) -> bool:
        skipped = self._skipped.get(c.run_id)
        if skipped is None:
            return False
        if skipped[0] == c.mark and now < skipped[1]:
            return True
        del self._skipped[c.run_id]
        return False

    async def _attempt(self, c: Candidate) -> None:
        agent = self.agents.for_run(c.agent)
        assert agent is not None  # claims take only runs of these agents' names
        try:
            result = await agent.aresume(c.run_id)
        except _StopBeforeTurn:
            self._say(STOPPED, c.run_id, "left interrupted at the end of a turn, for any worker")
        except asyncio.CancelledError:
            self._say(STOPPED, c.run_id, "stopped at once; left interrupted")
            raise
        except (_NotClaimed, RunLockedError) as exc:
            # Another worker was first, or finished it, or it changed meanwhile: nothing to say.
            self._skip(c, str(exc), quiet=True)
        except _GaveUp as exc:
            self._say(GAVE_UP, c.run_id, exc.error)
        except RunLostError as exc:
            self._say(LOST, c.run_id, f"{exc}; whoever holds it now goes on")
        except (NothingToResumeError, RunNotFoundError) as exc:
            self._skip(c, str(exc))
        except Exception as exc:
            log.warning("run %s: the resume raised", c.run_id, exc_info=True)
            self._skip(c, f"the resume raised {type(exc).__name__}: {_one_line(exc)}")
        else:
            if self._attempt_of.get(c.run_id) is None:  # finished before it could be claimed
                self._skip(c, f"already {result.status}", quiet=True)
            else:
                self._say(FINISHED, c.run_id, _ending(result))
        finally:
            self._attempt_of.pop(c.run_id, None)

    # -- happenings ----------------------------------------------------------------------------

    def _on_claim(self, run_id: str, attempt: int) -> None:
        """From the thread that took the lock (agentor.fleet.claims)."""
        self._attempt_of[run_id] = attempt
        self._call(lambda: self._say(CLAIMED, run_id, f"attempt {attempt}"))

    def _skip(self, c: Candidate, why: str, quiet: bool = False) -> None:
        self._skipped[c.run_id] = (c.mark, time.monotonic() + SKIP_FOR)
        if not quiet:
            self._say(SKIPPED, c.run_id, why)

    def _say(self, kind: str, run_id: str | None, text: str) -> None:
        try:
            self.report(Report(kind, run_id, text))
        except Exception:  # a report that fails must not stop the worker
            log.exception("the worker's report failed")

    def _task_done(self, run_id: str, _: asyncio.Task[None]) -> None:
        self._done(run_id)

    def _done(self, run_id: str) -> None:
        self._tasks.pop(run_id, None)
        self._freed.set()
        self._wake.set()

    def _woken_from_thread(self, changed: set[str] | None) -> None:
        self._call(lambda: self._woken(changed))

    def _woken(self, changed: set[str] | None) -> None:
        for run_id in changed or ():
            self._skipped.pop(run_id, None)  # it changed: worth a look again
        self._wake.set()

    def _stopping(self) -> None:
        n = len(self._tasks)
        runs = "no run" if n == 0 else ("1 run" if n == 1 else f"{n} runs")
        self._say(STOPPING, None, f"{runs} in hand: each finishes its turn, no new one starts")
        self._freed.set()
        self._wake.set()

    def _cancel_all(self) -> None:
        self._freed.set()
        self._wake.set()
        for task in self._tasks.values():
            task.cancel()


async def _wait(event: asyncio.Event, timeout: float) -> None:
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except TimeoutError:
        pass


def _ending(result: RunResult) -> str:
    if result.status == COMPLETED:
        said = COMPLETED
    elif result.status == AWAITING_APPROVAL:
        n = len(result.pending)
        said = f"waiting for a decision on {n} call{'s' if n != 1 else ''}"
    else:
        said = f"{result.status}: {result.error or 'no error recorded'}"
    if result.save_failures:  # logged on the agentor logger, each one
        said += f" ({result.save_failures} saves failed: the log may lack steps)"
    return said


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300] or type(exc).__name__
