"""`Approver`: a person's decisions on gated tool calls, taken in the approvals pane, and the
news that a run waits for one.

A decision is recorded at once, in a worker thread (`approve` / `reject` are sync and may wait
up to 2 s for the run's lock), through the source's own store (`RunSource.resume_store`, the
store a resume here writes to), so it works whatever the source is. The engine refuses what
cannot be recorded (decided already: it says by whom and when; timed out; held by a live
process; gone): each refusal is a notice quoting it. Once every call of the run is decided the
run goes on: the `Resumer` resumes it here, live, when an --agent serves it; else the notice
says how to continue.

A run that starts awaiting approval while the app is open is announced: a notice, and the
terminal's bell, once per pause (a run that pauses again at a later turn is announced again).
Runs already waiting when the app starts are not news: the list's title counts them.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import work
from textual.message import Message

from agentor import ApprovalError, Decision, RunLockedError, RunNotFoundError, Tool
from agentor import approve as approve_call
from agentor import reject as reject_call
from agentor.agents import AgentSet
from agentor.engine.approval.pending import pending_calls
from agentor.engine.argschema import check_schema
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.api import Store
from agentor.engine.store.holding import load_run
from agentor.errors import ToolArgumentsError
from agentor.sources.gated import GatedCall, waiting_calls
from agentor.sources.source import Changes, RunSource
from tui.controllers.controller import Controller
from tui.controllers.resumer import Resumer
from tui.text import notices
from tui.text.formatting import short_id

# What a decision can run into besides the engine's refusals (`ApprovalError`).
REFUSALS = (ApprovalError, RunNotFoundError, RunLockedError, ValueError, OSError)


class Approver(Controller):
    @dataclass
    class Decided(Message):
        """The run's log holds decisions this app may not have read (recorded here, or by
        whoever was first when one here was refused): read it again."""

        run_id: str

    def __init__(
        self, source: RunSource, agents: AgentSet, resumer: Resumer, by: str | None = None
    ) -> None:
        super().__init__()
        self.source = source
        self.agents = agents
        self.resumer = resumer
        self.by = by  # who decides (None: the engine's `user@host`)
        self.announced: set[str] = set()  # runs awaiting approval: announced, or so at start

    @functools.cached_property
    def store(self) -> Store:
        """The source's store. A decision holds a run for a moment, which is no resume: the
        hook that tells a resume has taken a run is left silent."""
        return self.source.resume_store(lambda run_id: None)

    # -- news ----------------------------------------------------------------------------------

    def start(self) -> None:
        """The first scan is done: the runs awaiting approval now are not news."""
        self.announced = {r.run_id for r in self.source.rows() if r.status == AWAITING_APPROVAL}

    def runs_changed(self, changes: Changes) -> None:
        """Announce the runs that have just started waiting for a decision."""
        self.announced -= changes.removed
        for run_id in sorted(changes.added | changes.updated):
            row = self.source.get(run_id)
            if row is None or row.status != AWAITING_APPROVAL:
                self.announced.discard(run_id)  # a later pause is news again
            elif run_id not in self.announced:
                self.announced.add(run_id)
                waiting = waiting_calls(self.source, run_id, time.time())
                names = [g.call.name for g in waiting] or ["a call"]
                interrupted = [g.call.name for g in waiting if g.call.interrupted]
                self.say(notices.awaiting(run_id, names, interrupted))

    # -- deciding ------------------------------------------------------------------------------

    def serves(self, run_id: str) -> bool:
        """Whether an --agent here resumes the run (`r`), once every call is decided."""
        row = self.source.get(run_id)
        return (
            row is not None
            and self.agents.for_run(row.summary.agent if row.summary else None) is not None
        )

    def tools_for(self, run_id: str) -> list[Tool]:
        """The tools of the --agent that serves the run (none: edits are checked against the
        schema the run recorded instead)."""
        row = self.source.get(run_id)
        agent = self.agents.for_run(row.summary.agent if row and row.summary else None)
        return list(agent.tools) if agent is not None else []

    def validator(self, run_id: str, gated: GatedCall) -> Callable[[dict[str, Any]], str | None]:
        """What an edit of `gated`'s arguments is checked with: the tool itself when an agent
        here has it, else the parameters the run recorded as offered to the model."""
        tool = next((t for t in self.tools_for(run_id) if t.name == gated.call.name), None)

        def check(args: dict[str, Any]) -> str | None:
            if tool is None:
                return check_schema(args, gated.parameters)
            try:
                tool.parse_args(args)
            except ToolArgumentsError as exc:
                return str(exc)
            return None

        return check

    def decide(
        self,
        run_id: str,
        call_id: str | None,
        approve: bool,
        args: dict[str, Any] | None = None,
        note: str | None = None,
        result: Any = None,
    ) -> None:
        """Record a decision (`call_id` None: on every call that waits); `note` is a
        rejection's reason; `result`, the result an interrupted call had."""
        self._decide(run_id, call_id, approve, args, note, result)

    @work(group="decide", exit_on_error=False)
    async def _decide(
        self,
        run_id: str,
        call_id: str | None,
        approve: bool,
        args: dict[str, Any] | None,
        note: str | None,
        result: Any = None,
    ) -> None:
        try:
            made, left = await asyncio.to_thread(
                self._record, run_id, call_id, approve, args, note, result
            )
        except REFUSALS as exc:
            self.report(self.Decided(run_id))
            self.say(notices.not_recorded(exc))
            return
        except Exception as exc:  # not a refusal: a failing store, say
            self.report(self.Decided(run_id))
            self.say(notices.deciding_failed(run_id, exc))
            return
        self.report(self.Decided(run_id))
        self.say(notices.decided(run_id, made, left, "" if left else self._go_on(run_id)))

    def _record(
        self,
        run_id: str,
        call_id: str | None,
        approve: bool,
        args: dict[str, Any] | None,
        note: str | None,
        result: Any = None,
    ) -> tuple[list[Decision], int]:
        """In a thread: the decisions recorded, and how many calls of the run still wait."""
        if approve:
            tools = self.tools_for(run_id)
            made = approve_call(
                self.store,
                run_id,
                call_id,
                args=args,
                by=self.by,
                note=note,
                tools=tools,
                result=result,
            )
        else:
            made = reject_call(self.store, run_id, call_id, reason=note or "", by=self.by)
        return made, len(pending_calls(load_run(self.store, run_id), time.time()))

    def _go_on(self, run_id: str) -> str:
        """Every call of the run is decided: resume it here when an agent serves it, else
        say how it goes on."""
        row = self.source.get(run_id)
        if row is None or not self.serves(run_id):
            return notices.continue_elsewhere(run_id, "no --agent here serves this run")
        if self.resumer.running:
            busy = short_id(self.resumer.run_id or "")
            return notices.continue_elsewhere(run_id, f"a resume of {busy} runs here now")
        self.resumer.start(row)
        return notices.resuming_after_approval()
