"""`Controller`: the base of the app's controllers, widgets that draw nothing.

A controller is a widget so that its workers are `@work` methods and its timers are its own
(both end when it is removed, as the app closes). It reports only by messages, which it posts
to the app (Harlequin's driver does the same): the app decides what the screen shows. Posting
to an app that is closing does nothing, so a controller needs no "is the app still there?"
checks, and posting is safe from any thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.app import App
from textual.message import Message
from textual.widget import Widget

from tui.text.notices import Note


class Controller(Widget):
    DEFAULT_CSS = """
    Controller {
        display: none;
    }
    """

    _reports_to: App[object]

    @dataclass
    class Notice(Message):
        """Something to tell the user (`RunsApp.tell` shows it literally)."""

        note: Note

    def on_mount(self) -> None:
        # Kept: a thread that reports (a store's lock hook) may have no app in its context.
        self._reports_to = self.app

    def report(self, message: Message) -> None:
        """Post `message` to the app (from any thread)."""
        self._reports_to.post_message(message)

    def say(self, note: Note) -> None:
        self.report(self.Notice(note))


def while_running(handler: Callable[..., None]) -> Callable[..., None]:
    """For the app's handlers of reports: a report is handled only while the app runs
    (`run_test` shuts an app down while its loop still turns, and a report queued then would
    find its screen half gone)."""

    @functools.wraps(handler)
    def handle(self: App[Any], *args: object) -> None:
        if self.is_running:
            handler(self, *args)

    return handle
