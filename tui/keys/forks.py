"""The help screen's section "Forks": its keys, each with the bindings behind it."""

from __future__ import annotations

from .model import APP, FORK_SCREEN, FORK_TREE, TIMELINE, Bind, Key

SECTION = (
    "Forks",
    (
        Key(
            "F",
            "fork the open run at the highlighted line: a tool_result with a new result, a "
            "generation asked again (another model, a message added), the run_start with a new "
            "prompt; the fork runs here with --agent (else the agentor fork command is shown)",
            Bind(
                TIMELINE,
                "F,shift+f",
                "fork",
                "Fork",
                palette=("Fork here", "Fork the open run at the highlighted line"),
            ),
        ),
        Key(
            "ctrl+s",
            "in the fork form: fork (esc leaves it; tab moves between its fields)",
            Bind(FORK_SCREEN, "ctrl+s", "submit", "Fork"),
            Bind(FORK_SCREEN, "escape", "cancel", "Cancel"),
        ),
        Key(
            "u",
            "go to a fork's parent: selected in the list, its timeline at the fork point",
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
            "the fork tree of the selected run: its root and every fork below; enter opens one",
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
