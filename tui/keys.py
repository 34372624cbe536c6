"""The app's keys: footer bindings and the command palette's entries, in one place."""

from __future__ import annotations

from textual.binding import Binding

BINDINGS: tuple[Binding, ...] = (
    Binding("enter", "drill", "Open"),
    Binding("escape", "back", "Back"),
    Binding("slash", "filter", "Filter"),
    Binding("s", "cycle_status", "Status"),
    Binding("r", "resume", "Resume"),
    Binding("x", "stop_resume", "Stop"),
    Binding("f", "follow", "Follow"),
    Binding("c", "copy_id", "Copy id"),
    Binding("m", "toggle_maximize", "Maximize"),
    Binding("question_mark", "help", "Help"),
    Binding("q", "quit", "Quit"),
)

# The command palette's entries: title, what it does (and its key), the action it runs.
PALETTE = (
    ("Open", "Into the timeline, then the detail (enter)", "drill"),
    ("Back", "Back out to the run list (esc)", "back"),
    ("Filter runs", "Filter by id, agent, model, status or prompt (/)", "filter"),
    ("Cycle status filter", "All, needs attention, failed, completed (s)", "cycle_status"),
    ("Resume run", "Resume the selected run in this process (r)", "resume"),
    ("Stop resume", "Stop the resume in flight; the run stays resumable (x)", "stop_resume"),
    ("Follow", "Keep the newest event in view (f)", "follow"),
    ("Copy run id", "Copy the selected run's id (c)", "copy_id"),
    (
        "Maximize pane",
        "The focused pane fills the screen, or back to all panes (m, esc)",
        "toggle_maximize",
    ),
    ("Help", "Every key (?)", "help"),
)

# What a narrow footer keeps first, in this order (`KeysFooter`); keys not named here come
# after these, as room allows. Help and quit first: they lead to every other key and out.
FOOTER_PRIORITY = (
    "help",
    "quit",
    "drill",
    "back",
    "resume",
    "stop_resume",
    "toggle_maximize",
    "filter",
    "search",
    "cycle_status",
    "follow",
    "copy_id",
)
