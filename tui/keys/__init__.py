"""Every key of the app, each described once: the help screen's lines (`HELP`), each with the
bindings behind it, their footer words and command palette entries. The widgets' and screens'
`BINDINGS`, the help screen and the palette are all made from this table: one module a help
section (`runs`, `timeline`, ...), and here the order they come in."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from tui.keys import (
    app_keys,
    approval,
    compare,
    event,
    experiments,
    forks,
    run,
    runs,
    store_keys,
    timeline,
)
from tui.keys.model import (
    APP,
    APPROVALS,
    ARGS_EDITOR,
    COMPARE_SCREEN,
    CONFIRM_SCREEN,
    EXPERIMENT_FORM,
    EXPERIMENTS_SCREEN,
    EXPORT_SCREEN,
    FILTER_BAR,
    FORK_SCREEN,
    FORK_TREE,
    HELP_SCREEN,
    LIST,
    PAIRS_SCREEN,
    PLAYBACK_SCREEN,
    RAW_SCREEN,
    REASON_SCREEN,
    RUN_LIST,
    RUNS_SEARCH,
    SCREEN,
    SEARCH_BAR,
    STATS_SCREEN,
    TIMELINE,
    Bind,
    Key,
)

__all__ = [
    "APP",
    "APPROVALS",
    "ARGS_EDITOR",
    "COMPARE_SCREEN",
    "CONFIRM_SCREEN",
    "EXPERIMENTS_SCREEN",
    "EXPERIMENT_FORM",
    "EXPORT_SCREEN",
    "FILTER_BAR",
    "FOOTER_ORDER",
    "FOOTER_PRIORITY",
    "FORK_SCREEN",
    "FORK_TREE",
    "HELP",
    "HELP_SCREEN",
    "LIST",
    "PAIRS_SCREEN",
    "PLAYBACK_SCREEN",
    "RAW_SCREEN",
    "REASON_SCREEN",
    "RUNS_SEARCH",
    "RUN_LIST",
    "SCREEN",
    "SEARCH_BAR",
    "STATS_SCREEN",
    "TIMELINE",
    "Bind",
    "Key",
    "bindings",
    "palette",
]

HELP: tuple[tuple[str, tuple[Key, ...]], ...] = (
    runs.SECTION,
    timeline.SECTION,
    compare.SECTION,
    event.SECTION,
    forks.SECTION,
    store_keys.SECTION,  # before Run: the help's two columns then fit 160x45
    run.SECTION,
    approval.SECTION,
    experiments.SECTION,
    app_keys.SECTION,
)

# The order of the keys in the footer (Textual shows a widget's bindings in the order they are
# given); keys not named here come after these.
FOOTER_ORDER = (
    "approve",
    "approve_all",
    "give_result",
    "edit",
    "reject",
    "drill",
    "back",
    "filter",
    "cycle_status",
    "resume",
    "stop_resume",
    "fork",
    "start_experiment",
    "follow",
    "copy_id",
    "pin",
    "delete_run",
    "export",
    "search_runs",
    "stats",
    "reload",
    "experiments",  # after reload: with --no-watch, a full footer keeps reload
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
    "start_experiment",  # shown only while runs are selected
    "stop_experiment",  # shown only while the experiment runs here
    "resume_experiment",  # shown only while it has pairs pending
    "approve",
    "reject",
    "give_result",
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


def bindings(owner: str) -> list[BindingType]:
    """The bindings of `owner`, in footer order."""
    rank = {action: n for n, action in enumerate(FOOTER_ORDER)}
    own = [b for b in _binds() if b.owner == owner]
    own.sort(key=lambda b: rank.get(b.action, len(rank)))
    return [Binding(b.keys, b.action, b.footer, show=b.show) for b in own]


def palette() -> list[tuple[str, str, str]]:
    """The command palette's entries: title, what it does and its key, the action it runs
    (the app's, `screen.action`: the runs screen's, or `id.action`: that of the widget with
    that id), in footer order."""
    rank = {action: n for n, action in enumerate(FOOTER_ORDER)}
    entries = [b for b in _binds() if b.palette is not None]
    entries.sort(key=lambda b: (b.owner not in (APP, SCREEN), rank.get(b.action, len(rank))))
    out = []
    for b in entries:
        assert b.palette is not None
        title, does = b.palette
        key = b.keys.split(",")[0]
        action = b.action if b.owner == APP else f"{b.owner}.{b.action}"
        out.append((title, f"{does} ({_SHOWN.get(key, key)})", action))
    return out
