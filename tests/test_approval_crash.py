"""Approval across real processes (real openai client, FakeOpenAI): SIGKILL at every event from
the request to the result, and racing deciders.

A gated call never runs before its decision is recorded; after it is recorded, a resume in a
new process runs an approved call once (once more only if the process died inside the tool,
before its result was saved) and never again once its result is recorded; a rejected call
never runs. Children are forked from a pre-imported zygote (tests/approvalkit.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.approval.pending import pending_calls
from agentor.engine.events import APPROVAL, RUN_START, TOOL_RESULT, TOOL_START
from agentor.engine.history import status
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.file import FileStore
from tests import approvalkit, crashkit
from tests.approvalkit import EVENTS, answer
from tests.openai_server import FakeOpenAI

pytestmark = pytest.mark.slow

HOTEL = "book_hotel Rome"


@pytest.fixture(scope="module")
def srv():
    with FakeOpenAI(approvalkit.script) as server:
        yield server


@pytest.fixture(scope="module")
def zygote():
    z = crashkit.Zygote("tests.approvalkit")
    yield z
    z.close()


class Case:
    """One run's directory, tool log and children."""

    def __init__(self, tmp_path: Path, srv: FakeOpenAI, zygote: crashkit.Zygote) -> None:
        self.runs = tmp_path / "runs"
        self.tool_log = tmp_path / "tools.log"
        self.out = tmp_path / "out.json"
        self.srv = srv
        self.zygote = zygote
        self.run_id = ""

    def child(self, action: str, kill_after: int | None = None, **cfg: Any) -> dict[str, Any]:
        """Run `action` in a new child; its outcome ({"killed": True} if it was SIGKILLed)."""
        self.out.unlink(missing_ok=True)
        sig = self.zygote.run(
            {
                "dir": str(self.runs),
                "url": self.srv.url,
                "action": action,
                "run_id": self.run_id,
                "kill_after": kill_after,
                "tool_log": str(self.tool_log),
                "out": str(self.out),
                **cfg,
            }
        )
        if sig == signal.SIGKILL:
            return {"killed": True}
        assert sig is None, f"the child died of signal {sig}"
        return json.loads(self.out.read_text())

    def start(self, kill_after: int | None = None) -> dict[str, Any]:
        outcome = self.child("start", kill_after)
        self.run_id = crashkit.only_run(self.runs)
        return outcome

    def events(self) -> list[Any]:
        events, bad = FileStore(self.runs).load_with_errors(self.run_id)
        assert bad == []
        return events

    def log_bytes(self) -> bytes:
        return FileStore(self.runs).path(self.run_id).read_bytes()

    def ran(self) -> dict[str, int]:
        return dict(crashkit.tool_runs(self.tool_log))


def decided_results(events: list[Any], name: str) -> list[Any]:
    return [e for e in events if e.type == TOOL_RESULT and e.name == name]


START_CASES = list(range(1, EVENTS["start"] + 1))


@pytest.mark.parametrize("k", START_CASES, ids=[f"k{k}" for k in START_CASES])
def test_killed_at_any_event_of_a_gated_start_the_call_waits_and_then_runs_once(
    tmp_path, srv, zygote, k
):
    case = Case(tmp_path, srv, zygote)
    assert case.start(kill_after=k) == {"killed": True}
    before = case.log_bytes()
    assert HOTEL not in case.ran(), "a gated call never runs before its approval"

    # Another process brings the run to its pause (a rewind asks the model again when the
    # request was not saved yet) and then reports it waiting, writing nothing.
    paused = case.child("resume")
    assert paused["status"] == AWAITING_APPROVAL and len(paused["pending"]) == 1
    assert case.log_bytes().startswith(before)
    assert HOTEL not in case.ran()
    paused_log = case.log_bytes()
    assert case.child("resume")["status"] == AWAITING_APPROVAL
    assert case.log_bytes() == paused_log, "a resume with an undecided call writes nothing"

    assert case.child("approve", by="alice")["by"] == "alice"
    done = case.child("resume")

    assert (done["status"], done["final_output"]) == (COMPLETED, answer("Booked a room in Rome."))
    assert case.ran() == {HOTEL: 1, "get_weather Rome": 1}
    assert case.log_bytes().startswith(paused_log)


RESUME_CASES = [
    (decision, k)
    for decision in ("approve", "edit", "reject")
    for k in range(1, EVENTS["resume"] + (0 if decision == "reject" else 1))
]


@pytest.mark.parametrize(
    ("decision", "k"), RESUME_CASES, ids=[f"{d}-k{k}" for d, k in RESUME_CASES]
)
def test_killed_at_any_event_after_the_decision_the_call_runs_once_as_decided(
    tmp_path, srv, zygote, decision, k
):
    case = Case(tmp_path, srv, zygote)
    assert case.start()["status"] == AWAITING_APPROVAL
    if decision == "reject":
        case.child("reject", reason="too dear", by="bob")
    else:
        edit = {"city": "Milan"} if decision == "edit" else None
        case.child("approve", by="alice", args=edit)
    city = "Milan" if decision == "edit" else "Rome"
    decided = case.log_bytes()

    assert case.child("resume", kill_after=k) == {"killed": True}
    crashed = case.events()
    recorded = decided_results(crashed, "book_hotel")
    ran_before = case.ran().get(f"book_hotel {city}", 0)
    interrupted = crashed[-1].type == TOOL_START  # its start saved, its result not

    done = case.child("resume")  # a new process finishes it
    if interrupted:  # what it did is unknown: a person says; run it again, here
        assert done["status"] == AWAITING_APPROVAL
        assert pending_calls(case.events())[0].interrupted
        assert case.ran().get(f"book_hotel {city}", 0) == ran_before
        case.child("approve", by="carol")
        done = case.child("resume")

    hotel = {
        "approve": "Booked a room in Rome.",
        "edit": "Booked a room in Milan.",
        "reject": "Error: rejected by bob: too dear",
    }[decision]
    assert (done["status"], done["final_output"]) == (COMPLETED, answer(hotel))
    assert case.log_bytes().startswith(decided)
    runs = case.ran().get(f"book_hotel {city}", 0)
    if decision == "reject":
        assert runs == 0, "a rejected call never runs"
    elif recorded:
        assert runs == ran_before == 1, "a call whose result was recorded never runs again"
    else:
        # Killed before its result was saved: run once more (only if it ran before the kill).
        assert runs == ran_before + 1
    assert "book_hotel Rome" not in case.ran() or decision == "approve"
    events = case.events()
    assert len(decided_results(events, "book_hotel")) == 1
    assert [e.type for e in events].count(APPROVAL) == (2 if interrupted else 1)


def test_killed_right_after_the_decision_is_recorded_the_resume_runs_the_call_once(
    tmp_path, srv, zygote
):
    case = Case(tmp_path, srv, zygote)
    case.start()
    assert case.child("approve", kill_after=1, by="alice") == {"killed": True}
    assert [e.type for e in case.events()][-1] == APPROVAL
    assert HOTEL not in case.ran()

    done = case.child("resume")

    assert done["status"] == COMPLETED and case.ran()[HOTEL] == 1


def test_killed_inside_the_approved_tool_the_resume_asks_again_then_runs_it_again(
    tmp_path, srv, zygote
):
    case = Case(tmp_path, srv, zygote)
    case.start()
    case.child("approve", by="alice")
    started = tmp_path / "started"
    pid = zygote.fork(
        {
            "dir": str(case.runs),
            "url": srv.url,
            "action": "resume",
            "run_id": case.run_id,
            "tool_log": str(case.tool_log),
            "hang_on": "Rome",
            "tool_started": str(started),
        }
    )
    crashkit.wait_for(started.exists, what="the approved tool to start")
    os.kill(pid, signal.SIGKILL)
    assert zygote.wait() == signal.SIGKILL
    assert decided_results(case.events(), "book_hotel") == []

    paused = case.child("resume")  # a person approved one booking, not two: ask again
    assert paused["status"] == AWAITING_APPROVAL and case.ran()[HOTEL] == 1
    [call] = pending_calls(case.events())
    assert call.interrupted and call.pid == pid

    case.child("approve", by="alice")
    done = case.child("resume")

    assert done["status"] == COMPLETED and case.ran()[HOTEL] == 2
    assert len(decided_results(case.events(), "book_hotel")) == 1


def test_four_processes_approving_one_call_at_once_record_exactly_one_decision(
    tmp_path, srv, zygote
):
    case = Case(tmp_path, srv, zygote)
    case.start()
    [call] = pending_calls(case.events())
    barrier = tmp_path / "go"
    procs = []
    for i in range(4):
        cfg = {
            "dir": str(case.runs),
            "action": "approve",
            "run_id": case.run_id,
            "call_id": call.call_id,
            "by": f"approver-{i}",
            "ready": str(tmp_path / f"ready{i}"),
            "barrier": str(barrier),
            "tried": str(tmp_path / f"tried{i}"),
            "out": str(tmp_path / f"out{i}.json"),
        }
        procs.append(_spawn(cfg))
    try:
        crashkit.wait_for(
            lambda: all((tmp_path / f"ready{i}").exists() for i in range(4)),
            timeout=60,
            what="four deciders to be ready",
        )
        # Held here until all four have read the log and wait for the run: each of them saw
        # the call pending, so only reading it again under the lock can tell them apart.
        with FileStore(case.runs).lock(case.run_id):
            barrier.touch()  # all four decide at the same moment
            crashkit.wait_for(
                lambda: all((tmp_path / f"tried{i}").exists() for i in range(4)),
                what="four deciders to wait for the run",
            )
        codes = [p.wait(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert codes == [0, 0, 0, 0]

    outs = [json.loads((tmp_path / f"out{i}.json").read_text()) for i in range(4)]
    winners = [o for o in outs if "error" not in o]
    assert len(winners) == 1, outs
    losers = [o for o in outs if "error" in o]
    for o in losers:
        assert o["error"] == "AlreadyDecidedError", o
        assert o["by"] == winners[0]["by"], "the refusal names who decided"
        assert f"already approved by {winners[0]['by']}" in o["message"]
    approvals = [e for e in case.events() if e.type == APPROVAL]
    assert len(approvals) == 1 and approvals[0].by == winners[0]["by"]
    assert status(case.events()) == AWAITING_APPROVAL
    assert [e.type for e in case.events()].count(RUN_START) == 1


def _spawn(cfg: dict[str, Any]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.approvalkit", "child", json.dumps(cfg)],
        cwd=crashkit.ROOT,
        env=crashkit.child_env(),
        stdin=subprocess.DEVNULL,
    )
