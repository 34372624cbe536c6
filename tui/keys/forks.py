"""The help screen's section "Forks": its keys, each with the bindings behind it."""

from __future__ import annotations

from tui.keys.model import FORK_SCREEN, FORK_TREE, SCREEN, TIMELINE, Bind, Key

SECTION = (
    "Forks",
    (
        Key(
            "F  u  L",
            "fork here (ctrl+s); a fork's parent; the fork tree",
            Bind(
                TIMELINE,
                "F,shift+f",
                "fork",
                "Fork",
                palette=("Fork here", "Fork the open run at the highlighted line"),
            ),
            Bind(FORK_SCREEN, "ctrl+s", "submit", "Fork"),
            Bind(FORK_SCREEN, "escape", "cancel", "Cancel"),
            Bind(
                SCREEN,
                "u",
                "fork_parent",
                "Parent",
                show=False,
                palette=("Go to parent", "Select the fork's parent, at the fork point"),
            ),
            Bind(
                SCREEN,
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
