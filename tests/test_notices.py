"""What the notifications say (`tui.text.notices`), as pure functions: why a resume is refused,
how it ended, what a stopping run waits for. No app, no Pilot: plain values in, notes out."""

from __future__ import annotations

from agentor.engine.history import RunSummary
from agentor.engine.statuses import COMPLETED, FAILED, INTERRUPTED, UNREADABLE
from agentor.sources.runrow import RunRow
from tui.text import notices

UUID = "2dfade516efc41a2985b901eff884ecf"
WAITING = "stopping: waiting for get_weather to finish (a running tool cannot be interrupted)"


def row(status: str, error: str | None = None) -> RunRow:
    return RunRow(UUID, RunSummary(run_id=UUID), status=status, error=error, complete=True)


def test_a_run_that_cannot_be_resumed_at_all_says_why() -> None:
    assert notices.cannot_resume(None) == notices.Note(
        "No run selected.", severity="warning", kind=notices.RESUME
    )
    assert notices.cannot_resume(row(COMPLETED)).text == "Run 2dfade51 is already completed."
    unreadable = notices.cannot_resume(row(UNREADABLE, "permission denied\x1b[2J"))
    assert unreadable is not None and unreadable.severity == "error"
    assert unreadable.text == (
        "Run 2dfade51 cannot be resumed: it is unreadable (permission denied␛[2J)."
    )
    assert notices.cannot_resume(row(INTERRUPTED)) is None
    assert notices.cannot_resume(row(FAILED)) is None


def test_one_resume_at_a_time_says_which_and_what_it_is_doing() -> None:
    other = "b9ba499c543548d886efde61e1f1c8e3"
    assert notices.one_at_a_time(UUID, UUID, None).text == "Already resuming 2dfade51: x stops it."
    assert notices.one_at_a_time(UUID, UUID, WAITING).text == (
        f"Run 2dfade51 cannot be resumed yet: {WAITING}."
    )
    assert notices.one_at_a_time(other, UUID, None).text == (
        "Only one resume runs at a time: 2dfade51 is being resumed: x stops it."
    )
    assert notices.one_at_a_time(other, UUID, "stopping").text == (
        "Only one resume runs at a time: 2dfade51 is stopping."
    )


def test_a_stopping_run_names_every_tool_it_waits_for() -> None:
    assert notices.stopping_reason([]) == "stopping"
    assert notices.stopping_reason(["get_weather"]) == WAITING
    assert notices.tool_names(["a", "b", "a"]) == "a (2 calls) and b"
    assert notices.tool_names(["a", "b", "c"]) == "a, b and c"
    assert notices.stopping_line(["get_weather"], quitting=True) == (
        "quitting: waiting for get_weather to finish (a running tool cannot be interrupted)"
    )
    quitting = notices.waiting(UUID, ["get_weather"], quitting=True)
    assert (quitting.title, quitting.timeout) == ("Quitting", 10)
    assert quitting.text.startswith(f"Quitting once the resume of 2dfade51 has stopped: {WAITING}")
    assert notices.abandoned(UUID, ["get_weather"]) == (
        f"quit without waiting for get_weather to finish (resume of run {UUID}): its result "
        "will not be recorded, and the run will run get_weather again on the next resume."
    )


def test_each_ending_says_what_became_of_the_run() -> None:
    done = notices.finished(UUID, COMPLETED, "Sunny.\nWarm.", None)
    assert (done.text, done.title) == ("Run 2dfade51 completed: Sunny.⏎Warm.", "Resumed")
    failed = notices.finished(UUID, FAILED, None, "HTTP 500")
    assert failed.text == "Run 2dfade51 ended failed: HTTP 500. It stays resumable: r tries again."
    assert failed.severity == "error"
    recorded = notices.stopped(UUID, {"c1": "get_weather"}, {"c1"})
    assert "get_weather finished and its result was recorded" in recorded.text
    lost = notices.stopped(UUID, {"c1": "get_weather"}, set())
    assert "its result could not be recorded (see the log)" in lost.text
    assert notices.stopped(UUID, {}, set()).text == (
        "Stopped resuming 2dfade51: it is left interrupted, r resumes it."
    )
    assert notices.unsaved(UUID, COMPLETED, 2).text.startswith(
        "Run 2dfade51 ended completed, but 2 writes of its events to the log failed"
    )
    assert notices.locked(UUID, 4242).text == (
        "Run 2dfade51 is locked by process 4242: it is being run or resumed there."
    )
    assert notices.locked(UUID, 4242, "worker-3\x1b[2J").text == (
        "Run 2dfade51 is locked by process 4242 on worker-3␛[2J: it is being run or resumed there."
    )
    assert notices.reloaded("~/runs", 1, 0, 2).text == "Reloaded ~/runs: 1 new, 2 gone."
    assert notices.reloaded("~/runs", 0, 0, 0).text == "Reloaded ~/runs: nothing changed."


def test_a_few_notes_show_at_once_and_a_newer_one_replaces_its_kind() -> None:
    from tui.shown_notes import MAX_INFO_TIMEOUT, MAX_SHOWN, MAX_TIMEOUT, ShownNotes

    board = ShownNotes()
    shown = []
    for i in range(5):  # notes of no kind: the oldest make room
        note = notices.Note(f"note {i}", severity="warning", timeout=60)
        for old in board.to_take_down(shown, note.kind):
            shown.remove(old)
        shown.append(board.notification(note))
    assert [n.message for n in shown] == ["note 2", "note 3", "note 4"] and MAX_SHOWN == 3
    assert {n.timeout for n in shown} == {MAX_TIMEOUT}  # none stays long
    # A note that only informs goes sooner: copied, resumed, a decision recorded.
    for said in (notices.copied_id("2dfade51"), notices.Note("Resumed.", timeout=8)):
        assert board.notification(said).timeout == MAX_INFO_TIMEOUT == 5
    decided = notices.Note("first decision", kind=notices.DECISION)
    shown.append(board.notification(decided))
    later = notices.Note("second decision", kind=notices.DECISION)
    gone = board.to_take_down(shown, later.kind)
    assert [n.message for n in gone] == ["first decision", "note 2"]
