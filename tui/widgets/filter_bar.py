"""`FilterBar`: the `/` filter over id, agent, model, status and prompt."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.binding import Binding, BindingType
from textual.widgets import Input

from ..messages import FilterChanged, FilterCleared, FilterSubmitted


class FilterBar(Input):
    """Hidden until `/`; typing narrows the list, `enter` keeps the filter, `esc` drops it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(placeholder="filter: id, agent, model, status, prompt", id=id)

    def open(self) -> None:
        self.display = True
        # At once, not `focus()` (which waits a turn): what is typed next lands here.
        self.screen.set_focus(self)

    def action_clear_filter(self) -> None:
        self.value = ""
        self.display = False
        self.post_message(FilterCleared())

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(FilterChanged(event.value))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.value:
            self.display = False
        self.post_message(FilterSubmitted(event.value))
