"""The help screen's section "Forks": its keys, each with the bindings behind it."""

from __future__ import annotations

from .model import APP, FORK_SCREEN, FORK_TREE, TIMELINE, Bind, Key

SECTION = (
    "Forks",
    (
        Key(
            "F, ctrl+s",
            "fork at this line: a tool_result, a generation or the run_start; ctrl+s in its form",
            Bind(
                TIMELINE,
                "F,shift+f",
                "fork",
                "Fork",
                palette=("Fork here", "Fork the open run at the highlighted line"),
            ),
            Bind(FORK_SCREEN, "ctrl+s", "submit", "Fork"),
            Bind(FORK_SCREEN, "escape", "cancel", "Cancel"),
        ),
        Key(
            "u",
            "go to a fork's parent, at the fork point",
            Bind(
                APP,
                "u",
                "fork_parent",
                "Parent",
                show=False,
                palette=("Go to parent", "Select the fork's parent, at the fork point"),
            ),
        ),
        Key(
            "L",
            "the fork tree of the selected run; enter opens a run",
            Bind(
                APP,
                "L,shift+l",
                "fork_tree",
                "Fork tree",
                show=False,
                palette=("Fork tree", "The selected run's ancestors and forks as a tree"),
            ),
            Bind(FORK_TREE, "escape", "cancel", "Close"),
        ),
    ),
)
