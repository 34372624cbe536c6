"""The help screen's section "App": its keys, each with the bindings behind it."""

from __future__ import annotations

from tui.keys.model import APP, HELP_SCREEN, SCREEN, Bind, Key

SECTION = (
    "App",
    (
        Key(
            "m",
            "maximize the focused pane, or bring all back (esc too)",
            Bind(
                SCREEN,
                "m",
                "toggle_maximize",
                "Maximize",
                palette=(
                    "Maximize pane",
                    "The focused pane fills the screen; again, or esc, all panes come back",
                ),
            ),
        ),
        Key("ctrl+p", "command palette: every action by name"),
        Key(
            "?",
            "this help",
            Bind(APP, "question_mark", "help", "Help", palette=("Help", "Every key")),
            Bind(HELP_SCREEN, "escape,q,question_mark", "dismiss", "Close"),
        ),
        Key(
            "q, ctrl+c",
            "quit, a resume stopped first as x does (q again: at once; a running tool's "
            "result is lost and runs again on the next resume)",
            Bind(APP, "q", "quit", "Quit"),
            Bind(APP, "ctrl+c", "quit", "Quit", show=False),
        ),
    ),
)
