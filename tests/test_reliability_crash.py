"""Crashes: real child processes SIGKILLed at every step, then resumed by another process.

Children are forked from a pre-imported zygote (tests/crashkit.py); the resume runs in this
test process, which is a different process from the one that died.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from agentor import RunLockedError
from agentor.engine.events import GENERATION, MESSAGE, RUN_START, Event
from agentor.engine.history import status
from agentor.engine.statuses import COMPLETED, INCOMPLETE
from agentor.engine.store.file import FileStore
from tests import crashkit
from tests.crashkit import ANSWERS, EVENT_COUNTS
from tests.openai_server import FakeOpenAI

pytestmark = pytest.mark.slow

EXECUTION_KEYS = {
    "parallel": {"get_weather London", "get_weather Paris"},
    "three_turn": {"step 1", "step 2"},
}


@pytest.fixture(scope="module")
def script():
    return crashkit.Script()


@pytest.fixture(scope="module")
def srv(script):
    with FakeOpenAI(script) as server:
        yield server


@pytest.fixture(scope="module")
def zygote():
    z = crashkit.Zygote()
    yield z
    z.close()


def child_cfg(tmp_path: Path, srv: FakeOpenAI, scenario: str, **extra) -> dict:
    cfg = {
        "dir": str(tmp_path / "runs"),
        "url": srv.url,
        "scenario": scenario,
        "action": "start",
        "tool_log": str(tmp_path / "tools.log"),
        "out": str(tmp_path / "out.json"),
    }
    cfg.update(extra)
    return cfg


def assert_not_held(directory: Path, run_id: str) -> None:
    store = FileStore(directory)
    assert store.is_locked(run_id) is False
    assert store.lock_holder(run_id) is None


async def resume_here(directory: Path, scenario: str, srv: FakeOpenAI, tool_log: Path):
    agent = crashkit.build_agent(scenario, FileStore(directory), srv.url, str(tool_log))
    run_id = crashkit.only_run(directory)
    return await agent.aresume(run_id)


CASES = [(s, k) for s in ("parallel", "three_turn") for k in range(1, EVENT_COUNTS[s] + 1)]


@pytest.mark.parametrize(("scenario", "k"), CASES, ids=[f"{s}-k{k}" for s, k in CASES])
async def test_kill_after_every_event_then_resume(tmp_path, srv, zygote, scenario, k):
    cfg = child_cfg(tmp_path, srv, scenario, kill_after=k)
    runs, tool_log = Path(cfg["dir"]), Path(cfg["tool_log"])

    assert zygote.run(cfg) == signal.SIGKILL
    run_id = crashkit.only_run(runs)
    path = FileStore(runs).path(run_id)
    before = path.read_bytes()
    events, bad = FileStore(runs).load_with_errors(run_id)
    assert (len(events), bad) == (k, []), "exactly the k durable events are on disk"
    finished = k == EVENT_COUNTS[scenario]
    assert status(events) == (COMPLETED if finished else INCOMPLETE)
    assert_not_held(runs, run_id)  # the kernel freed the dead process's lock
    ran_before = crashkit.tool_runs(tool_log)
    recorded = crashkit.recorded_results(events)
    requests_before = srv.calls

    result = await resume_here(runs, scenario, srv, tool_log)

    assert result.status == COMPLETED, result.error
    assert result.final_output == ANSWERS[scenario]
    after = path.read_bytes()
    assert after.startswith(before), "the bytes written before the crash are unchanged"
    all_events, bad = FileStore(runs).load_with_errors(run_id)
    assert bad == []
    assert [e.to_dict() for e in all_events[:k]] == [e.to_dict() for e in events]
    if finished:
        assert after == before and srv.calls == requests_before
    else:
        assert [e.type for e in all_events].count(RUN_START) == 2, "one new segment"
        assert all_events[k].type == RUN_START
    ran_after = crashkit.tool_runs(tool_log)
    assert set(ran_after) <= EXECUTION_KEYS[scenario]
    for key in EXECUTION_KEYS[scenario]:
        again = ran_after[key] - ran_before[key]
        if key in recorded:
            assert again == 0, f"{key} had a recorded result but ran again"
        else:
            assert again == 1, f"{key} must run exactly once on resume"
    assert_not_held(runs, run_id)


async def test_a_crashed_resume_is_resumed_again(tmp_path, srv, zygote):
    cfg = child_cfg(tmp_path, srv, "three_turn", kill_after=3)  # step 1 asked for, not run
    runs, tool_log = Path(cfg["dir"]), Path(cfg["tool_log"])
    assert zygote.run(cfg) == signal.SIGKILL
    run_id = crashkit.only_run(runs)
    first = FileStore(runs).path(run_id).read_bytes()

    # The resumer dies too, right after its step-1 result is durable (run_start, generation,
    # tool_call, tool_result).
    cfg.update(action="resume", run_id=run_id, kill_after=4)
    assert zygote.run(cfg) == signal.SIGKILL
    second = FileStore(runs).path(run_id).read_bytes()
    assert second.startswith(first)
    assert crashkit.tool_runs(tool_log)["step 1"] == 1

    result = await resume_here(runs, "three_turn", srv, tool_log)
    assert (result.status, result.final_output) == (COMPLETED, ANSWERS["three_turn"])
    assert FileStore(runs).path(run_id).read_bytes().startswith(second)
    assert crashkit.tool_runs(tool_log) == {"step 1": 1, "step 2": 1}
    assert [e.type for e in FileStore(runs).load(run_id)].count(RUN_START) == 3


async def test_kill_inside_a_tool_then_resume(tmp_path, srv, zygote):
    cfg = child_cfg(tmp_path, srv, "parallel", hang_on="Paris")
    cfg["tool_started"] = str(tmp_path / "started.log")
    runs, tool_log = Path(cfg["dir"]), Path(cfg["tool_log"])
    pid = zygote.fork(cfg)
    try:
        crashkit.wait_for(lambda: Path(cfg["tool_started"]).exists(), what="the tool to start")
        run_id = crashkit.wait_for(lambda: FileStore(runs).list_runs(), what="the log")[0]
        store = FileStore(runs)
        # London's tool returns at once: wait until its result is durable.
        crashkit.wait_for(
            lambda: "get_weather London" in crashkit.recorded_results(store.load(run_id)),
            what="London's result",
        )
        assert store.is_locked(run_id) is True, "a live run shows as held"
        assert store.lock_holder(run_id) == pid
    finally:
        os.kill(pid, signal.SIGKILL)
    assert zygote.wait() == signal.SIGKILL
    assert_not_held(runs, run_id)
    assert status(FileStore(runs).load(run_id)) == INCOMPLETE

    result = await resume_here(runs, "parallel", srv, tool_log)
    assert (result.status, result.final_output) == (COMPLETED, ANSWERS["parallel"])
    # London's recorded result answered the repeated call; Paris never finished, so it ran again.
    assert crashkit.tool_runs(tool_log) == {"get_weather London": 1, "get_weather Paris": 2}


async def test_a_run_stopped_inside_a_sync_tool_is_held_until_its_result_is_recorded(
    tmp_path, srv, zygote
):
    # The TUI's `x`, across processes: the child cancels its run's task while London's tool
    # thread runs. A thread cannot be interrupted, so the run must stay held (another process
    # is refused, naming the child) until the thread ends and its result is recorded; then a
    # resume in a new process replays that result instead of running the tool again.
    cfg = child_cfg(
        tmp_path,
        srv,
        "parallel",
        action="cancel_in_tool",
        hang_on="London",
        tool_started=str(tmp_path / "started.log"),
        release=str(tmp_path / "release"),
        cancelled=str(tmp_path / "cancelled"),
    )
    runs, tool_log = Path(cfg["dir"]), Path(cfg["tool_log"])
    pid = zygote.fork(cfg)
    try:
        crashkit.wait_for(lambda: Path(cfg["cancelled"]).exists(), what="the child's cancel")
        run_id = crashkit.only_run(runs)
        here = crashkit.build_agent("parallel", FileStore(runs), srv.url, str(tool_log))
        with pytest.raises(RunLockedError) as refused:
            await here.aresume(run_id)  # at once, while the tool thread still runs
        assert refused.value.pid == pid and f"process {pid}" in str(refused.value)
        assert "get_weather London" not in crashkit.recorded_results(FileStore(runs).load(run_id))
        assert FileStore(runs).lock_holder(run_id) == pid
    finally:
        Path(cfg["release"]).touch()
    assert zygote.wait() is None
    outcome = json.loads(Path(cfg["out"]).read_text())
    assert outcome == {"pid": pid, "ended": "cancelled"}
    events = FileStore(runs).load(run_id)
    assert events[-1].type == "tool_result" and events[-1].name == "get_weather"
    assert crashkit.recorded_results(events) == EXECUTION_KEYS["parallel"]
    assert_not_held(runs, run_id)

    cfg.update(action="resume", run_id=run_id, hang_on=None)
    assert zygote.run(cfg) is None  # a new process
    outcome = json.loads(Path(cfg["out"]).read_text())
    assert (outcome["status"], outcome["final_output"]) == (COMPLETED, ANSWERS["parallel"])
    assert crashkit.tool_runs(tool_log) == {"get_weather London": 1, "get_weather Paris": 1}


async def test_kill_while_the_model_request_is_in_flight(tmp_path, srv, script, zygote):
    cfg = child_cfg(tmp_path, srv, "parallel")
    runs, tool_log = Path(cfg["dir"]), Path(cfg["tool_log"])
    requests_before = srv.calls
    script.hang = 1
    pid = zygote.fork(cfg)
    try:
        crashkit.wait_for(lambda: srv.calls > requests_before, what="the model request")
    finally:
        os.kill(pid, signal.SIGKILL)
    assert zygote.wait() == signal.SIGKILL
    assert script.hang == 0
    run_id = crashkit.only_run(runs)
    assert [e.type for e in FileStore(runs).load(run_id)] == [RUN_START]
    assert_not_held(runs, run_id)

    result = await resume_here(runs, "parallel", srv, tool_log)
    assert (result.status, result.final_output) == (COMPLETED, ANSWERS["parallel"])
    assert crashkit.tool_runs(tool_log) == {"get_weather London": 1, "get_weather Paris": 1}


# -- torn writes -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three_turn_log(tmp_path_factory, srv):
    """A real three-turn log, as bytes."""
    import asyncio

    directory = tmp_path_factory.mktemp("three")
    agent = crashkit.build_agent("three_turn", FileStore(directory), srv.url)
    result = asyncio.run(agent.arun(crashkit.STEPS_PROMPT))
    assert result.status == COMPLETED
    return FileStore(directory).path(result.run_id).read_bytes()


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _cut_after_last(lines: list[bytes], kind: str) -> list[bytes]:
    """The lines up to and including the last one of type `kind`."""
    last = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == kind)
    return lines[: last + 1]


@pytest.mark.parametrize("last", [GENERATION, "run_end"])
def test_torn_last_line_at_every_byte_offset(tmp_path, three_turn_log, last, caplog):
    lines = _cut_after_last(_lines(three_turn_log), last)
    whole, victim = lines[:-1], lines[-1]
    if last == GENERATION:
        assert b'"messages_delta"' in victim, "the torn line is a compact generation"
    head = b"".join(whole)
    reference = FileStore(tmp_path / "ref")
    reference.path("r").write_bytes(b"".join(lines))
    full = reference.load("r")
    store_dir = tmp_path / "runs"
    for offset in range(1, len(victim)):
        store = FileStore(store_dir)
        path = store.path("r")
        path.write_bytes(head + victim[:offset])
        torn_aside = path.with_name(path.name + ".torn")
        torn_aside.unlink(missing_ok=True)

        events, bad = store.load_with_errors("r")
        only_newline_missing = offset == len(victim) - 1
        if only_newline_missing:
            # A complete object that lacks only its newline is a whole event.
            assert bad == []
            assert [e.to_dict() for e in events] == [e.to_dict() for e in full]
        else:
            assert [e.to_dict() for e in events] == [e.to_dict() for e in full[:-1]]
            assert len(bad) == 1 and "torn" in bad[0].reason, (offset, bad)
            assert bad[0].raw == victim[:offset]
            if offset == len(victim) // 2:
                caplog.clear()
                assert len(store.load("r")) == len(full) - 1
                [warning] = [r.getMessage() for r in caplog.records]
                assert f"skipped line {len(lines)}" in warning and "torn line" in warning

        # The next append (after a load, as resume does) leaves valid JSONL.
        prev = next(e for e in reversed(events) if e.type == GENERATION)
        follow_up = Event(
            GENERATION, turn=9, messages=[*prev.messages, {"role": "user", "content": "more"}]
        )
        store.append_many("r", [follow_up, Event(MESSAGE, text="after")])
        data = path.read_bytes()
        assert data.startswith(head)
        assert data.endswith(b"\n")
        for line in _lines(data):
            json.loads(line)
        again, bad = FileStore(store_dir).load_with_errors("r")
        assert bad == []
        kept = full if only_newline_missing else full[:-1]
        assert [e.to_dict() for e in again] == [
            e.to_dict() for e in [*kept, follow_up, Event(MESSAGE, text="after")]
        ], offset
        if not only_newline_missing:
            assert torn_aside.read_bytes() == victim[:offset] + b"\n"
