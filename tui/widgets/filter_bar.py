"""`FilterBar`: the `/` filter over id, agent, model, status and prompt."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Input

from tui.keys import bindings
from tui.keys.model import FILTER_BAR


class FilterBar(Input):
    """Hidden until `/`; typing narrows the list, `enter` keeps the filter, `esc` drops it."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(FILTER_BAR)

    # Input posts these itself (`self.Changed(...)`): nested here, they are the bar's own.
    class Changed(Input.Changed):
        """The filter text changed (typing narrows the list as it goes): `value`."""

    class Submitted(Input.Submitted):
        """`enter`: the filter is kept (`value`), the bar closes, back to the list."""

    @dataclass
    class Cleared(Message):
        """`esc`: no filter."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder="filter: id, agent, model, status, prompt", id=id)

    def open(self) -> None:
        self.display = True
        # At once, not `focus()` (which waits a turn): what is typed next lands here.
        self.screen.set_focus(self)

    def action_clear_filter(self) -> None:
        self.value = ""
        self.display = False
        self.post_message(self.Cleared())
