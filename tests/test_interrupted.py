"""Calls whose outcome an interruption hid, in process: a run stopped while a tool that asks
(`on_interrupt="ask"`) runs leaves its `tool_start` without a result; a resume pauses the run
without running the call, and a person runs it again, gives the result it had, or tells the
model it failed, from code or from the `agentor` command. What may not be decided is refused,
writing nothing. A tool that reruns (the default for function tools) is simply run again.

(Real processes SIGKILLed while such a call is in flight: tests/test_mcp_crash.py.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentor import (
    Agentor,
    InvalidResultError,
    NotRequestedError,
    approve,
    function_tool,
    pending_calls,
    reject,
)
from agentor.engine.events import APPROVAL, TOOL_RESULT, TOOL_START
from agentor.engine.interrupted import OUTCOME_UNKNOWN
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.approvalkit import summary
from tests.conftest import ROOT

AGENTOR = Path(sys.executable).parent / "agentor"
RUN = "letters-1"


class Letters:
    """An agent whose async `send_letter` holds its first call until `release` is set; `ran`
    lists each call's recipient. The model asks for one letter (`asks`), then sums up."""

    def __init__(self, store: Any, **tool_kw: Any) -> None:
        self.ran: list[str] = []
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        tool_kw.setdefault("on_interrupt", "ask")

        @function_tool(**tool_kw)
        async def send_letter(to: str) -> str:
            """Send a letter.

            Args:
                to: Who gets it.
            """
            self.ran.append(to)
            if len(self.ran) == 1:
                self.started.set()
                await self.release.wait()
            return f"a letter went to {to}"

        self.asks: dict[str, Any] = {"to": "ann"}
        self.model = ScriptedModel(self.reply)
        self.agent = Agentor("Letters", model=self.model, tools=[send_letter], store=store)

    def reply(self, messages: list[dict[str, Any]]) -> Any:
        if messages[-1]["role"] == "tool":
            return summary(messages)
        return self.model.calls(("send_letter", self.asks))

    async def interrupted(self) -> None:
        """Start the run and stop it while its first call runs (as `x` or ^C would)."""
        task = asyncio.ensure_future(self.agent.arun("Send the letter.", run_id=RUN))
        await self.started.wait()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def paused(tmp_path: Path, **tool_kw: Any) -> tuple[Letters, FileStore]:
    store = FileStore(tmp_path / "runs")
    letters = Letters(store, **tool_kw)
    await letters.interrupted()
    assert store.load(RUN)[-1].type == TOOL_START  # started, no result
    result = await letters.agent.aresume(RUN)
    assert result.status == AWAITING_APPROVAL
    return letters, store


@pytest.mark.parametrize("decision", ["approve", "result", "reject"])
async def test_a_call_stopped_while_it_ran_waits_for_a_person_and_goes_as_decided(
    tmp_path, decision
):
    letters, store = await paused(tmp_path)
    [call] = pending_calls(store.load(RUN))
    assert (call.interrupted, call.reason) == (True, OUTCOME_UNKNOWN)
    assert (call.pid, call.host) == (os.getpid(), socket.gethostname())
    assert letters.ran == ["ann"], "the resume did not run it"

    if decision == "approve":
        approve(store, RUN, call.call_id, by="alice")
    elif decision == "result":
        approve(store, RUN, call.call_id, by="alice", result="it went, by hand")
    else:
        reject(store, RUN, call.call_id, by="alice", reason="it may have gone")
    letters.release.set()
    done = await letters.agent.aresume(RUN)

    told = {
        "approve": "a letter went to ann",
        "result": "it went, by hand",
        "reject": "Error: rejected by alice: it may have gone",
    }[decision]
    assert (done.status, done.final_output) == (COMPLETED, told)
    assert letters.ran == (["ann", "ann"] if decision == "approve" else ["ann"])
    [result] = [e for e in store.load(RUN) if e.type == TOOL_RESULT]
    assert result.by == ("alice" if decision == "result" else None)


async def test_what_may_not_be_decided_is_refused_and_nothing_is_written(tmp_path):
    store = FileStore(tmp_path / "runs")
    letters = Letters(store)
    await letters.interrupted()
    before = store.path(RUN).read_bytes()
    [start] = [e for e in store.load(RUN) if e.type == TOOL_START]
    for call_id in (start.call_id, None):  # not asked about yet, named or not
        with pytest.raises(NotRequestedError, match="interrupted while running: resume the"):
            approve(store, RUN, call_id, result="done")

    await letters.agent.aresume(RUN)
    call_id = pending_calls(store.load(RUN))[0].call_id
    asked = store.path(RUN).read_bytes()
    with pytest.raises(InvalidResultError, match=r"either args .* or result"):
        approve(store, RUN, call_id, args={"to": "bo"}, result="done")
    with pytest.raises(InvalidResultError, match="a JSON value is needed"):
        approve(store, RUN, call_id, result=object())
    assert store.path(RUN).read_bytes() == asked
    assert before == asked[: len(before)]

    gated = Letters(FileStore(tmp_path / "gated"), needs_approval=True)
    waiting = await gated.agent.arun("Send it.")
    with pytest.raises(InvalidResultError, match="did not run: only a call interrupted"):
        approve(gated.agent.store, waiting.run_id, result="done")
    assert [e.type for e in gated.agent.store.load(waiting.run_id)].count(APPROVAL) == 0


async def test_an_approved_call_stopped_while_it_ran_asks_again_and_runs_as_it_ran(tmp_path):
    """A person approved one side effect, not two: a gated call asks by default; approved
    again, it runs with the arguments it ran with (an edit kept)."""
    store = FileStore(tmp_path / "runs")
    letters = Letters(store, needs_approval=True, on_interrupt=None)
    first = await letters.agent.arun("Send it.", run_id=RUN)
    approve(store, RUN, first.pending[0].call_id, args={"to": "bo"})
    resumed = asyncio.ensure_future(letters.agent.aresume(RUN))
    await letters.started.wait()
    resumed.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await resumed

    again = await letters.agent.aresume(RUN)
    assert again.status == AWAITING_APPROVAL
    [call] = again.pending
    assert call.interrupted and call.args == {"to": "bo"}
    approve(store, RUN, call.call_id)
    letters.release.set()
    done = await letters.agent.aresume(RUN)
    assert (done.final_output, letters.ran) == ("a letter went to bo", ["bo", "bo"])


@pytest.mark.parametrize("tool_kw", [{"on_interrupt": None}, {"on_interrupt": "rerun"}])
async def test_a_tool_that_reruns_is_run_again_without_a_person(tmp_path, tool_kw):
    store = FileStore(tmp_path / "runs")
    letters = Letters(store, **tool_kw)
    await letters.interrupted()
    assert TOOL_START not in [e.type for e in store.load(RUN)]

    letters.release.set()
    done = await letters.agent.aresume(RUN)
    assert (done.status, letters.ran) == (COMPLETED, ["ann", "ann"])


def agentor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENTOR), *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


async def test_from_the_shell_show_says_what_ran_and_approve_gives_the_result_it_had(tmp_path):
    letters, store = await paused(tmp_path)
    runs = str(tmp_path / "runs")
    [call] = pending_calls(store.load(RUN))

    shown = agentor("show", RUN, "--dir", runs)
    assert shown.returncode == 0, shown.stderr
    assert f"{OUTCOME_UNKNOWN}: started " in shown.stdout
    assert f"in process {os.getpid()} on {socket.gethostname()}" in shown.stdout
    assert f"agentor approve {RUN} CALL --result TEXT" in shown.stdout

    both = agentor("approve", RUN, "--dir", runs, "--result", "x", "--args", "{}")
    assert (both.returncode, both.stdout) == (2, "")
    assert "give either args" in both.stderr and len(both.stderr.splitlines()) == 1

    given = agentor("approve", RUN, call.call_id, "--dir", runs, "--result", "sent, by hand")
    assert given.returncode == 0, given.stderr
    assert "with the result it had: sent, by hand" in given.stdout
    done = await letters.agent.aresume(RUN)
    assert (done.final_output, letters.ran) == ("sent, by hand", ["ann"])
    timeline = agentor("show", RUN, "--dir", runs).stdout
    assert "send_letter → sent, by hand  (given by" in timeline
