"""The help screen's section "Runs": its keys, each with the bindings behind it."""

from __future__ import annotations

from tui.keys.model import FILTER_BAR, LIST, SCREEN, TIMELINE, Bind, Key

SECTION = (
    "Runs",
    (
        Key(
            "/",
            "filter by id, agent, model, status, prompt, fork",
            Bind(
                SCREEN,
                "slash",
                "filter",
                "Filter",
                palette=("Filter runs", "Filter by id, agent, model, status or prompt"),
            ),
            Bind(FILTER_BAR, "escape", "clear_filter", "Clear filter", show=False),
        ),
        Key(
            "s",
            "cycle the status filter: all, needs attention, failed, completed",
            Bind(
                SCREEN,
                "s",
                "cycle_status",
                "Status",
                palette=("Cycle status filter", "All, needs attention, failed, completed"),
            ),
        ),
        Key(
            "↑ ↓  k j",
            "move up and down",
            Bind(LIST, "up,k", "cursor_up", "Up", show=False),
            Bind(LIST, "down,j", "cursor_down", "Down", show=False),
        ),
        Key(
            "pgup pgdn",
            "a page up and down",
            Bind(LIST, "pageup", "page_up", "Page up", show=False),
            Bind(LIST, "pagedown", "page_down", "Page down", show=False),
        ),
        Key(
            "home end  g G",
            "first and last row",
            Bind(LIST, "home,g", "first", "First", show=False),
            Bind(LIST, "end,G", "last", "Last", show=False),
        ),
        Key(
            "enter, tab",
            "into the approvals, the timeline, then the detail",
            Bind(
                SCREEN,
                "enter",
                "drill",
                "Open",
                palette=("Open", "Into the timeline, then the detail"),
            ),
        ),
        Key(
            "esc",
            "back out: detail → timeline → runs; clears filter",
            Bind(SCREEN, "escape", "back", "Back", palette=("Back", "Back out to the run list")),
            Bind(TIMELINE, "escape", "clear_search", "Back"),
        ),
    ),
)
