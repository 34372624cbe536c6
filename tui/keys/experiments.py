"""The help screen's section "Experiments": the store's experiments (`E`), an experiment's
pairs, and starting one on the runs selected in the list (`space`, `X`), each key with the
bindings behind it."""

from __future__ import annotations

from tui.keys.model import (
    EXPERIMENT_FORM,
    EXPERIMENTS_SCREEN,
    PAIRS_SCREEN,
    RUN_LIST,
    SCREEN,
    Bind,
    Key,
)


def _stop_resume(owner: str) -> tuple[Bind, ...]:
    """`x` stops the experiment (highlighted, or shown) running here, `r` resumes one with
    pairs pending; each shown in the footer when it applies, its hidden twin saying why
    not otherwise."""
    return (
        Bind(owner, "x", "stop_experiment", "Stop"),
        Bind(owner, "x", "cannot_stop", "Stop", show=False),
        Bind(owner, "r", "resume_experiment", "Resume"),
        Bind(owner, "r", "cannot_resume", "Resume", show=False),
    )


# Two lines of help (the help fits a 160x45 screen without scrolling); the manual's keys
# table (docs/tui.md) says more.
SECTION = (
    "Experiments",
    (
        Key(
            "E enter s x r",
            "experiments, pairs (s sorts), compare; x stop, r resume",
            Bind(
                SCREEN,
                "E,shift+e",
                "experiments",
                "Experiments",
                palette=("Experiments", "The store's experiments, and each one's pairs"),
            ),
            Bind(EXPERIMENTS_SCREEN, "enter", "open_experiment", "Pairs"),
            Bind(EXPERIMENTS_SCREEN, "escape,q,E,shift+e", "dismiss", "Back"),
            *_stop_resume(EXPERIMENTS_SCREEN),
            Bind(PAIRS_SCREEN, "enter", "compare_pair", "Compare"),
            Bind(PAIRS_SCREEN, "s", "cycle_sort", "Sort"),
            Bind(PAIRS_SCREEN, "escape,q", "dismiss", "Back"),
            *_stop_resume(PAIRS_SCREEN),
        ),
        Key(
            "space  X",
            "select runs (✓); X: an experiment on them, a form",
            Bind(
                RUN_LIST,
                "space",
                "toggle_select",
                "Select",
                show=False,
                palette=("Select run", "Select the highlighted run for an experiment, or not"),
            ),
            Bind(
                SCREEN,
                "X,shift+x",
                "start_experiment",
                "Experiment",
                palette=("Start an experiment", "Replay the selected runs against a change"),
            ),
            # X with no run selected says how to select some.
            Bind(SCREEN, "X,shift+x", "nothing_selected", "Experiment", show=False),
            Bind(EXPERIMENT_FORM, "ctrl+s", "submit", "Start"),
            Bind(EXPERIMENT_FORM, "escape", "cancel", "Cancel"),
        ),
    ),
)
