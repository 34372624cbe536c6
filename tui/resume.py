"""One-key resume: `r` resumes the selected run in this process (`aresume` in a worker), its
events streaming to the screen as they are recorded; `x`, or quitting, stops it and leaves the
run interrupted and resumable. Every refusal and every ending is a notification.

A stop cancels the worker, but a sync tool's thread cannot be interrupted: the engine keeps the
run (its lock) until the thread has ended and its result is recorded, and tells us what it
waits for (`tool_wait`). Until then the run shows as *stopping*, `r` on it is refused, and
quitting waits too; a second `q` abandons the resume (the app's caller ends the process, and
the tool's result is lost: the next resume runs it again)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.worker import Worker

from agentor import NothingToResumeError, RunLockedError
from agentor.engine.events import GENERATION, RUN_START, TEXT_DELTA, TOOL_RESULT, TOOL_WAIT
from agentor.engine.store import FileStore

from .formatting import short_id
from .literal import literal_line
from .messages import ResumeHeld, ResumeProgress
from .runrow import STOPPING
from .runs import RunRow

if TYPE_CHECKING:
    from .app import RunsApp


class _TellingStore(FileStore):
    """The directory's store, saying when a resume has taken a run: a resume records nothing
    before its first step (no empty segment if it is stopped), so the file alone cannot tell
    the list that the run is running until then."""

    def __init__(self, directory: Path, held: Callable[[str], None]) -> None:
        super().__init__(directory)
        self._held_hook = held

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        with super().lock(run_id):
            self._held_hook(run_id)  # from the thread taking the lock: posting is thread-safe
            yield


# The run list's note on a run whose resume could not save all of its events.
UNSAVED = "⚠ unsaved"


class Resumer:
    """The app's resume: one at a time, in a worker the app runs."""

    def __init__(self, app: RunsApp) -> None:
        self.app = app
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
    def store(self) -> FileStore:
        """Where resumes write: the directory on screen (made on first use, not at start)."""
        app = self.app
        return _TellingStore(app.directory, lambda run_id: app.post_message(ResumeHeld(run_id)))

    @property
    def running(self) -> bool:
        # A worker counts from when it is asked for, not from when it starts: two quick `r`s
        # must not replace a resume that has not begun yet.
        return self.worker is not None and not self.worker.is_finished

    def start(self, row: RunRow | None) -> None:
        """Resume `row`'s run, or say why it cannot be resumed."""
        tell = self.app.tell
        if row is None:
            tell("No run selected.", severity="warning")
            return
        short = short_id(row.run_id)
        if self.running:
            self._refuse_while_running(row.run_id)
            return
        if row.status == "completed":
            tell(f"Run {short} is already completed.", severity="warning")
            return
        if row.status == "unreadable":
            tell(
                f"Run {short} cannot be resumed: it is unreadable "
                f"({literal_line(row.error or '?', 200)}).",
                severity="error",
            )
            return
        agents = self.app.agents
        name = row.summary.agent if row.summary else None
        agent = agents.for_run(name)
        if agent is None:
            tell(literal_line(agents.missing_hint(name), 500), severity="warning", timeout=8)
            return
        agent = agents.writing_to(agent, self.store)
        self.run_id = row.run_id
        self.started = self.stopping = self.quitting = False
        self.waiting_for, self.recorded = {}, set()
        self.worker = self.app.run_worker(
            functools.partial(self._resume, row.run_id, agent),
            name="resume",
            group="resume",
            exclusive=True,
            exit_on_error=False,
        )
        self.app.refresh_bindings()

    async def _resume(self, run_id: str, agent: Any) -> None:
        """`agent.aresume(run_id)`, posting each event to the app as it is recorded."""
        app = self.app
        short = short_id(run_id)
        self.started = True
        if self.stopping:  # stopped before it began: nothing to unwind
            self._ended(run_id)
            raise asyncio.CancelledError
        app.stream_line.start(run_id)

        def listener(event: Any) -> None:
            app.post_message(ResumeProgress(run_id, event))

        try:
            result = await agent.aresume(run_id, listener=listener)
        except asyncio.CancelledError:
            app.tell(self._stopped_notice(short), severity="warning", timeout=10)
            raise
        except RunLockedError as exc:
            holder = f"process {exc.pid}" if exc.pid else "another process"
            app.tell(
                f"Run {short} is locked by {holder}: it is being run or resumed there.",
                severity="error",
                timeout=8,
            )
        except NothingToResumeError as exc:
            app.tell(
                f"Nothing to resume in {short}: no prompt recorded "
                f"({literal_line(exc.reason, 200)}).",
                severity="warning",
                timeout=8,
            )
        except KeyError:
            app.tell(
                f"Run {short} is gone: its file left {literal_line(str(app.directory), 200)}.",
                severity="error",
                timeout=8,
            )
        except Exception as exc:
            app.tell(
                f"Resuming {short} failed: {type(exc).__name__}: {literal_line(str(exc), 400)}",
                severity="error",
                timeout=8,
            )
        else:
            self._report(run_id, result)
        finally:
            self._ended(run_id)

    def _ended(self, run_id: str) -> None:
        """The worker is done: the run is let go (lock released, tool results recorded)."""
        quitting = self.quitting
        self.run_id = None
        self.stopping = self.quitting = False
        app = self.app
        with contextlib.suppress(Exception):  # the app may be closing
            app.run_list.show_status(run_id, None)
            app.show_title()
            app.stream_line.stop()
            app.refresh_run(run_id, liveness=True)
            app.refresh_bindings()
        if quitting:
            app.exit()

    def _report(self, run_id: str, result: Any) -> None:
        short = short_id(run_id)
        failures = getattr(result, "save_failures", 0) or 0
        if failures:
            self._report_unsaved(run_id, result.status, failures)
            return
        if result.status == "completed":
            output = literal_line(result.final_output or "", 300)
            self.app.tell(f"Run {short} completed: {output}", title="Resumed", timeout=8)
            return
        error = literal_line(result.error or "no error recorded", 400)
        self.app.tell(
            f"Run {short} ended {result.status}: {error}. It stays resumable: r tries again.",
            title="Resume did not finish",
            severity="error",
            timeout=10,
        )

    def _report_unsaved(self, run_id: str, status: str, failures: int) -> None:
        """The engine carried on past failed writes (disk full, no permission): the run's
        ending is known here, but its log lacks steps. Say so, and mark the run's row for
        the rest of the session: the file alone cannot tell."""
        writes = "write" if failures == 1 else "writes"
        self.app.tell(
            f"Run {short_id(run_id)} ended {status}, but {failures} {writes} of its events to the "
            "log failed (see the agentor log): those events could not be saved, and the run "
            "may not be resumable from its file.",
            title="Events not saved",
            severity="error",
            timeout=15,
        )
        self.app.run_list.mark(run_id, UNSAVED)

    def progress(self, message: ResumeProgress) -> None:
        """An event of the resume was recorded (or a text delta streamed): show it."""
        event = message.event
        if message.run_id == self.run_id:
            if event.type == TOOL_WAIT:
                self._waiting(event.call_id or f"#{len(self.waiting_for)}", event.name or "a tool")
                return
            if event.type == TOOL_RESULT and event.call_id in self.waiting_for:
                self.recorded.add(event.call_id)
        streaming_here = message.run_id == self.app.stream_line.run_id
        if event.type == TEXT_DELTA:
            if streaming_here:
                self.app.stream_line.add(event.text or "")
            return
        if event.type == GENERATION and streaming_here:
            self.app.stream_line.turn_done()
        # Recorded before it was announced: the file has it, read it like any other change.
        self.app.refresh_run(message.run_id, liveness=event.type == RUN_START)

    def stop(self) -> None:
        """`x`: stop the resume in flight (at once, unless a tool thread must end first)."""
        if self.worker is None or not self.running:
            self.app.tell("No resume is running: x stops a resume started here with r.")
            return
        if self.stopping:
            self._tell_waiting()  # asked again: say again what it waits for
            return
        self._stop()

    def quit_when_stopped(self) -> None:
        """`q` during a resume: stop it, and quit once it has unwound (`_ended`)."""
        self.quitting = True
        if not self.stopping:
            self._stop()
        elif self.waiting_for:
            self._tell_waiting()
        self._show_stopping()

    def abandon(self) -> str:
        """A second `q` while the resume unwinds: the app goes now. The warning to print; the
        caller must end the process (the tool's thread would hold it)."""
        run_id = self.run_id or "?"
        if not self.waiting_for:
            return (
                f"quit before the resume of run {run_id} had stopped: its last step may not "
                "be recorded; the run is left interrupted."
            )
        names = tool_names(self.waiting_for.values())
        return (
            f"quit without waiting for {names} to finish (resume of run {run_id}): its "
            f"result will not be recorded, and the run will run {names} again on the next "
            "resume."
        )

    def _stop(self) -> None:
        assert self.worker is not None and self.run_id is not None
        self.stopping = True
        if self.started:  # else `_resume` sees `stopping` when it begins, and ends at once
            self.worker.cancel()
        self.app.run_list.show_status(self.run_id, STOPPING)
        self.app.show_title()
        self._show_stopping()

    def stopping_reason(self) -> str:
        """`stopping: waiting for get_weather to finish (a running tool cannot be ...)`."""
        if not self.waiting_for:
            return "stopping"
        names = tool_names(self.waiting_for.values())
        return f"stopping: waiting for {names} to finish (a running tool cannot be interrupted)"

    def _show_stopping(self) -> None:
        """Under the timeline, until the resume has unwound: what it waits for."""
        reason = self.stopping_reason()
        if self.quitting:  # "quitting: waiting for get_weather to finish (...)"
            reason = "quitting" + reason.removeprefix("stopping")
        self.app.stream_line.stopping(reason)

    def _refuse_while_running(self, run_id: str) -> None:
        short = short_id(self.run_id or "")
        if run_id == self.run_id and self.stopping:
            message = f"Run {short} cannot be resumed yet: {self.stopping_reason()}."
        elif run_id == self.run_id:
            message = f"Already resuming {short}: x stops it."
        else:
            doing = "is stopping" if self.stopping else "is being resumed: x stops it"
            message = f"Only one resume runs at a time: {short} {doing}."
        self.app.tell(message, severity="warning")

    def _waiting(self, call_id: str, name: str) -> None:
        """The stopping run waits for this tool's thread: say so (once for a burst)."""
        self.waiting_for[call_id] = name
        if not self._notice_due:
            self._notice_due = True
            self.app.call_later(self._tell_waiting)

    def _tell_waiting(self) -> None:
        self._notice_due = False
        if not self.running or self.run_id is None:
            return
        short, reason = short_id(self.run_id), self.stopping_reason()
        self._show_stopping()
        if not self.quitting:
            self.app.tell(reason, title=f"Run {short}", severity="warning", timeout=10)
            return
        names = tool_names(self.waiting_for.values())
        self.app.tell(
            f"Quitting once the resume of {short} has stopped: {reason}. q again quits at "
            f"once, but {names}'s result will not be recorded: the run will run it again on "
            "the next resume.",
            title="Quitting",
            severity="warning",
            timeout=30,
        )

    def _stopped_notice(self, short: str) -> str:
        if not self.waiting_for:
            return f"Stopped resuming {short}: it is left interrupted, r resumes it."
        names = tool_names(self.waiting_for.values())
        if set(self.waiting_for) <= self.recorded:
            done = (
                f"{names} finished and its result was recorded, so the next resume will not "
                "run it again"
            )
        else:
            done = f"{names} finished, but its result could not be recorded (see the log)"
        return f"Stopped resuming {short}: {done}. It is left interrupted, r resumes it."


def tool_names(names: Iterable[str]) -> str:
    """`get_weather`, `get_weather and get_news`, `get_weather (2 calls), a and b`."""
    counts = Counter(literal_line(n, 60) for n in names)
    parts = [f"{n} ({k} calls)" if k > 1 else n for n, k in counts.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
