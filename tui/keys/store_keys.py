"""The help screen's section "Store": operating the store from the list (pin, delete, export,
search every run, what runs cost), each key with the bindings behind it."""

from __future__ import annotations

from tui.keys.model import (
    CONFIRM_SCREEN,
    EXPORT_SCREEN,
    RUNS_SEARCH,
    SCREEN,
    STATS_SCREEN,
    Bind,
    Key,
)

# Two lines of help (the help fits a 160x45 screen without scrolling); the manual's keys
# table says more.
SECTION = (
    "Store",
    (
        Key(
            "p  d  w",
            "pin (*) / delete, once asked / write to a file",
            Bind(
                SCREEN,
                "p",
                "pin",
                "Pin",
                show=False,
                palette=("Pin or unpin run", "Pin the selected run so prune keeps it, or unpin"),
            ),
            Bind(
                SCREEN,
                "d",
                "delete_run",
                "Delete",
                show=False,
                palette=("Delete run", "Delete the selected run, once confirmed"),
            ),
            Bind(CONFIRM_SCREEN, "y", "confirm", "Delete"),
            Bind(CONFIRM_SCREEN, "n,escape", "cancel", "Keep"),
            Bind(
                SCREEN,
                "w",
                "export",
                "Export",
                show=False,
                palette=("Export run", "Write the selected run as Markdown, HTML or JSON"),
            ),
            Bind(EXPORT_SCREEN, "m", "write('md')", "Markdown", show=False),
            Bind(EXPORT_SCREEN, "h", "write('html')", "HTML", show=False),
            Bind(EXPORT_SCREEN, "j", "write('json')", "JSON", show=False),
            Bind(EXPORT_SCREEN, "escape", "cancel", "Cancel"),
        ),
        Key(
            "ctrl+f  S",
            "search every run / stats of the runs shown",
            Bind(
                SCREEN,
                "ctrl+f",
                "search_runs",
                "Search runs",
                show=False,
                palette=("Search every run", "Every event of every run: jump to a match"),
            ),
            Bind(RUNS_SEARCH, "escape", "close", "Close"),
            Bind(
                SCREEN,
                "S",
                "stats",
                "Stats",
                show=False,
                palette=("Stats", "Runs, tokens and cost per day, agent and model"),
            ),
            Bind(STATS_SCREEN, "escape,q,S", "dismiss", "Close"),
        ),
    ),
)
