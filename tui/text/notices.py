"""What the app's notifications say: why a resume is refused, how it ended, what a stopping run
waits for, what the watcher found. Pure functions of plain values, each a `Note` (its text,
title, severity, how long it stays); the app shows a note literally (`RunsApp.tell_note`).
What the store's keys say is `tui.text.store_notes`, what `M` and `P` say `compare_notes`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from agentor.engine.approval.pending import Decision
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED, STOPPING, UNREADABLE
from agentor.literal import literal_line
from agentor.sources.runrow import RunRow
from tui.text.event_value import Copied
from tui.text.formatting import short_id

Severity = Literal["information", "warning", "error"]


@dataclass(frozen=True)
class Note:
    text: str
    title: str = ""
    severity: Severity = "information"
    timeout: float | None = None
    bell: bool = False  # ring the terminal's bell too (a person is needed)
    # What the note is news of: a newer note of its kind takes its place (`tui.shown_notes`).
    kind: str | None = None


# The kinds of notes (`Note.kind`).
RESUME, DECISION, APPROVAL, FORK = "resume", "decision", "approval", "fork"
SOURCE, RELOAD = "source", "reload"


def tool_names(names: Iterable[str]) -> str:
    """`get_weather`, `get_weather and get_news`, `get_weather (2 calls), a and b`."""
    counts = Counter(literal_line(n, 60) for n in names)
    parts = [f"{n} ({k} calls)" if k > 1 else n for n, k in counts.items()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


# -- the runs screen ---------------------------------------------------------------------------

# What the timeline says with no run open.
SELECT_A_RUN = "Select a run to see its events."
NO_RUN_OPEN = "No run selected."
# What the run list says with no rows: none yet, or the directory went away.
NO_RUNS_YET = "No runs yet."
DIRECTORY_DELETED = "The run directory was deleted."

NO_RUN_SELECTED = Note("No run selected.", severity="warning")
NO_EVENT = Note("No event highlighted: select a run with events first.", severity="warning")


def unreadable_run(run_id: str, error: str | None) -> str:
    return f"Run {run_id} is unreadable: {error or 'unknown error'}"


def cannot_open(run_id: str, exc: BaseException) -> str:
    """What the timeline says of a run whose log cannot be opened."""
    return f"Run {run_id} cannot be opened: {exc}"


def run_deleted(run_id: str) -> str:
    """What the timeline says once its run was deleted."""
    return f"Run {run_id} was deleted."


def not_in_source(run_id: str, where: str) -> Note:
    """The run named on the command line is not in the source."""
    return Note(f"Run {run_id} is not in {where}.", severity="warning")


def following(on: bool) -> Note:
    """`f`: the timeline follows its newest event, or no longer does."""
    return Note("Following the newest event." if on else "Follow off.", timeout=2)


def copied_id(run_id: str) -> Note:
    """`c`: the whole id, alone, to copy by hand where the terminal ignores the clipboard."""
    return Note(run_id, title="Copied run id", timeout=8)


def copied_value(copied: Copied) -> Note:
    """`y`: what was copied; not all of it, said louder."""
    if copied.cut:
        return Note(copied.notice, severity="warning", timeout=8)
    return Note(copied.notice, timeout=4)


# -- a resume refused --------------------------------------------------------------------------


def cannot_resume(row: RunRow | None) -> Note | None:
    """Why the selected run cannot be resumed at all, or None."""
    if row is None:
        return Note("No run selected.", severity="warning", kind=RESUME)
    short = short_id(row.run_id)
    if row.status == COMPLETED:
        return Note(f"Run {short} is already completed.", severity="warning", kind=RESUME)
    if row.status == UNREADABLE:
        why = literal_line(row.error or "?", 200)
        text = f"Run {short} cannot be resumed: it is unreadable ({why})."
        return Note(text, severity="error", kind=RESUME)
    return None


def no_agent(hint: str) -> Note:
    """No agent given may resume the run (`AgentSet.missing_hint` says how to give one)."""
    return Note(literal_line(hint, 500), severity="warning", timeout=8, kind=RESUME)


def one_at_a_time(run_id: str, resuming: str, stopping: str | None) -> Note:
    """`r` on `run_id` while `resuming` is resumed (`stopping`: the reason it is stopping)."""
    short = short_id(resuming)
    if run_id == resuming and stopping is not None:
        text = f"Run {short} cannot be resumed yet: {stopping}."
    elif run_id == resuming:
        text = f"Already resuming {short}: x stops it."
    else:
        doing = "is stopping" if stopping is not None else "is being resumed: x stops it"
        text = f"Only one resume runs at a time: {short} {doing}."
    return Note(text, severity="warning", kind=RESUME)


NOTHING_TO_STOP = Note("No resume is running: x stops a resume started here with r.", kind=RESUME)


# -- stopping ----------------------------------------------------------------------------------


def stopping_reason(waiting_for: Collection[str]) -> str:
    """`stopping: waiting for get_weather to finish (a running tool cannot be ...)`, given the
    names of the tools a stopping run waits for."""
    if not waiting_for:
        return STOPPING
    names = tool_names(waiting_for)
    return f"{STOPPING}: waiting for {names} to finish (a running tool cannot be interrupted)"


def stopping_line(waiting_for: Collection[str], quitting: bool) -> str:
    """What the line under the timeline says until the resume has unwound."""
    reason = stopping_reason(waiting_for)
    return "quitting" + reason.removeprefix(STOPPING) if quitting else reason


def waiting(run_id: str, waiting_for: Collection[str], quitting: bool) -> Note:
    """The stopping run waits for these tools' threads (said once for a burst)."""
    short, reason = short_id(run_id), stopping_reason(waiting_for)
    if not quitting:
        return Note(reason, title=f"Run {short}", severity="warning", timeout=10, kind=RESUME)
    names = tool_names(waiting_for)
    return Note(
        f"Quitting once the resume of {short} has stopped: {reason}. q again quits at "
        f"once, but {names}'s result will not be recorded: the run will run it again on "
        "the next resume.",
        title="Quitting",
        severity="warning",
        timeout=10,
        kind=RESUME,
    )


def abandoned(run_id: str, waiting_for: Collection[str]) -> str:
    """The warning printed when a second `q` quits before the resume has unwound."""
    if not waiting_for:
        return (
            f"quit before the resume of run {run_id} had stopped: its last step may not "
            "be recorded; the run is left interrupted."
        )
    names = tool_names(waiting_for)
    return (
        f"quit without waiting for {names} to finish (resume of run {run_id}): its "
        f"result will not be recorded, and the run will run {names} again on the next "
        "resume."
    )


# -- how a resume ended ------------------------------------------------------------------------


def stopped(run_id: str, waiting_for: Mapping[str, str], recorded: Collection[str]) -> Note:
    """Stopped with `x` or `q`: `waiting_for` maps the calls it waited for to their tools,
    `recorded` the calls whose results were recorded since."""
    short = short_id(run_id)
    if not waiting_for:
        text = f"Stopped resuming {short}: it is left interrupted, r resumes it."
        return Note(text, severity="warning", timeout=10, kind=RESUME)
    names = tool_names(waiting_for.values())
    if set(waiting_for) <= set(recorded):
        done = (
            f"{names} finished and its result was recorded, so the next resume will not "
            "run it again"
        )
    else:
        done = f"{names} finished, but its result could not be recorded (see the log)"
    text = f"Stopped resuming {short}: {done}. It is left interrupted, r resumes it."
    return Note(text, severity="warning", timeout=10, kind=RESUME)


def finished(run_id: str, status: str, output: str | None, error: str | None) -> Note | None:
    """The resume ran to an end and recorded it (None: it paused awaiting approval, which the
    app announces for every run that starts waiting, `awaiting`)."""
    short = short_id(run_id)
    if status == AWAITING_APPROVAL:
        return None
    if status == COMPLETED:
        text = f"Run {short} completed: {literal_line(output or '', 300)}"
        return Note(text, title="Resumed", timeout=8, kind=RESUME)
    why = literal_line(error or "no error recorded", 400)
    return Note(
        f"Run {short} ended {status}: {why}. It stays resumable: r tries again.",
        title="Resume did not finish",
        severity="error",
        timeout=10,
        kind=RESUME,
    )


def unsaved(run_id: str, status: str, failures: int) -> Note:
    """The engine carried on past failed writes (disk full, no permission): the run's ending
    is known here, but its log lacks steps."""
    writes = "write" if failures == 1 else "writes"
    return Note(
        f"Run {short_id(run_id)} ended {status}, but {failures} {writes} of its events to the "
        "log failed (see the agentor log): those events could not be saved, and the run "
        "may not be resumable from its file.",
        title="Events not saved",
        severity="error",
        timeout=10,
    )


# The run list's note on a run whose resume could not save all of its events.
UNSAVED_MARK = "⚠ unsaved"


def locked(run_id: str, pid: int | None, host: str | None = None) -> Note:
    """`r` on a run another process holds (`host`: where, when a database store says)."""
    holder = f"process {pid}" if pid else "another process"
    if host:
        holder += f" on {literal_line(host, 100)}"
    text = f"Run {short_id(run_id)} is locked by {holder}: it is being run or resumed there."
    return Note(text, severity="error", timeout=8, kind=RESUME)


def nothing_to_resume(run_id: str, reason: str) -> Note:
    text = (
        f"Nothing to resume in {short_id(run_id)}: no prompt recorded "
        f"({literal_line(reason, 200)})."
    )
    return Note(text, severity="warning", timeout=8, kind=RESUME)


def gone(run_id: str, where: str) -> Note:
    text = f"Run {short_id(run_id)} is gone: its file left {literal_line(where, 200)}."
    return Note(text, severity="error", timeout=8, kind=RESUME)


def failed(run_id: str, exc: BaseException) -> Note:
    text = (
        f"Resuming {short_id(run_id)} failed: {type(exc).__name__}: {literal_line(str(exc), 400)}"
    )
    return Note(text, severity="error", timeout=8, kind=RESUME)


# -- the source --------------------------------------------------------------------------------


def stopped_watching(where: str, exc: BaseException) -> Note:
    text = f"Stopped watching {literal_line(where)}: {literal_line(str(exc), 300)}"
    return Note(text, severity="error", timeout=10, kind=SOURCE)


def reloaded(label: str, added: int, changed: int, removed: int) -> Note:
    """ctrl+r: what the reload found."""
    counts = ((added, "new"), (changed, "changed"), (removed, "gone"))
    said = ", ".join(f"{n} {what}" for n, what in counts if n) or "nothing changed"
    return Note(f"Reloaded {literal_line(label)}: {said}.", timeout=3, kind=RELOAD)


def nothing_left(where: str) -> str:
    """What the run list says once its source is gone."""
    return (
        f"The directory {where} was deleted: there is nothing left to show. "
        "It is shown again if it comes back."
    )


def source_gone(where: str) -> Note:
    return Note(f"{literal_line(where)} was deleted.", severity="warning", kind=SOURCE)


def source_back(where: str) -> Note:
    return Note(f"{literal_line(where)} is back.", timeout=4, kind=SOURCE)


def source_unreadable(where: str, error: str) -> Note:
    """The source stopped answering while it exists (a database that cannot be reached): the
    list keeps what it read until then."""
    text = (
        f"Cannot read {literal_line(where)}: {literal_line(error, 300)}. The list shows what "
        "was read until now; it catches up once the store answers again."
    )
    return Note(text, severity="warning", timeout=10, kind=SOURCE)


def index_not_saved(where: str, exc: Exception) -> Note:
    """The run index could be written neither in the directory nor in the cache: starts stay
    as slow as without it, nothing else is lost."""
    reason = literal_line(getattr(exc, "strerror", None) or str(exc), 200)
    text = (
        f"Cannot save the run index of {literal_line(where)} ({reason}): the list is complete, "
        "but the next start reads every log again."
    )
    return Note(text, severity="warning", timeout=10)


def source_readable(where: str) -> Note:
    text = f"{literal_line(where)} answers again: the list has caught up."
    return Note(text, timeout=4, kind=SOURCE)


# -- approval ----------------------------------------------------------------------------------

HOW_TO_DECIDE = "select it and press enter: a approves, e edits, n rejects"
# A call a crash interrupted while it ran (its outcome unknown): what a person says is what
# became of it. `a` runs it again, `g` gives it the result it had, `n` tells the model it failed.
HOW_TO_DECIDE_INTERRUPTED = (
    "select it and press enter: a runs it again, g gives the result it had, "
    "n tells the model it failed"
)
GIVE_AN_INTERRUPTED_CALL = "g gives a call that was interrupted the result it had"


def _what_waits(names: Iterable[str], interrupted: Iterable[str]) -> tuple[str, str, bool]:
    """The calls that wait, the keys that decide them, and whether every one of them is a call
    a crash interrupted (`interrupted`: their names)."""
    names, interrupted = list(names), list(interrupted)
    if not interrupted:
        return tool_names(names), HOW_TO_DECIDE, False
    if len(interrupted) >= len(names):
        return f"{tool_names(names)}, interrupted while running", HOW_TO_DECIDE_INTERRUPTED, True
    which = f"{tool_names(names)} ({tool_names(interrupted)} interrupted while running)"
    return which, f"{HOW_TO_DECIDE}; {GIVE_AN_INTERRUPTED_CALL}", False


def awaiting(run_id: str, names: Iterable[str], interrupted: Iterable[str] = ()) -> Note:
    """A run has just started waiting for a person (said once per pause, with the bell);
    `interrupted`, the names of the waiting calls a crash interrupted while they ran."""
    which, how, every = _what_waits(names, interrupted)
    asked = f"a decision on {which}" if every else f"approval of {which}"
    text = f"Run {short_id(run_id)} awaits {asked}: {how}."
    return Note(
        text, title="Approval needed", severity="warning", timeout=10, bell=True, kind=APPROVAL
    )


def waits_for_approval(run_id: str, names: Iterable[str], interrupted: Iterable[str] = ()) -> Note:
    """`r` on a run whose calls still wait for a decision: a resume would only pause again."""
    which, how, every = _what_waits(names, interrupted)
    waits = ", waits for a decision" if every else " waits for approval"
    text = f"Run {short_id(run_id)} cannot go on yet: {which}{waits}; {how}."
    return Note(text, severity="warning", timeout=10, kind=RESUME)


def decided(run_id: str, made: list[Decision], left: int, then: str) -> Note:
    """Decisions recorded: what they were, what still waits or what happens next (`then`)."""
    first = made[0]
    verb = first.decision.capitalize()
    if len(made) == 1:
        what = f"{literal_line(first.name, 60)} ({literal_line(first.call_id, 60)})"
    else:
        what = f"{len(made)} calls ({tool_names(d.name for d in made)})"
    text = f"{verb} {what} of run {short_id(run_id)} as {literal_line(first.by, 60)}"
    if first.edited:
        text += ", with the edited arguments"
    if first.given:
        text += ", with the result it had (it is not run again)"
    if first.note and not first.approved:
        text += f": {literal_line(first.note, 200)}"
    if left:
        text += f". {left} call{'s' if left != 1 else ''} still wait{'s' if left == 1 else ''}."
    else:
        text += f". {then}"
    return Note(text, title="Decision recorded", timeout=8 if left else 10, kind=DECISION)


def resuming_after_approval() -> str:
    return "Every call is decided: resuming the run here."


def continue_elsewhere(run_id: str, why: str) -> str:
    """Every call is decided, but this app cannot resume the run (`why`): how to go on."""
    return (
        f"Every call is decided, and recorded; {why}. To continue: r with an --agent for it "
        f"(start agentor-tui with --agent SPEC), agentor resume {run_id} --agent SPEC, or a "
        "worker."
    )


def not_recorded(exc: BaseException) -> Note:
    """A decision refused (already decided, timed out, locked, gone): the error, quoted."""
    text = f"Not recorded: {literal_line(str(exc), 500)}"
    return Note(text, title="Decision refused", severity="error", timeout=10, kind=DECISION)


def deciding_failed(run_id: str, exc: BaseException) -> Note:
    """Recording a decision failed for another reason than a refusal (a store error, say)."""
    text = (
        f"Deciding on run {short_id(run_id)} failed: {type(exc).__name__}: "
        f"{literal_line(str(exc), 400)}. The run's log shows what was recorded."
    )
    return Note(text, title="Decision failed", severity="error", timeout=10, kind=DECISION)


def no_result_for(name: str, call_id: str) -> Note:
    """`g` on a call that did not run: only a call a crash interrupted had a result."""
    call = f"{literal_line(name, 60)} ({literal_line(call_id, 60)})"
    return Note(
        f"{call} cannot be given a result: it did not run (only a call interrupted while "
        "running can be).",
        severity="warning",
        timeout=10,
    )


def not_waiting(name: str, call_id: str, why: str) -> Note:
    """`e` or `n` on a call that no longer waits (`why`: decided by whom, timed out)."""
    call = f"{literal_line(name, 60)} ({literal_line(call_id, 60)})"
    text = f"{call} does not wait for a decision: {why}."
    return Note(text, severity="warning", timeout=8, kind=DECISION)
