"""Textual's Pilot made to wait for the app on a busy machine.

`Pilot.pause()` (and a `press`) waits for the messages queued at that moment, then until the
process stops using the CPU (`textual._wait.wait_for_idle`): a guess at "the app has done what
it was asked". On a loaded machine the guess is wrong both ways: a process that gets no CPU
looks idle, so the pause ends while the messages that the first ones posted (a cursor move's
Highlighted, bubbling up to the app, which opens the run) are still queued, and the next line
of the test sees the screen as it was. So here a pause (with no delay) and a press also wait,
round after round, until no message waits in the app, its screen or any of its widgets: a
signal, not a guess. Work in threads is not covered: tests wait for it by its own signal.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.pilot import Pilot

_pause = Pilot.pause
_press = Pilot.press
ROUNDS = 100  # a widget posting to itself for ever (none does) ends the wait after these


def quiet(app: App[Any]) -> bool:
    """No message waits in the app, its screen or any widget on it."""
    try:
        nodes = [app, *app.screen.walk_children(with_self=True)]
    except Exception:  # no screen yet, or the app is closing: nothing to wait for
        return True
    return all(node.message_queue_size == 0 for node in nodes)


async def _settle(pilot: Pilot[Any]) -> None:
    for _ in range(ROUNDS):
        if quiet(pilot.app):
            return
        await pilot._wait_for_screen()


async def pause(self: Pilot[Any], delay: float | None = None) -> None:
    await _pause(self, delay)
    if delay is None:
        await _settle(self)


async def press(self: Pilot[Any], *keys: str) -> None:
    await _press(self, *keys)
    await _settle(self)


def install() -> None:
    Pilot.pause = pause  # type: ignore[method-assign]
    Pilot.press = press  # type: ignore[method-assign]
