"""Every key is described once, in `tui.keys`: the bindings of every widget and screen are made
from its table, every key the app binds is written in the help screen's lines and in the
manual's keys table (docs/tui.md), and every action (but moving the cursor) is in the command
palette."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tui.app import RunsApp
from tui.keys import HELP, palette
from tui.screens.runs import RunsScreen
from tui.widgets.approval_pane import ApprovalList
from tui.widgets.args_editor import ArgsEditor
from tui.widgets.compare_screen import CompareScreen
from tui.widgets.cursor_list import CursorList
from tui.widgets.delete_screen import DeleteScreen
from tui.widgets.experiment_form import ExperimentForm
from tui.widgets.experiments_screen import ExperimentsScreen
from tui.widgets.export_screen import ExportScreen
from tui.widgets.filter_bar import FilterBar
from tui.widgets.fork_screen import ForkScreen
from tui.widgets.fork_tree import ForkTreeScreen
from tui.widgets.help_screen import HelpScreen
from tui.widgets.pairs_screen import PairsScreen
from tui.widgets.playback_screen import PlaybackScreen
from tui.widgets.raw_event import RawEventScreen
from tui.widgets.reason_screen import ReasonScreen
from tui.widgets.run_list import RunList
from tui.widgets.runs_search import RunsSearchScreen
from tui.widgets.search_bar import SearchBar
from tui.widgets.stats_screen import StatsScreen
from tui.widgets.timeline import Timeline

# How the help and the manual write the keys Textual names otherwise.
SHOWN = {
    "slash": "/",
    "question_mark": "?",
    "escape": "esc",
    "up": "↑",
    "down": "↓",
    "pageup": "pgup",
    "pagedown": "pgdn",
    "full_stop": ".",
    "plus": "+",
    "minus": "-",
    "right": "→",
}
# Moving the cursor is not looked for by name.
NOT_IN_PALETTE = {"cursor_up", "cursor_down", "page_up", "page_down", "first", "last"}
# Nor `g`'s hidden twin (on a call that cannot be given a result it says why): the palette's
# entry for `g` does the same.
NOT_IN_PALETTE |= {"no_result_to_give"}
# Nor are the argument editor's own keys (ctrl+s approves, esc leaves): it is a modal.
NOT_IN_PALETTE |= {"save", "cancel"}
# Nor the compare view's and the playback's (modal screens: the palette is not open there).
NOT_IN_PALETTE |= {"next_difference", "previous_difference", "dismiss", "toggle_pause", "step"}
NOT_IN_PALETTE |= {"speed(1)", "speed(2)", "speed(10)", "faster", "slower"}
# Nor the experiments screens' (modal too), nor `X`'s hidden twin (the palette's entry for `X`
# is there while runs are selected).
NOT_IN_PALETTE |= {"open_experiment", "compare_pair", "cycle_sort", "nothing_selected"}
NOT_IN_PALETTE |= {"stop_experiment", "cannot_stop", "resume_experiment", "cannot_resume"}
# Textual's own palette commands cover these.
TEXTUAL_COMMANDS = {"quit": "Quit", "clear_search": "Back"}
# Every class that binds keys, and its bindings as Textual sees them (a subclass's include
# its base's: Timeline's include CursorList's).
BINDERS = (
    *(RunsApp, RunsScreen, CursorList, RunList, Timeline, ApprovalList, FilterBar, SearchBar),
    HelpScreen,
    *(RawEventScreen, ArgsEditor, ReasonScreen, ForkScreen, ForkTreeScreen),
    *(CompareScreen, PlaybackScreen),
    *(DeleteScreen, ExportScreen, RunsSearchScreen, StatsScreen),
    *(ExperimentsScreen, PairsScreen, ExperimentForm),
)


def keys_of(bindings) -> set[str]:
    keys = set()
    for binding in bindings:
        for key in binding.key.split(","):
            if not key.startswith("shift+"):  # how some terminals send N, E, T, G
                keys.add(SHOWN.get(key, key))
    return keys


BOUND = [
    *RunsApp.BINDINGS,
    *RunsScreen.BINDINGS,
    *Timeline.BINDINGS,
    *CursorList.BINDINGS,
    *ApprovalList.BINDINGS,
    *ArgsEditor.BINDINGS,
    *CompareScreen.BINDINGS,
    *PlaybackScreen.BINDINGS,
    *RunList.BINDINGS,
    *ExperimentsScreen.BINDINGS,
    *PairsScreen.BINDINGS,
]


def test_every_binding_is_made_from_the_keys_table() -> None:
    in_table = {(b.keys, b.action, b.footer) for _, keys in HELP for k in keys for b in k.binds}
    bound = {(b.key, b.action, b.description) for cls in BINDERS for b in cls.BINDINGS}
    assert bound == in_table


def test_every_key_is_in_the_help_screen() -> None:
    shown = {w for _, keys in HELP for key in keys for w in re.split(r"[\s,]+", key.shown)}
    assert keys_of(BOUND) - shown == set()


def test_every_key_is_in_the_manuals_keys_table() -> None:
    manual = (ROOT / "docs" / "tui.md").read_text()
    table = manual[manual.index("## Keys") :].split("\n\n")[1]
    told = set()
    for row in table.splitlines()[2:]:
        told |= set(re.findall(r"`([^`]+)`", row.split("|")[1]))
    assert keys_of(BOUND) - told == set()


def test_every_action_is_in_the_command_palette() -> None:
    in_palette = {action.rpartition(".")[2] for _, _, action in palette()}
    actions = {b.action for b in BOUND} - NOT_IN_PALETTE - set(TEXTUAL_COMMANDS)
    assert actions - in_palette == set()
    # Each entry names its key.
    assert ("Follow", "Keep the newest event in view (f)", "screen.follow") in palette()
    assert ("Previous error", "The error before the cursor (E)", "timeline.previous_error") in (
        palette()
    )
