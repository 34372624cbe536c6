"""Every key of the app, each described once: the help screen's lines (`HELP`), each with the
bindings behind it, their footer words and command palette entries. The widgets' and screens'
`BINDINGS`, the help screen and the palette are all made from this table."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

# Whose bindings a key is (the owner of `timeline` is the widget with that id: the palette
# runs its actions as `timeline.<action>`).
APP = "app"
LIST = "list"  # every cursor list: the run list and the timeline
TIMELINE = "timeline"
FILTER_BAR = "filter_bar"
SEARCH_BAR = "search_bar"
HELP_SCREEN = "help_screen"
RAW_SCREEN = "raw_screen"
APPROVALS = "approvals"  # the approvals pane's list of gated calls
ARGS_EDITOR = "args_editor"
REASON_SCREEN = "reason_screen"


@dataclass(frozen=True)
class Bind:
    """One binding of `owner`: `keys` (Textual's names, comma separated) run `action`;
    `footer` is its word in the footer (shown there unless `show` is False); `palette` its
    title and what it does in the command palette (the key is added there)."""

    owner: str
    keys: str
    action: str
    footer: str
    show: bool = True
    palette: tuple[str, str] | None = None


class Key:
    """One line of the help screen: the keys as it writes them, what they do, and the bindings
    behind them (none for a key that Textual binds itself, such as tab or ctrl+p)."""

    def __init__(self, shown: str, does: str, *binds: Bind) -> None:
        self.shown, self.does, self.binds = shown, does, binds


HELP: tuple[tuple[str, tuple[Key, ...]], ...] = (
    (
        "Runs",
        (
            Key(
                "/",
                "filter by id, agent, model, status or prompt; enter keeps it, esc clears it",
                Bind(
                    APP,
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
                    APP,
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
                    APP,
                    "enter",
                    "drill",
                    "Open",
                    palette=("Open", "Into the timeline, then the detail"),
                ),
            ),
            Key(
                "esc",
                "back out: detail → timeline → runs; clears the filter",
                Bind(APP, "escape", "back", "Back", palette=("Back", "Back out to the run list")),
                Bind(TIMELINE, "escape", "clear_search", "Back"),
            ),
        ),
    ),
    (
        "Timeline",
        (
            Key(
                "/",
                "search its events as you type; enter goes to the first match, esc clears it",
                Bind(
                    TIMELINE,
                    "slash",
                    "search",
                    "Search",
                    palette=("Search events", "Search the open run's events"),
                ),
                Bind(SEARCH_BAR, "enter", "submit", "First match"),
                Bind(SEARCH_BAR, "escape", "cancel", "Clear search"),
            ),
            Key(
                "n  N",
                "next and previous match (round the ends)",
                Bind(
                    TIMELINE,
                    "n",
                    "next_match",
                    "Next match",
                    show=False,
                    palette=("Next match", "The search's next match"),
                ),
                Bind(
                    TIMELINE,
                    "N,shift+n",
                    "previous_match",
                    "Previous match",
                    show=False,
                    palette=("Previous match", "The search's previous match"),
                ),
            ),
            Key(
                "e  E",
                "next and previous error: a tool error, a failed or max_turns end, a bad line",
                Bind(
                    TIMELINE,
                    "e",
                    "next_error",
                    "Next error",
                    show=False,
                    palette=(
                        "Next error",
                        "A tool error, a failed or max_turns end, an unreadable line",
                    ),
                ),
                Bind(
                    TIMELINE,
                    "E,shift+e",
                    "previous_error",
                    "Previous error",
                    show=False,
                    palette=("Previous error", "The error before the cursor"),
                ),
            ),
            Key(
                "t  T",
                "next and previous tool call",
                Bind(
                    TIMELINE,
                    "t",
                    "next_call",
                    "Next tool call",
                    show=False,
                    palette=("Next tool call", "The next tool_call event"),
                ),
                Bind(
                    TIMELINE,
                    "T,shift+t",
                    "previous_call",
                    "Previous tool call",
                    show=False,
                    palette=("Previous tool call", "The tool_call event before the cursor"),
                ),
            ),
            Key(
                "f",
                "follow: keep the newest event of the open run in view",
                Bind(
                    APP,
                    "f",
                    "follow",
                    "Follow",
                    palette=("Follow", "Keep the newest event in view"),
                ),
            ),
        ),
    ),
    (
        "Event",
        (
            Key(
                "v",
                "the highlighted event's line as JSON (a compact generation decoded too)",
                Bind(
                    APP,
                    "v",
                    "view_raw",
                    "Raw JSON",
                    palette=("Raw JSON", "The highlighted event's line as JSON, scrollable"),
                ),
                Bind(RAW_SCREEN, "escape,v,q", "dismiss", "Close"),
            ),
            Key(
                "y",
                "copy its value: a tool result, a generation's or the final text, else its JSON",
                Bind(
                    APP,
                    "y",
                    "copy_value",
                    "Copy value",
                    palette=(
                        "Copy value",
                        "The highlighted event's result or text, else its JSON",
                    ),
                ),
            ),
        ),
    ),
    (
        "Run",
        (
            Key(
                "r",
                "resume an interrupted, failed or max_turns run in this process",
                Bind(
                    APP,
                    "r",
                    "resume",
                    "Resume",
                    palette=("Resume run", "Resume the selected run in this process"),
                ),
            ),
            Key(
                "x",
                "stop the resume in flight; a running tool is waited for (the run shows stopping), "
                "its result recorded; the run stays interrupted and resumable",
                Bind(
                    APP,
                    "x",
                    "stop_resume",
                    "Stop",
                    palette=(
                        "Stop resume",
                        "Stop the resume in flight; the run stays resumable",
                    ),
                ),
            ),
            Key(
                "c",
                "copy the run id (the notice shows it whole)",
                Bind(
                    APP,
                    "c",
                    "copy_id",
                    "Copy id",
                    palette=("Copy run id", "Copy the selected run's id"),
                ),
            ),
            Key(
                "ctrl+r",
                "reload the directory (with --no-watch; a watched one is always current)",
                Bind(
                    APP,
                    "ctrl+r",
                    "reload",
                    "Reload",
                    palette=("Reload", "Read the directory again, when not watching it"),
                ),
            ),
        ),
    ),
    (
        "Approval (in the approvals pane)",
        (
            Key(
                "a  A",
                "approve the highlighted call / every call that waits",
                Bind(
                    APPROVALS,
                    "a",
                    "approve",
                    "Approve",
                    palette=("Approve call", "Approve the highlighted call waiting for approval"),
                ),
                Bind(
                    APPROVALS,
                    "A,shift+a",
                    "approve_all",
                    "Approve all",
                    palette=("Approve all calls", "Approve every call of the run that waits"),
                ),
            ),
            Key(
                "e, ctrl+s",
                "edit its arguments, then approve (a bad edit never is)",
                Bind(
                    APPROVALS,
                    "e",
                    "edit",
                    "Edit & approve",
                    palette=("Edit and approve", "Edit the call's arguments, then approve"),
                ),
                Bind(ARGS_EDITOR, "ctrl+s", "save", "Approve"),
                Bind(ARGS_EDITOR, "escape", "cancel", "Cancel"),
            ),
            Key(
                "n",
                "reject it, with a reason (the model is told it)",
                Bind(
                    APPROVALS,
                    "n",
                    "reject",
                    "Reject",
                    palette=("Reject call", "Reject the highlighted call, with a reason"),
                ),
                Bind(REASON_SCREEN, "escape", "cancel", "Cancel"),
            ),
        ),
    ),
    (
        "App",
        (
            Key(
                "m",
                "maximize the focused pane, or bring every pane back (esc too)",
                Bind(
                    APP,
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
                "quit; a resume in flight is stopped first, as x does (q again quits at once: "
                "a running tool's result is then lost, and the next resume runs it again)",
                Bind(APP, "q", "quit", "Quit"),
                Bind(APP, "ctrl+c", "quit", "Quit", show=False),
            ),
        ),
    ),
)

# The order of the keys in the footer (Textual shows a widget's bindings in the order they are
# given); keys not named here come after these.
FOOTER_ORDER = (
    "approve",
    "approve_all",
    "edit",
    "reject",
    "drill",
    "back",
    "filter",
    "cycle_status",
    "resume",
    "stop_resume",
    "follow",
    "copy_id",
    "reload",
    "toggle_maximize",
    "view_raw",
    "copy_value",
    "help",
    "quit",
    "search",
    "clear_search",
)

# What a narrow footer keeps first, in this order (`KeysFooter`); keys not named here come
# after these, as room allows. Help and quit first: they lead to every other key and out.
FOOTER_PRIORITY = (
    "help",
    "quit",
    "approve",
    "reject",
    "edit",
    "approve_all",
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

# How a palette entry names a key Textual calls otherwise.
_SHOWN = {"slash": "/", "question_mark": "?", "escape": "esc"}


def _binds() -> list[Bind]:
    return [bind for _, keys in HELP for key in keys for bind in key.binds]


def bindings(owner: str) -> list[Binding]:
    """The bindings of `owner`, in footer order."""
    rank = {action: n for n, action in enumerate(FOOTER_ORDER)}
    own = [b for b in _binds() if b.owner == owner]
    own.sort(key=lambda b: rank.get(b.action, len(rank)))
    return [Binding(b.keys, b.action, b.footer, show=b.show) for b in own]


def palette() -> list[tuple[str, str, str]]:
    """The command palette's entries: title, what it does and its key, the action it runs
    (the app's, or `id.action`: that of the widget with that id), in footer order."""
    rank = {action: n for n, action in enumerate(FOOTER_ORDER)}
    entries = [b for b in _binds() if b.palette is not None]
    entries.sort(key=lambda b: (b.owner != APP, rank.get(b.action, len(rank))))
    out = []
    for b in entries:
        assert b.palette is not None
        title, does = b.palette
        key = b.keys.split(",")[0]
        action = b.action if b.owner == APP else f"{b.owner}.{b.action}"
        out.append((title, f"{does} ({_SHOWN.get(key, key)})", action))
    return out
