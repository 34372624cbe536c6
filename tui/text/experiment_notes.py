"""What the experiments screens and an experiment started here say in notes. Pure functions of
plain values, each a `Note`; everything from a run, a user or an error made literal."""

from __future__ import annotations

from agentor.literal import literal_line
from tui.text.formatting import short_id
from tui.text.notices import Note

EXPERIMENT = "experiment"  # the kind of these notes: a newer one takes an older one's place

NOTHING_SELECTED = Note(
    "No run selected for an experiment: space selects runs in the list, then X.",
    severity="warning",
    kind=EXPERIMENT,
)


def one_at_a_time(experiment_id: str) -> Note:
    return Note(
        f"Experiment {literal_line(experiment_id, 40)} runs here already: one at a time.",
        severity="warning",
        kind=EXPERIMENT,
    )


def started(experiment_id: str, runs: int, done: int, resumed: bool = False) -> Note:
    if resumed:
        said = f" resumed ({done} of {runs} pairs were done)"
    else:
        again = f" ({done} pairs were done: going on)" if done else ""
        said = f" on {runs} run{'s' if runs != 1 else ''}{again}"
    return Note(
        f"Experiment {literal_line(experiment_id, 40)}{said}: its pairs come in as they "
        "are measured.",
        title="Experiment",
        timeout=5,
        kind=EXPERIMENT,
    )


def ended(experiment_id: str, pairs: int, regressions: int, improvements: int) -> Note:
    return Note(
        f"Experiment {literal_line(experiment_id, 40)} done: {pairs} pairs, "
        f"{regressions} regressed, {improvements} improved.",
        title="Experiment",
        severity="warning" if regressions else "information",
        kind=EXPERIMENT,
    )


def refused(why: str, resumed: bool = False) -> Note:
    """The experiment did not start (everything is checked before anything is written)."""
    return Note(
        f"Experiment not {'resumed' if resumed else 'started'}: {literal_line(why, 400)}",
        severity="error",
        timeout=10,
        kind=EXPERIMENT,
    )


def stopped(experiment_id: str, why: str) -> Note:
    """It started and then stopped: what was recorded stays (the same form again goes on)."""
    return Note(
        f"Experiment {literal_line(experiment_id, 40)} stopped: {literal_line(why, 300)}. "
        "The pairs measured are kept; the same experiment again goes on with the rest.",
        severity="error",
        timeout=10,
        kind=EXPERIMENT,
    )


def cannot_read(why: str) -> Note:
    return Note(f"Cannot read the experiments: {literal_line(why, 300)}", severity="warning")


def not_made_yet(candidate: str) -> Note:
    return Note(
        f"This pair is not measured yet: its candidate {short_id(candidate)} has no run yet.",
        severity="warning",
        timeout=4,
    )


def stopped_here(experiment_id: str) -> Note:
    """`x` stopped it: the pairs measured are kept, the candidates in flight interrupted."""
    return Note(
        f"Experiment {literal_line(experiment_id, 40)} stopped: the pairs measured are kept, "
        "the candidates in flight left resumable. r resumes it.",
        title="Experiment",
        timeout=6,
        kind=EXPERIMENT,
    )


def not_running_here(experiment_id: str) -> Note:
    return Note(
        f"Experiment {literal_line(experiment_id, 40)} is not running in this app: "
        "nothing to stop.",
        severity="warning",
        timeout=4,
        kind=EXPERIMENT,
    )


def not_resumed(why: str) -> Note:
    """`r` refused before anything ran (`why`: one line, from `resume_refusal`)."""
    return Note(
        f"Experiment not resumed: {literal_line(why.removeprefix('✗ '), 400)}",
        severity="warning",
        timeout=8,
        kind=EXPERIMENT,
    )
