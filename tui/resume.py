"""One-key resume: `r` resumes the selected run in this process (`aresume` in a worker), its
events streaming to the screen as they are recorded; `x`, or quitting, stops it and leaves the
run interrupted and resumable. Every refusal and every ending is a notification."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from typing import TYPE_CHECKING, Any

from textual.worker import Worker

from agentor import NothingToResumeError, RunLockedError
from agentor.engine.events import GENERATION, RUN_START, TEXT_DELTA
from agentor.engine.store import FileStore

from .formatting import short_id
from .literal import literal_line
from .messages import ResumeProgress
from .runs import RunRow

if TYPE_CHECKING:
    from .app import RunsApp

# The run list's note on a run whose resume could not save all of its events.
UNSAVED = "⚠ unsaved"


class Resumer:
    """The app's resume: one at a time, in a worker the app runs."""

    def __init__(self, app: RunsApp) -> None:
        self.app = app
        self.worker: Worker[None] | None = None
        self.run_id: str | None = None  # the run being resumed, while its worker runs

    @functools.cached_property
    def store(self) -> FileStore:
        """Where resumes write: the directory on screen (made on first use, not at start)."""
        return FileStore(self.app.directory)

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
            tell(f"Already resuming {short_id(self.run_id or '')}: x stops it.", severity="warning")
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
        app.stream_line.start(run_id)

        def listener(event: Any) -> None:
            app.post_message(ResumeProgress(run_id, event))

        try:
            result = await agent.aresume(run_id, listener=listener)
        except asyncio.CancelledError:
            app.tell(
                f"Stopped resuming {short}: it is left interrupted, r resumes it.",
                severity="warning",
            )
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
            self.run_id = None
            with contextlib.suppress(Exception):  # the app may be closing
                app.stream_line.stop()
                app.refresh_run(run_id, liveness=True)
                app.refresh_bindings()

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
        if self.worker is None or not self.running:
            self.app.tell("No resume is running.", severity="warning")
            return
        self.worker.cancel()

    async def stop_and_wait(self, timeout: float = 5.0) -> None:
        """Cancel a resume in flight and let it unwind (release its lock) before going."""
        worker = self.worker
        if worker is None or worker.is_finished:
            return
        worker.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(worker.wait(), timeout)
