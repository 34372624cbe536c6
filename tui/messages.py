"""The app's own messages: what widgets and workers tell the app."""

from __future__ import annotations

from textual.message import Message

from agentor.engine.events import Event


class RunHighlighted(Message):
    """The run list's cursor is on another run (None: on no run)."""

    def __init__(self, run_id: str | None) -> None:
        super().__init__()
        self.run_id = run_id


class EventHighlighted(Message):
    """The timeline's cursor is on another line of the open run (None: on none); `live`: it
    moved by itself, following new events."""

    def __init__(self, index: int | None, live: bool = False) -> None:
        super().__init__()
        self.index = index
        self.live = live


class FilterChanged(Message):
    """The filter text changed (typing narrows the list as it goes)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class FilterSubmitted(Message):
    """`enter` in the filter: back to the list, first match selected."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class FilterCleared(Message):
    """`esc` in the filter: no filter."""


class ResumeProgress(Message):
    """An event of an in-process resume, as it was recorded (or a transient text delta)."""

    def __init__(self, run_id: str, event: Event) -> None:
        super().__init__()
        self.run_id = run_id
        self.event = event


class ResumeHeld(Message):
    """An in-process resume has taken its run's lock: the run is running from now on (its
    first step may take a while to be recorded)."""

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
