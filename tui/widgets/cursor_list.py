"""`CursorList`: a virtual list with a row cursor, drawn through Textual's line API.

Only the rows on screen are ever turned into text (`render_row`), so a list of 100,000 rows
costs what a screenful costs. Subclasses say how many rows there are and what each says.

Live lists change a row or two at a time, so redrawing is as narrow as the change: rows added
at the end (`rows_appended`) or changed in place (`rows_updated`) keep every other line cached
and only their own lines are repainted; `rows_changed` is for when anything may have moved.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget

from tui.keys import bindings
from tui.keys.model import LIST


class CursorList(ScrollView, can_focus=True):
    """Rows `0 .. row_count()-1`, one line each, an optional fixed header line, a cursor."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(LIST)
    COMPONENT_CLASSES: ClassVar[set[str]] = {"cursor-list--cursor", "cursor-list--header"}
    DEFAULT_CSS = """
    CursorList {
        overflow-x: hidden;
        overflow-y: auto;
        & > .cursor-list--cursor { background: $surface-lighten-2; }
        &:focus > .cursor-list--cursor { background: $block-cursor-background; }
        & > .cursor-list--header { text-style: bold; color: $text-muted; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.cursor = -1
        self._cache: LRUCache[tuple[int, bool, int], Strip] = LRUCache(512)
        self._titles: tuple[str | None, str | None] = ("", "")

    # -- what subclasses provide ---------------------------------------------------------------

    def row_count(self) -> int:
        raise NotImplementedError

    def render_row(self, index: int, width: int) -> Text:
        raise NotImplementedError

    has_header: ClassVar[bool] = False

    def render_header(self, width: int) -> Text | None:
        """The line that stays at the top while the rows scroll (when `has_header`)."""
        return None

    def empty_text(self) -> Text:
        """What the list says when it has no rows."""
        return Text("")

    def cursor_moved(self) -> None:
        """Called after the cursor moved to another row (or off every row)."""

    # -- state changes -------------------------------------------------------------------------

    @property
    def header_height(self) -> int:
        return 1 if self.has_header else 0

    def rows_changed(self) -> None:
        """The rows' number or content changed: redraw, keep the cursor on a row."""
        self._cache.clear()
        self._count_rows()
        self.refresh()

    def rows_appended(self, before: int) -> None:
        """Rows were added after the first `before`, which are as they were: only the new
        rows that land in view are drawn (a live run grows by a line at a time)."""
        if before <= 0:
            self.rows_changed()  # the empty message gives way to rows
            return
        self._refresh_rows(before, self._count_rows())

    def rows_updated(self, indexes: Iterable[int]) -> None:
        """The rows at `indexes` read differently now; the others are as they were."""
        width = self.scrollable_content_region.width
        for index in indexes:
            self._cache.discard((index, True, width))
            self._cache.discard((index, False, width))
            self._refresh_rows(index, index + 1)

    def rows_restyled(self) -> None:
        """The same rows may each look different (a search marks its matches): draw the
        rows on screen again."""
        self._cache.clear()
        self.refresh()

    def move_cursor(self, index: int, notify: bool = True) -> None:
        count = self.row_count()
        index = max(0, min(index, count - 1)) if count else -1
        before = self.cursor
        moved = index != before
        self.cursor = index  # cached lines are keyed by whether they hold the cursor
        if moved:
            # Only the two rows the cursor left and reached look different (a scroll, if one
            # follows, repaints the rest by itself).
            self._refresh_rows(before, before + 1)
            self._refresh_rows(index, index + 1)
        self.scroll_to_cursor()
        if moved and notify:
            self.cursor_moved()

    def set_titles(self, title: str | None, subtitle: str | None) -> None:
        """Border title and subtitle, literal; unchanged ones are left alone (setting one
        repaints the whole widget)."""
        if title != self._titles[0]:
            self.border_title = Content(title) if title is not None else None
        if subtitle != self._titles[1]:
            self.border_subtitle = Content(subtitle) if subtitle is not None else None
        self._titles = (title, subtitle)

    def _count_rows(self) -> int:
        """Size the scrollable area to the rows and keep the cursor on one; the row count."""
        count = self.row_count()
        size = Size(self.size.width, count + self.header_height)
        if size != self.virtual_size:
            shown = size.height > self.container_size.height
            if self.container_size and shown == self.show_vertical_scrollbar:
                # Only the scrollbar's thumb moves: a layout would repaint every widget on
                # the screen, and on a live run that would be after every event.
                self.set_reactive(Widget.virtual_size, size)
                self._scroll_update(size)
            else:
                self.virtual_size = size  # the scrollbar comes or goes: lay out again
        if count == 0:
            self.cursor = -1
        elif self.cursor >= count:
            self.cursor = count - 1
        elif self.cursor < 0:
            self.cursor = 0
        return count

    def _refresh_rows(self, start: int, end: int) -> None:
        """Repaint the lines of rows `start .. end-1` that are in view (the header stays)."""
        top = round(self.scroll_y)
        start = max(start, top, 0)
        end = min(end, top + max(0, self.scrollable_content_region.height - self.header_height))
        if end > start:
            self.refresh_lines(start + self.header_height, end - start)

    def scroll_to_cursor(self) -> None:
        if self.cursor < 0:
            return
        height = self.scrollable_content_region.height - self.header_height
        if height <= 0:  # not laid out yet
            self.call_after_refresh(self.scroll_to_cursor)
            return
        top = round(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True, force=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True, force=True)

    @property
    def at_end(self) -> bool:
        return self.cursor >= self.row_count() - 1

    # -- keys and mouse ------------------------------------------------------------------------

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - self.header_height - 1)

    def action_cursor_up(self) -> None:
        self.move_cursor(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(self.cursor + 1)

    def action_page_up(self) -> None:
        self.move_cursor(self.cursor - self._page())

    def action_page_down(self) -> None:
        self.move_cursor(self.cursor + self._page())

    def action_first(self) -> None:
        self.move_cursor(0)

    def action_last(self) -> None:
        self.move_cursor(self.row_count() - 1)

    def on_click(self, event: events.Click) -> None:
        where = event.get_content_offset(self)
        if where is not None and where.y >= self.header_height:
            self.move_cursor(round(self.scroll_y) + where.y - self.header_height)

    # -- drawing -------------------------------------------------------------------------------

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def on_resize(self) -> None:
        # The cached lines are kept: they are keyed by the width they were drawn at.
        self.virtual_size = Size(self.size.width, self.row_count() + self.header_height)
        # A smaller screen (or a pane maximized and back) must not leave the cursor out of
        # sight: scroll to it once the new size is laid out.
        self.call_after_refresh(self.scroll_to_cursor)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.header_height:
            if y == 0:
                header = self.render_header(width) or Text()
                return self._strip(
                    header, width, base + self.get_component_rich_style("cursor-list--header")
                )
            y -= 1
        count = self.row_count()
        if count == 0:
            text = self.empty_text() if y == 1 else Text()
            return self._strip(text, width, base)
        index = round(self.scroll_y) + y
        if index >= count:
            return Strip.blank(width, base)
        on_cursor = index == self.cursor
        key = (index, on_cursor, width)
        strip = self._cache.get(key)
        if strip is None:
            style = base
            if on_cursor:
                style = base + self.get_component_rich_style("cursor-list--cursor")
            strip = self._strip(self.render_row(index, width), width, style)
            self._cache[key] = strip
        return strip

    def _strip(self, text: Text, width: int, style: Style) -> Strip:
        text.truncate(width, overflow="ellipsis", pad=True)
        segments = list(text.render(self.app.console))
        return Strip(Segment.apply_style(segments, style), width).crop_extend(0, width, style)
