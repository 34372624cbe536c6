"""A call whose outcome a crash hid is never repeated without a person: the agent process is
SIGKILLed while an MCP call is in flight (the server has received it: it notes every call it
gets, then holds this one), or while a function tool with `on_interrupt="ask"` runs. A resume
in a new process pauses the run ("interrupted while running: outcome unknown") without
running the call; each of the three decisions then does what it says, and the call was
received exactly as many times as decided. And a tool list that changed between a crash and
the resume is said once, the model getting the list as it is now.

Real processes (`tests.mcpkit` children forked from a zygote), the real openai client against
`tests.openai_server.FakeOpenAI`, a real MCP server over Streamable HTTP on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.approval.pending import pending_calls
from agentor.engine.events import TOOL_RESULT, TOOL_START
from agentor.engine.interrupted import OUTCOME_UNKNOWN
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.file import FileStore
from tests import crashkit, mcpkit
from tests.openai_server import FakeOpenAI

DECISIONS = ["approve", "result", "reject"]
# What the model is told the call did, by decision (`{to}`: the recipient).
TOLD = {
    "approve": "{sent}",
    "result": "delivered (checked by hand)",
    "reject": "Error: rejected by alice: it may have gone: do not retry",
}
# How many times the call was received (or run) in all, by decision.
TIMES = {"approve": 2, "result": 1, "reject": 1}


@pytest.fixture(scope="module")
def srv():
    with FakeOpenAI(mcpkit.script) as server:
        yield server


@pytest.fixture(scope="module")
def zygote():
    z = crashkit.Zygote("tests.mcpkit")
    yield z
    z.close()


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    """One MCP server for the module; each case sends to a recipient of its own."""
    cfg = mcpkit.server_config(tmp_path_factory.mktemp("mcp"), "remote")
    cfg["hang"] = cfg["calls"] + ".hang"
    with mcpkit.HttpToolServer(cfg) as server:
        yield server


class Case:
    """One run of the sender agent: its directory, its children."""

    def __init__(self, tmp_path: Path, srv: FakeOpenAI, zygote: crashkit.Zygote, **cfg: Any):
        self.runs = tmp_path / "runs"
        self.out = tmp_path / "out.json"
        self.srv, self.zygote = srv, zygote
        self.cfg = {"dir": str(self.runs), "url": srv.url, "out": str(self.out), **cfg}
        self.run_id = ""

    def fork(self, action: str, **cfg: Any) -> int:
        self.out.unlink(missing_ok=True)
        return self.zygote.fork({**self.cfg, "action": action, "run_id": self.run_id, **cfg})

    def child(self, action: str, **cfg: Any) -> dict[str, Any]:
        self.fork(action, **cfg)
        sig = self.zygote.wait()
        if sig == signal.SIGKILL:
            return {"killed": True}
        assert sig is None, f"the child died of signal {sig}"
        return json.loads(self.out.read_text())

    def events(self) -> list[Any]:
        return FileStore(self.runs).load(self.run_id)


def kill_in_flight(case: Case, received: Any) -> int:
    """Start the run, SIGKILL the child once `received()` says the call arrived; its pid."""
    pid = case.fork("start")
    crashkit.wait_for(received, timeout=60, what="the call to be received")
    os.kill(pid, signal.SIGKILL)
    assert case.zygote.wait() == signal.SIGKILL
    case.run_id = crashkit.only_run(case.runs)
    return pid


def check_paused(case: Case, pid: int, name: str, server: str | None) -> str:
    """The resume paused the run without running the call; the call's id."""
    paused = case.child("resume")
    assert paused["status"] == AWAITING_APPROVAL, paused
    [call] = pending_calls(case.events())
    assert paused["pending"] == [call.call_id]
    assert call.interrupted and call.reason == OUTCOME_UNKNOWN
    assert (call.name, call.server, call.pid, call.host) == (
        name,
        server,
        pid,
        socket.gethostname(),
    )
    [start] = [e for e in case.events() if e.type == TOOL_START]
    assert call.started_at == start.ts
    # A resume while it waits does nothing more: no second request, nothing run.
    again = case.child("resume")
    assert again["status"] == AWAITING_APPROVAL
    assert len(pending_calls(case.events())) == 1
    return call.call_id


def check_decided(case: Case, decision: str, name: str, sent: str) -> None:
    done = case.child("resume")
    assert done["status"] == COMPLETED, done
    told = TOLD[decision].format(sent=sent)
    assert done["final_output"] == f"done: {told}"
    [result] = [e for e in case.events() if e.type == TOOL_RESULT]
    assert result.name == name
    if decision == "result":
        assert (result.result, result.by) == ("delivered (checked by hand)", "alice")
    if decision == "reject":
        assert result.error == "rejected by alice: it may have gone: do not retry"


@pytest.mark.parametrize("decision", DECISIONS)
def test_killed_while_an_mcp_call_is_in_flight_a_person_decides_what_it_did(
    tmp_path, srv, zygote, remote, decision
):
    to = f"mcp-{decision}"
    case = Case(tmp_path, srv, zygote, to=to, mcp_url=remote.url)
    sends = lambda: [c for c in mcpkit.calls(remote.cfg, "send") if c["args"] == {"to": to}]  # noqa: E731
    pid = kill_in_flight(case, sends)
    assert len(sends()) == 1 and case.events()[-1].type == TOOL_START

    call_id = check_paused(case, pid, "send", "remote")
    assert len(sends()) == 1, "the resume did not send it again"

    mcpkit.decide(str(case.runs), case.run_id, call_id, decision)
    check_decided(case, decision, "send", f"sent to {to}")
    assert len(sends()) == TIMES[decision]


@pytest.mark.parametrize("decision", DECISIONS)
def test_killed_inside_a_function_tool_that_asks_a_person_decides_what_it_did(
    tmp_path, srv, zygote, decision
):
    to = f"fn-{decision}"
    letters = tmp_path / "letters.log"
    started = tmp_path / "started"
    case = Case(tmp_path, srv, zygote, to=to, letters=str(letters), started=str(started))
    pid = kill_in_flight(case, started.exists)
    sent = lambda: crashkit.tool_runs(letters)[f"send_letter {to}"]  # noqa: E731
    assert sent() == 1

    call_id = check_paused(case, pid, "send_letter", None)
    assert sent() == 1, "the resume did not run it again"

    mcpkit.decide(str(case.runs), case.run_id, call_id, decision)
    check_decided(case, decision, "send_letter", f"a letter went to {to}")
    assert sent() == TIMES[decision]


def test_a_tool_list_changed_between_the_crash_and_the_resume_is_said_once(tmp_path, srv, zygote):
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(["add", "echo", "fail"]))
    cfg = mcpkit.server_config(tmp_path, "changing", tools_file=str(tools_file))
    with mcpkit.HttpToolServer(cfg) as server:
        case = Case(tmp_path, srv, zygote, to="nobody", mcp_url=server.url)
        # run_start, generation, tool_call, tool_start, tool_result: killed after add's result
        assert case.child("start", kill_after=5) == {"killed": True}
        case.run_id = crashkit.only_run(case.runs)
        assert case.events()[-1].type == TOOL_RESULT and mcpkit.calls(cfg, "add")

        tools_file.write_text(json.dumps(["add+c", "echo"]))  # add changed; fail gone (unused)
        done = case.child("resume")
        assert done["status"] == COMPLETED and done["final_output"] == "done: 5"
        starts = [e for e in case.events() if e.type == "run_start"]
        assert [s.mcp[0].get("changed", None) for s in starts] == [
            None,
            [{"name": "add", "change": "schema changed"}],
        ]
        offered = {t["function"]["name"]: t for t in srv.requests[-1]["tools"]}
        assert sorted(offered) == ["add", "echo"]  # as the server lists them now
        assert "c" in offered["add"]["function"]["parameters"]["properties"]
        assert len(mcpkit.calls(cfg, "add")) == 1  # its recorded result was not run again
