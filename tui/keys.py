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
    Binding("ctrl+r", "reload", "Reload"),  # shown only when not watching (check_action)
    Binding("m", "toggle_maximize", "Maximize"),
    Binding("v", "view_raw", "Raw JSON"),
    Binding("y", "copy_value", "Copy value"),
    Binding("question_mark", "help", "Help"),
    Binding("q", "quit", "Quit"),
    # Textual only hints at ctrl+q on ctrl+c; both quit as q does (ctrl+q is Textual's own).
    Binding("ctrl+c", "quit", "Quit", show=False),
)

# The command palette's entries: title, what it does (and its key), the action it runs (the
# app's, or `id.action`: that of the widget with that id).
PALETTE = (
    ("Open", "Into the timeline, then the detail (enter)", "drill"),
    ("Back", "Back out to the run list (esc)", "back"),
    ("Filter runs", "Filter by id, agent, model, status or prompt (/)", "filter"),
    ("Cycle status filter", "All, needs attention, failed, completed (s)", "cycle_status"),
    ("Resume run", "Resume the selected run in this process (r)", "resume"),
    ("Stop resume", "Stop the resume in flight; the run stays resumable (x)", "stop_resume"),
    ("Follow", "Keep the newest event in view (f)", "follow"),
    ("Copy run id", "Copy the selected run's id (c)", "copy_id"),
    ("Reload", "Read the directory again, when not watching it (ctrl+r)", "reload"),
    (
        "Maximize pane",
        "The focused pane fills the screen, or back to all panes (m, esc)",
        "toggle_maximize",
    ),
    ("Raw JSON", "The highlighted event's line as JSON, scrollable (v)", "view_raw"),
    ("Copy value", "The highlighted event's result or text, else its JSON (y)", "copy_value"),
    ("Help", "Every key (?)", "help"),
    # The timeline's own keys (`#timeline.action`): from the palette they work from any pane.
    ("Search events", "Search the open run's events (/ in the timeline)", "timeline.search"),
    ("Next match", "The search's next match (n)", "timeline.next_match"),
    ("Previous match", "The search's previous match (N)", "timeline.previous_match"),
    (
        "Next error",
        "A tool error, a failed or max_turns end, an unreadable line (e)",
        "timeline.next_error",
    ),
    ("Previous error", "The error before the cursor (E)", "timeline.previous_error"),
    ("Next tool call", "The next tool_call event (t)", "timeline.next_call"),
    ("Previous tool call", "The tool_call event before the cursor (T)", "timeline.previous_call"),
)

# What a narrow footer keeps first, in this order (`KeysFooter`); keys not named here come
# after these, as room allows. Help and quit first: they lead to every other key and out.
FOOTER_PRIORITY = (
    "help",
    "quit",
    "drill",
    "back",
    "clear_search",  # the timeline's `esc`: back, once its search is cleared
    "resume",
    "stop_resume",
    "toggle_maximize",
    "filter",
    "search",
    "cycle_status",
    "follow",
    "copy_id",
    "view_raw",
    "copy_value",
)
