"""Every key the app binds is told in the help screen and README's keys table, and every
action (but moving the cursor) can be found in the command palette."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tui.keys import BINDINGS, PALETTE
from tui.widgets.cursor_list import CursorList
from tui.widgets.help_screen import KEYS
from tui.widgets.timeline import Timeline

# How the help and README write the keys Textual names otherwise.
SHOWN = {
    "slash": "/",
    "question_mark": "?",
    "escape": "esc",
    "up": "↑",
    "down": "↓",
    "pageup": "pgup",
    "pagedown": "pgdn",
}
# Moving the cursor is not looked for by name.
NOT_IN_PALETTE = {"cursor_up", "cursor_down", "page_up", "page_down", "first", "last"}
# Textual's own palette commands cover these.
TEXTUAL_COMMANDS = {"quit": "Quit", "clear_search": "Back"}


def keys_of(bindings) -> set[str]:
    keys = set()
    for binding in bindings:
        for key in binding.key.split(","):
            if not key.startswith("shift+"):  # how some terminals send N, E, T, G
                keys.add(SHOWN.get(key, key))
    return keys


BOUND = [*BINDINGS, *Timeline.BINDINGS, *CursorList.BINDINGS]


def test_every_key_is_in_the_help_screen() -> None:
    helped = {word for key, what in KEYS if what for word in re.split(r"[\s,]+", key)}
    assert keys_of(BOUND) - helped == set()


def test_every_key_is_in_the_readmes_keys_table() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| key | does |") :].split("\n\n")[0]
    told = set()
    for row in table.splitlines()[2:]:
        told |= set(re.findall(r"`([^`]+)`", row.split("|")[1]))
    assert keys_of(BOUND) - told == set()


def test_every_action_is_in_the_command_palette() -> None:
    in_palette = {action.rpartition(".")[2] for _, _, action in PALETTE}
    actions = {b.action for b in BOUND} - NOT_IN_PALETTE - set(TEXTUAL_COMMANDS)
    assert actions - in_palette == set()
