"""`TimelinePane`: the timeline, its search bar and the line a resume streams into."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical

from tui.widgets.search_bar import SearchBar
from tui.widgets.stream_line import StreamLine
from tui.widgets.timeline import Timeline


class TimelinePane(Vertical):
    """Wires the search bar to the timeline: what is typed searches the events."""

    def compose(self) -> ComposeResult:
        yield Timeline(id="timeline")
        yield SearchBar(id="search")
        yield StreamLine(id="stream")

    def on_mount(self) -> None:
        self.query_one(SearchBar).display = False

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    def open_search(self) -> None:
        self.query_one(SearchBar).open(self.timeline.finder.query)

    @on(Timeline.SearchWanted)
    def _search_wanted(self, message: Timeline.SearchWanted) -> None:
        message.stop()
        self.open_search()

    @on(SearchBar.Typed)
    def _changed(self, message: SearchBar.Typed) -> None:
        message.stop()
        self.timeline.search(message.query)

    @on(SearchBar.Entered)
    def _submitted(self, message: SearchBar.Entered) -> None:
        message.stop()
        timeline = self.timeline
        self.screen.set_focus(timeline)
        timeline.search(message.query)
        timeline.first_match()

    @on(SearchBar.Dropped)
    def _cancelled(self, message: SearchBar.Dropped) -> None:
        message.stop()
        self.screen.set_focus(self.timeline)
        self.timeline.clear_search()
