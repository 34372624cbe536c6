"""`KeysFooter`: the footer, keeping the keys that matter most when the screen is narrow."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from rich.cells import cell_len
from textual import events
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # what Footer.compose yields (not exported)

from tui.keys import FOOTER_PRIORITY

# Below this width the footer is drawn compact (a cell less around each key).
COMPACT_BELOW = 120


class KeysFooter(Footer):
    """Textual's footer, cut to its width by priority instead of at its right edge.

    Every key fits on a wide screen. On a narrow one (80 or 100 columns) it is compact, and
    the keys of `FOOTER_PRIORITY` are kept first, in that order (help and quit before anything
    else), the others as room allows; the keys keep their usual order on screen. `?` and the
    command palette (always shown, on the right) list every key.
    """

    def __init__(self) -> None:
        super().__init__()
        self._width = 0

    def compose(self) -> Iterator[Widget]:
        keys = list(super().compose())
        docked = [k for k in keys if isinstance(k, FooterKey) and k.has_class("-command-palette")]
        shown = [k for k in keys if isinstance(k, FooterKey) and k not in docked]
        compact = self.compact
        room = self.size.width - sum(_width(k, compact) + 1 for k in docked)  # + its border
        kept = _by_priority(shown, room, compact)
        yield from (k for k in shown if k in kept)
        yield from docked

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            self.compact = self._width < COMPACT_BELOW
            self.call_after_refresh(self.recompose)


def _width(key: FooterKey, compact: bool) -> int:
    """Cells a key takes in the footer: its key and description, padded, and in compact
    style a cell less (Footer's CSS)."""
    return cell_len(key.key_display) + cell_len(key.description) + (2 if compact else 3)


def _by_priority(keys: Iterable[FooterKey], room: int, compact: bool) -> set[FooterKey]:
    """The keys that fit in `room` cells, the most important first."""
    rank = {action: n for n, action in enumerate(FOOTER_PRIORITY)}
    kept: set[FooterKey] = set()
    for key in sorted(keys, key=lambda k: rank.get(k.action, len(rank))):
        if _width(key, compact) <= room:
            kept.add(key)
            room -= _width(key, compact)
    return kept
