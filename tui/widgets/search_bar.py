"""`SearchBar`: the timeline's `/` search, under its events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Input

from tui.keys import bindings
from tui.keys.model import SEARCH_BAR


class SearchBar(Input):
    """Hidden until `/` in the timeline; matches show as you type, `enter` goes to the first
    one from the cursor on and keeps the search (`n`/`N`), `esc` drops it."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(SEARCH_BAR)

    # Not `Changed`/`Submitted`: Input posts its own under those names, and a search is only
    # what is typed while the bar is open.
    @dataclass
    class Typed(Message):
        query: str

    @dataclass
    class Entered(Message):
        query: str

    @dataclass
    class Dropped(Message):
        pass

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder="search the events (enter: go, esc: clear)", id=id)

    def open(self, query: str) -> None:
        self.value = query
        self.display = True
        # At once, not `focus()` (which waits a turn): what is typed next lands here.
        self.screen.set_focus(self)

    def close(self) -> None:
        self.display = False

    def action_cancel(self) -> None:
        self.value = ""
        self.close()
        self.post_message(self.Dropped())

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.display:
            self.post_message(self.Typed(event.value))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.close()
        self.post_message(self.Entered(event.value))
