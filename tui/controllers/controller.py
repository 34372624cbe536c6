"""`Controller`: the base of the app's controllers, widgets that draw nothing.

A controller is a widget so that its workers are `@work` methods and its timers are its own
(both end when it is removed, as the app closes). The app makes and holds the controllers; the
screen they report to mounts them (`tui.screens.runs.RunsScreen`). A controller reports only by
messages, which it posts to that screen (Harlequin's driver does the same with its app): the
screen decides what it shows. Posting to a screen that is closing does nothing, so a controller
needs no "is the screen still there?" checks, and posting is safe from any thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from textual.message import Message
from textual.message_pump import MessagePump
from textual.widget import Widget

from tui.text.notices import Note


class Controller(Widget):
    DEFAULT_CSS = """
    Controller {
        display: none;
    }
    """

    _reports_to: MessagePump

    @dataclass
    class Notice(Message):
        """Something to tell the user (`RunsApp.tell_note` shows it literally)."""

        note: Note

    def on_mount(self) -> None:
        # Kept: a thread that reports (a store's lock hook) may have no app in its context.
        self._reports_to = self.screen

    def report(self, message: Message) -> None:
        """Post `message` to the screen (from any thread)."""
        self._reports_to.post_message(message)

    def say(self, note: Note) -> None:
        self.report(self.Notice(note))


def while_running(handler: Callable[..., None]) -> Callable[..., None]:
    """For the screen's handlers of reports: a report is handled only while the app runs
    (`run_test` shuts an app down while its loops still turn, and a report queued then would
    find its screen half gone)."""

    @functools.wraps(handler)
    def handle(self: MessagePump, *args: object) -> None:
        if self.app.is_running:
            handler(self, *args)

    return handle
