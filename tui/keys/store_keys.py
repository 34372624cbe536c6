"""The help screen's section "Store": operating the store from the list (pin, delete, export,
search every run, what runs cost), each key with the bindings behind it."""

from __future__ import annotations

from .model import (
    APP,
    CONFIRM_SCREEN,
    EXPORT_SCREEN,
    RUNS_SEARCH,
    STATS_SCREEN,
    Bind,
    Key,
)

SECTION = (
    "Store",
    (
        Key(
            "p",
            "pin or unpin the run (prune keeps it); marked *",
            Bind(
                APP,
                "p",
                "pin",
                "Pin",
                palette=("Pin or unpin run", "Pin the selected run so prune keeps it, or unpin"),
            ),
        ),
        Key(
            "d",
            "delete the run, once confirmed; never a held or awaiting one",
            Bind(
                APP,
                "d",
                "delete_run",
                "Delete",
                palette=("Delete run", "Delete the selected run, once confirmed"),
            ),
            Bind(CONFIRM_SCREEN, "y", "confirm", "Delete"),
            Bind(CONFIRM_SCREEN, "n,escape", "cancel", "Keep"),
        ),
        Key(
            "w",
            "write the run to a file: Markdown, HTML or JSON (m h j)",
            Bind(
                APP,
                "w",
                "export",
                "Export",
                palette=("Export run", "Write the selected run as Markdown, HTML or JSON"),
            ),
            Bind(EXPORT_SCREEN, "m", "write('md')", "Markdown", show=False),
            Bind(EXPORT_SCREEN, "h", "write('html')", "HTML", show=False),
            Bind(EXPORT_SCREEN, "j", "write('json')", "JSON", show=False),
            Bind(EXPORT_SCREEN, "escape", "cancel", "Cancel"),
        ),
        Key(
            "ctrl+f",
            "search every run's events; enter opens one; esc stops",
            Bind(
                APP,
                "ctrl+f",
                "search_runs",
                "Search runs",
                palette=("Search every run", "Every event of every run: jump to a match"),
            ),
            Bind(RUNS_SEARCH, "escape", "close", "Close"),
        ),
        Key(
            "S",
            "stats of the runs shown: per day, agent and model",
            Bind(
                APP,
                "S",
                "stats",
                "Stats",
                palette=("Stats", "Runs, tokens and cost per day, agent and model"),
            ),
            Bind(STATS_SCREEN, "escape,q,S", "dismiss", "Close"),
        ),
    ),
)
