"""`place_toasts`: where the app's notes (Textual's toasts) go on a dialog.

Textual draws its toasts in the bottom-right corner of whatever screen is on top, over it. On
the runs screen that is news beside the panes; over a dialog (a modal screen: help, the argument
editor, the search) it cut through the dialog's frame. There the toasts are drawn inside the
dialog, in the bottom-right corner of its frame: the dialog stays whole, and the news is where
the eyes are, for the few seconds it stays (`tui.shown_notes`); placed again after each layout
of the dialog's screen, so a dialog that grows or shrinks takes them along.
"""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Tooltip

# Private: Textual exports no name for the widget that holds a screen's toasts.
from textual.widgets._toast import ToastRack

FOLLOWING = "-following-the-dialog"  # the rack is placed again after each layout of the screen


def dialog_of(screen: Screen[Any]) -> Widget | None:
    """The dialog a modal screen shows (its one widget of its own), laid out; else None."""
    if not isinstance(screen, ModalScreen):
        return None
    own = [w for w in screen.children if not isinstance(w, ToastRack | Tooltip) and w.display]
    return own[0] if own and own[0].region else None


def place_toasts(screen: Screen[Any]) -> None:
    """The toasts of a modal `screen` inside its dialog's frame (a cell in from each side);
    those of any other screen where Textual puts them."""
    try:
        rack = screen.get_child_by_type(ToastRack)
    except NoMatches:
        return  # notifications off
    dialog = dialog_of(screen)
    if dialog is None:
        return
    if not rack.has_class(FOLLOWING):
        # A dialog that grows or shrinks (an editor's error line) takes its toasts along.
        rack.add_class(FOLLOWING)
        screen.screen_layout_refresh_signal.subscribe(rack, place_toasts)
    area = dialog.region
    # Docked at the bottom as Textual docks it: raised above the frame's bottom side, moved in
    # past its left side, as wide and as high as the inside of the frame at most.
    rack.styles.margin = (0, 0, screen.size.height - area.bottom + 1, area.x + 1)
    rack.styles.width = max(1, area.width - 2)
    rack.styles.max_height = max(1, area.height - 2)
