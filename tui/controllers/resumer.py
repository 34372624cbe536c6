"""`Resumer`: one-key resume. `r` resumes the selected run in this process (`aresume` in a
worker), its events streaming to the screen as they are recorded; `x`, or quitting, stops it
and leaves the run interrupted and resumable. Every refusal and every ending is a notice
(`tui.text.notices`).

A stop cancels the worker, but a sync tool's thread cannot be interrupted: the engine keeps the
run (its lock) until the thread has ended and its result is recorded, and tells us what it
waits for (`tool_wait`). Until then the run shows as *stopping*, `r` on it is refused, and
quitting waits too; a second `q` abandons the resume (the app's caller ends the process, and
the tool's result is lost: the next resume runs it again).

It reports by messages (`Started`, `Held`, `Progress`, `Stopping`, `Ended`, `Notice`); the
screen draws the stream line, the row's status and its redraws.
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass

from textual import work
from textual.message import Message
from textual.worker import Worker

from agentor import Agentor, NothingToResumeError, RunLockedError, RunResult
from agentor.agents import AgentSet
from agentor.engine.events import TOOL_RESULT, TOOL_WAIT, Event
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.api import Store
from agentor.sources.gated import waiting_calls
from agentor.sources.runrow import RunRow
from agentor.sources.source import RunSource
from tui.controllers.controller import Controller
from tui.text import notices


class Resumer(Controller):
    """The app's resume: one at a time, in a worker of its own."""

    @dataclass
    class Started(Message):
        """The resume's worker began: its events stream from now on."""

        run_id: str

    @dataclass
    class Held(Message):
        """The resume has taken its run's lock: the run is running from now on (its first
        step may take a while to be recorded)."""

        run_id: str

    @dataclass
    class Progress(Message):
        """An event of the resume, as it was recorded (or a transient text delta)."""

        run_id: str
        event: Event

    @dataclass
    class Stopping(Message):
        """The resume was stopped and is unwinding; `line` says what it waits for."""

        run_id: str
        line: str

    @dataclass
    class Ended(Message):
        """The resume is over and the run let go (lock released, tool results recorded);
        `unsaved`: some of its events could not be written; `quit`: the app goes now."""

        run_id: str
        unsaved: bool = False
        quit: bool = False

    def __init__(self, source: RunSource, agents: AgentSet) -> None:
        super().__init__()
        self.source = source
        self.agents = agents
        self.worker: Worker[None] | None = None
        self.run_id: str | None = None  # the run being resumed, while its worker runs
        self.started = False  # the worker's code has begun (its `finally` will run)
        self.stopping = False  # x or q: cancelled, and unwinding
        self.quitting = False  # q: the app goes once the resume has unwound
        # The tool calls (id -> name) a stopping run waits for, and those since recorded.
        self.waiting_for: dict[str, str] = {}
        self.recorded: set[str] = set()
        self._notice_due = False

    @functools.cached_property
    def store(self) -> Store:
        """Where resumes write: the source on screen (made on first use, not at start)."""
        return self.source.resume_store(lambda run_id: self.report(self.Held(run_id)))

    @property
    def running(self) -> bool:
        # A worker counts from when it is asked for, not from when it starts: two quick `r`s
        # must not replace a resume that has not begun yet.
        return self.worker is not None and not self.worker.is_finished

    # -- r -------------------------------------------------------------------------------------

    def start(self, row: RunRow | None) -> None:
        """Resume `row`'s run, or say why it cannot be resumed."""
        refusal = self._refusal(row)
        if refusal is not None:
            self.say(refusal)
            return
        assert row is not None
        name = row.summary.agent if row.summary else None
        agent = self.agents.for_run(name)
        if agent is None:
            self.say(notices.no_agent(self.agents.missing_hint(name)))
            return
        self.run_id = row.run_id
        self.started = self.stopping = self.quitting = False
        self.waiting_for, self.recorded = {}, set()
        self.worker = self._resume(row.run_id, self.agents.writing_to(agent, self.store))

    def _refusal(self, row: RunRow | None) -> notices.Note | None:
        if row is not None and self.running:
            reason = notices.stopping_reason(list(self.waiting_for.values()))
            stopping = reason if self.stopping else None
            return notices.one_at_a_time(row.run_id, self.run_id or "", stopping)
        if row is not None and row.status == AWAITING_APPROVAL:
            # A resume would only find the calls undecided and pause again.
            waiting = waiting_calls(self.source, row.run_id, time.time())
            if waiting:
                names = [g.call.name for g in waiting]
                interrupted = [g.call.name for g in waiting if g.call.interrupted]
                return notices.waits_for_approval(row.run_id, names, interrupted)
        return notices.cannot_resume(row)

    @work(group="resume", exclusive=True, exit_on_error=False)
    async def _resume(self, run_id: str, agent: Agentor) -> None:
        """`agent.aresume(run_id)`, reporting each event as it is recorded."""
        self.started = True
        if self.stopping:  # stopped before it began: nothing to unwind
            self._ended(run_id)
            raise asyncio.CancelledError
        self.report(self.Started(run_id))
        result: RunResult | None = None
        try:
            result = await agent.aresume(run_id, listener=functools.partial(self._heard, run_id))
        except asyncio.CancelledError:
            self.say(notices.stopped(run_id, self.waiting_for, self.recorded))
            raise
        except RunLockedError as exc:
            self.say(notices.locked(run_id, exc.pid, exc.host))
        except NothingToResumeError as exc:
            self.say(notices.nothing_to_resume(run_id, exc.reason))
        except KeyError:
            self.say(notices.gone(run_id, self.source.where))
        except Exception as exc:
            self.say(notices.failed(run_id, exc))
        else:
            if result.save_failures:
                # The ending is known here, but the log lacks steps: the row is marked for
                # the rest of the session (the file alone cannot tell).
                self.say(notices.unsaved(run_id, result.status, result.save_failures))
            else:
                output, error = result.final_output, result.error
                note = notices.finished(run_id, result.status, output, error)
                if note is not None:
                    self.say(note)
        finally:
            self._ended(run_id, unsaved=bool(result is not None and result.save_failures))

    def _heard(self, run_id: str, event: Event) -> None:
        """The engine's listener: an event was recorded (or a text delta streamed)."""
        if run_id == self.run_id and event.type in (TOOL_WAIT, TOOL_RESULT):
            # Told from the run's own task (the engine announces recorded events there).
            if event.type == TOOL_WAIT:
                self._waiting(event.call_id or f"#{len(self.waiting_for)}", event.name or "a tool")
                return
            if event.call_id in self.waiting_for:
                self.recorded.add(event.call_id)
        self.report(self.Progress(run_id, event))  # safe from any thread (a model's deltas)

    def _ended(self, run_id: str, unsaved: bool = False) -> None:
        """The worker is done: the run is let go (lock released, tool results recorded)."""
        quitting = self.quitting
        self.run_id = None
        self.stopping = self.quitting = False
        self.report(self.Ended(run_id, unsaved=unsaved, quit=quitting))

    # -- x and q -------------------------------------------------------------------------------

    def stop(self) -> None:
        """`x`: stop the resume in flight (at once, unless a tool thread must end first)."""
        if self.worker is None or not self.running:
            self.say(notices.NOTHING_TO_STOP)
            return
        if self.stopping:
            self._tell_waiting()  # asked again: say again what it waits for
            return
        self._stop()

    def quit_when_stopped(self) -> None:
        """`q` during a resume: stop it, and quit once it has unwound (`Ended.quit`)."""
        self.quitting = True
        if not self.stopping:
            self._stop()
        elif self.waiting_for:
            self._tell_waiting()
        self._show_stopping()

    def abandon(self) -> str:
        """A second `q` while the resume unwinds: the app goes now. The warning to print; the
        caller must end the process (the tool's thread would hold it)."""
        return notices.abandoned(self.run_id or "?", list(self.waiting_for.values()))

    def _stop(self) -> None:
        assert self.worker is not None and self.run_id is not None
        self.stopping = True
        if self.started:  # else `_resume` sees `stopping` when it begins, and ends at once
            self.worker.cancel()
        self._show_stopping()

    def _show_stopping(self) -> None:
        """The run shows *stopping*, and the line under the timeline what it waits for, until
        the resume has unwound."""
        if self.run_id is not None:
            line = notices.stopping_line(list(self.waiting_for.values()), self.quitting)
            self.report(self.Stopping(self.run_id, line))

    def _waiting(self, call_id: str, name: str) -> None:
        """The stopping run waits for this tool's thread: say so (once for a burst)."""
        self.waiting_for[call_id] = name
        if not self._notice_due:
            self._notice_due = True
            self.call_later(self._tell_waiting)

    def _tell_waiting(self) -> None:
        self._notice_due = False
        if not self.running or self.run_id is None:
            return
        self._show_stopping()
        self.say(notices.waiting(self.run_id, list(self.waiting_for.values()), self.quitting))
