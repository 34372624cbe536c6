"""What a key is: `Key`, a line of the help screen, with the `Bind`ings behind it; and whose
bindings they are (the owners)."""

from __future__ import annotations

from dataclasses import dataclass

# Whose bindings a key is (the owner of `timeline` is the widget with that id: the palette
# runs its actions as `timeline.<action>`). The app's are quit and help, which work the same
# whatever the screen; the screen's (`RunsScreen`, the run list and its panes) all the others.
APP = "app"
SCREEN = "screen"
LIST = "list"  # every cursor list: the run list and the timeline
TIMELINE = "timeline"
FILTER_BAR = "filter_bar"
SEARCH_BAR = "search_bar"
HELP_SCREEN = "help_screen"
RAW_SCREEN = "raw_screen"
APPROVALS = "approvals"  # the approvals pane's list of gated calls
ARGS_EDITOR = "args_editor"
REASON_SCREEN = "reason_screen"
FORK_SCREEN = "fork_screen"  # the form `F` opens
FORK_TREE = "fork_tree"  # the tree `L` opens
COMPARE_SCREEN = "compare_screen"
PLAYBACK_SCREEN = "playback_screen"
CONFIRM_SCREEN = "confirm_screen"  # a question asked before deleting a run
EXPORT_SCREEN = "export_screen"
RUNS_SEARCH = "runs_search"  # the search over every run (ctrl+f)
STATS_SCREEN = "stats_screen"
RUN_LIST = "runs"  # the run list alone (the widget with that id): space selects runs
EXPERIMENTS_SCREEN = "experiments_screen"  # the list `E` opens
PAIRS_SCREEN = "pairs_screen"  # an experiment's pairs
EXPERIMENT_FORM = "experiment_form"  # the form `X` opens on the selected runs


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
