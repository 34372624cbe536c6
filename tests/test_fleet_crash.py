"""The worker fleet in real processes, on a FileStore and on a PostgresStore: a worker
SIGKILLed after any event of a run is replaced by another that finishes it; four workers on one
interrupted run, one proceeds; a run whose tool kills its worker every time is given up after
3 attempts; SIGTERM lets a worker's runs finish their turn. The kit: tests/fleetkit.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.events import CLAIM, RELEASE, RUN_END, Event
from agentor.engine.history import segments, status
from agentor.engine.log.format import LogEncoder
from agentor.engine.statuses import COMPLETED, FAILED, INCOMPLETE
from agentor.engine.store.api import Store
from tests import crashkit, fleetkit
from tests.crashkit import WEATHER_ANSWER, WEATHER_PROMPT, Zygote
from tests.fleetkit import Place, file_lines, reports

AGENTOR = Path(sys.executable).parent / "agentor"
KEYS = {"get_weather London", "get_weather Paris"}
# The events a worker writes for the parallel run, one a write (fleetkit's killing store):
# claim, run_start, generation, tool_call x2, tool_result x2, generation, message, run_end.
WORKER_EVENTS = 10
POLL = ("--poll", "0.1")


@pytest.fixture(params=["file", "postgres"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Place:
    if request.param == "file":
        (tmp_path / "runs").mkdir()
        return Place(directory=str(tmp_path / "runs"))
    pg = request.getfixturevalue("pg_stores")
    return Place(dsn=pg.dsn, schema=pg.schema)


@pytest.fixture
def zygotes() -> Iterator[Callable[[], Zygote]]:
    made: list[Zygote] = []

    def make() -> Zygote:
        made.append(Zygote("tests.fleetkit"))
        return made[-1]

    yield make
    for zygote in made:
        zygote.close()


def lines(events: list[Event]) -> list[bytes]:
    encoder = LogEncoder(compact=False)
    return [encoder.encode(e) for e in events]


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: str = "it") -> Any:
    return crashkit.wait_for(check, timeout, what)


def of(store: Store, run_id: str, kind: str) -> list[Event]:
    return [e for e in store.load(run_id) if e.type == kind]


# -- SIGKILL ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_worker_killed_after_any_event_of_a_run_is_replaced_by_one_that_finishes_it(
    place: Place, tmp_path: Path, zygotes: Callable[[], Zygote]
) -> None:
    killer, finisher = zygotes(), zygotes()
    store = place.open()
    submitter = fleetkit.weather_agent(store, {})
    for k in range(1, WORKER_EVENTS + 1):
        run_id = f"k{k}"
        tools, out, looks = (str(tmp_path / f"{name}{k}") for name in ("tools", "out", "looks"))
        submitter.submit(WEATHER_PROMPT, run_id=run_id)
        killer.fork({**place.cfg(), "kill_after": k, "tool_log": tools})
        # Another worker is already running when the first dies: it finds the run freed.
        wait_for(lambda: of(store, run_id, CLAIM), what="the first worker's claim")  # noqa: B023
        other = finisher.fork({**place.cfg(), "tool_log": tools, "out": out, "looks": looks})
        assert killer.wait() == signal.SIGKILL
        # What the killed worker left: the submitted run_start and its k events (the other
        # worker may have appended after them by now).
        prefix = store.load(run_id)[: 1 + k]
        recorded = crashkit.recorded_results(prefix)
        seen = len(file_lines(looks))
        wait_for(
            lambda: status(store.load(run_id)) == COMPLETED and len(file_lines(looks)) > seen,  # noqa: B023
            what=f"the run killed after event {k} to be finished",
        )
        os.kill(other, signal.SIGTERM)
        assert finisher.wait() is None, "the other worker stops cleanly"
        finishing = reports(out)

        events = store.load(run_id)
        assert lines(events[: 1 + k]) == lines(prefix), "nothing lost, nothing rewritten"
        assert [e.type for e in events[1 + k :]][:1] in ([CLAIM], []), "the other's comes next"
        assert [e.type for e in events].count(RUN_END) == 1
        assert events[-1].type == RUN_END and events[-1].text == WEATHER_ANSWER
        for segment in segments(events):  # nothing recorded twice in a segment
            answered = [e.call_id for e in segment if e.type == "tool_result"]
            assert len(answered) == len(set(answered))
            assert [e.type for e in segment].count("message") <= 1
        runs = crashkit.tool_runs(tools)
        assert set(runs) == KEYS
        for key in recorded:
            assert runs[key] == 1, f"killed after event {k}: {key} was recorded, never run again"
        claims = [e.extra.get("attempt") for e in events if e.type == CLAIM]
        if k < WORKER_EVENTS:
            assert claims == [1, 2], "the killed worker's attempt counts as one that died"
            assert [r["kind"] for r in finishing] == ["claimed", "finished"]
            assert finishing[1]["text"] == COMPLETED
        else:
            assert claims == [1] and finishing == [], "a finished run is left alone"


# -- a race --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_four_workers_on_one_interrupted_run_exactly_one_proceeds(
    place: Place, tmp_path: Path, zygotes: Callable[[], Zygote]
) -> None:
    store = place.open()
    run_id = fleetkit.weather_agent(store, {}).submit(WEATHER_PROMPT)
    tools = str(tmp_path / "tools")
    # Killed once its two calls are recorded, before either ran: interrupted.
    assert zygotes().run({**place.cfg(), "kill_after": 5, "tool_log": tools}) == signal.SIGKILL
    assert status(store.load(run_id)) == INCOMPLETE and crashkit.tool_runs(tools) == {}

    gate, barrier = tmp_path / "gate", tmp_path / "go"
    procs, outs, looks = [], [], []
    for i in range(4):
        outs.append(str(tmp_path / f"out{i}"))
        looks.append(str(tmp_path / f"looks{i}"))
        cfg = {
            **place.cfg(),
            "tool_log": tools,
            "out": outs[i],
            "looks": looks[i],
            "ready": str(tmp_path / f"ready{i}"),
            "barrier": str(barrier),
            "model_gate": str(gate),  # the winner holds the run until the others looked
            "poll": 0.05,
        }
        procs.append(fleetkit.spawn(cfg))
    try:
        wait_for(lambda: all((tmp_path / f"ready{i}").exists() for i in range(4)), 60)
        barrier.touch()  # all four look at the same moment
        wait_for(lambda: claims(outs), what="a claim")
        winner = next(o for o in outs if any(r["kind"] == "claimed" for r in reports(o)))
        for i, looked in enumerate(looks):  # each other looks twice more: it had its chance
            if outs[i] != winner:
                seen = len(file_lines(looked))
                wait_for(
                    lambda: len(file_lines(looked)) >= seen + 2 or claims(outs),  # noqa: B023
                    what="a look",
                )
                assert len(claims(outs)) == 1, f"a second worker proceeds: {claims(outs)}"
        gate.touch()
        wait_for(lambda: status(store.load(run_id)) == COMPLETED, what="the run to complete")
        for p in procs:
            p.send_signal(signal.SIGTERM)
        assert [p.wait(timeout=30) for p in procs] == [0, 0, 0, 0]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert len(claims(outs)) == 1 and reports(winner)[0]["kind"] == "claimed", "one proceeds"
    others = [r for o in outs if o != winner for r in reports(o)]
    assert others == [], "the others found it held, or taken and finished: they say nothing"
    assert [e.extra.get("attempt") for e in of(store, run_id, CLAIM)] == [1, 2]
    assert crashkit.tool_runs(tools) == dict.fromkeys(KEYS, 1), "no tool ran twice"
    assert store.load(run_id)[-1].text == WEATHER_ANSWER


def claims(outs: list[str]) -> list[dict[str, Any]]:
    return [r for o in outs for r in reports(o) if r["kind"] == "claimed"]


# -- a poison run --------------------------------------------------------------------------------


def worker_cli(place: Place, tmp_path: Path, name: str, agent: str, **env: str) -> Any:
    """`agentor worker` in a fresh process, its output in tmp_path/<name>."""
    out = open(tmp_path / name, "w")  # noqa: SIM115 (closed with the process by the test)
    proc = subprocess.Popen(
        [str(AGENTOR), "worker", "--agent", f"tests/fleetkit.py:{agent}", *place.cli(), *POLL],
        cwd=crashkit.ROOT,
        env={**crashkit.child_env(), **fleetkit.agent_env(**env)},
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    out.close()
    return proc


def output(tmp_path: Path, name: str) -> list[str]:
    return file_lines(tmp_path / name)


@pytest.mark.slow
def test_a_run_that_kills_its_worker_every_time_is_given_up_after_three_attempts(
    place: Place, tmp_path: Path
) -> None:
    store = place.open()
    # One city: one call a turn, so each attempt runs the tool once (and dies of it).
    run_id = fleetkit.poison().clone(store=store).submit("What is the weather in London?")
    tools = str(tmp_path / "tools")
    procs = [worker_cli(place, tmp_path, f"w{i}", "poison", tool_log=tools) for i in (1, 2)]
    try:
        # Two workers at once: the one left finds the run its fellow died on, and dies too.
        assert sorted(p.wait(timeout=60) for p in procs) == [-signal.SIGKILL] * 2
        procs.append(worker_cli(place, tmp_path, "w3", "poison", tool_log=tools))
        assert procs[-1].wait(timeout=60) == -signal.SIGKILL
        assert len(file_lines(tools)) == 3
        last = worker_cli(place, tmp_path, "w4", "poison", tool_log=tools)
        procs.append(last)
        wait_for(lambda: status(store.load(run_id)) == FAILED, what="the run to be given up")
        wait_for(lambda: any(" gave-up " in line for line in output(tmp_path, "w4")))
        assert last.poll() is None, "the worker that gave up lives on"
        last.send_signal(signal.SIGTERM)
        assert last.wait(timeout=30) == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    end = store.load(run_id)[-1]
    assert end.type == RUN_END and end.status == FAILED
    assert end.error is not None and end.error.startswith("gave up after 3 attempts: ")
    assert [e.extra.get("attempt") for e in of(store, run_id, CLAIM)] == [1, 2, 3]
    assert file_lines(tools) == ["get_weather London"] * 3, "the fourth one did not run it"
    gave_up = [line for line in output(tmp_path, "w4") if " gave-up " in line]
    assert gave_up and f"gave-up   {run_id}  gave up after 3 attempts" in gave_up[0]


# -- SIGTERM -------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("during", ["tool", "model call"])
def test_sigterm_lets_each_run_finish_its_turn_and_leaves_it_for_the_next_worker(
    place: Place, tmp_path: Path, during: str
) -> None:
    store = place.open()
    run_id = fleetkit.weather_agent(store, {}).submit(WEATHER_PROMPT)
    files = {n: str(tmp_path / n) for n in ("tools", "models", "started", "release", "gate")}
    env = {"tool_log": files["tools"], "model_log": files["models"]}
    if during == "tool":
        env.update(hang_on="Paris", tool_started=files["started"], release=files["release"])
    else:
        env.update(model_gate=files["gate"], model_started=files["started"])
    proc = worker_cli(place, tmp_path, "w1", "parallel", **env)
    try:
        wait_for(lambda: os.path.exists(files["started"]), what=f"the {during} to start")
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: any(" stopping " in line for line in output(tmp_path, "w1")))
        assert proc.poll() is None, f"the {during} in flight is waited for"
        Path(files["release" if during == "tool" else "gate"]).touch()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    said = output(tmp_path, "w1")
    assert any(f"stopped   {run_id}  left interrupted" in line for line in said), said
    assert said[-1].endswith("  stopped")
    events = store.load(run_id)
    assert [e.type for e in events[-4:]] == ["tool_call", "tool_result", "tool_result", RELEASE]
    assert events[-1].note == "the worker is stopping: it let the run go"
    assert file_lines(files["models"]) == ["generate"], "no new turn was started"
    assert crashkit.tool_runs(files["tools"]) == dict.fromkeys(KEYS, 1), "the turn was finished"
    assert status(events) == INCOMPLETE and not store.is_locked(run_id)  # type: ignore[attr-defined]

    # The next worker finishes it from there: the model once more, no tool again.
    nxt = worker_cli(place, tmp_path, "w2", "parallel", **env)
    try:
        wait_for(lambda: status(store.load(run_id)) == COMPLETED, what="the next worker")
        nxt.send_signal(signal.SIGTERM)
        assert nxt.wait(timeout=30) == 0
    finally:
        if nxt.poll() is None:
            nxt.kill()
            nxt.wait()
    assert file_lines(files["models"]) == ["generate", "generate"]
    assert crashkit.tool_runs(files["tools"]) == dict.fromkeys(KEYS, 1)
    assert [e.extra.get("attempt") for e in of(store, run_id, CLAIM)] == [1, 1]
