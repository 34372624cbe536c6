"""`RunsSearchScreen`: `ctrl+f` searches every event of every run of the source
(`agentor.ops.run_search`) and lists the matching runs, each with its matching events: line, type,
and a snippet with the match highlighted, every piece literal.

The search runs in a worker thread and its hits stream in by batches, so the screen never waits
on it; `esc` stops a search under way, and closes the screen once none is. `enter` in the query
starts a search; its first hit takes the focus to the results (unless a new query is being typed
by then), and a search that finds nothing leaves it in the query, saying so, for the next try.
`enter` on an event closes the screen with where it is, (run id, line), for the screen to open;
`tab` goes back to the query, the cursor at its end (to change it, not to type it over). At
most MAX_HITS are listed: a query matching more is stopped there, and says so.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agentor.engine.store.matching import Hit
from agentor.literal import literal_line
from tui.keys import bindings
from tui.keys.model import RUNS_SEARCH
from tui.text.search_text import hit_line, run_heading, search_status

MAX_HITS = 1000
BATCH_S = 0.1  # hits found are shown at least this often
# Searches `query` (the source's: `agentor.ops.run_search.search` over its store); raises
# ValueError for a bad query, OSError when the store cannot be read.
Searcher = Callable[[str], Iterator[Hit]]
# A run's first prompt, as its row knows it (None: not known).
PromptOf = Callable[[str], str | None]


class RunsSearchScreen(ModalScreen[tuple[str, int] | None]):
    BINDINGS: ClassVar[list[BindingType]] = bindings(RUNS_SEARCH)
    DEFAULT_CSS = """
    RunsSearchScreen { align: center middle; }
    #runs-search {
        width: 95%; height: 90%;
        border: round $primary; border-title-style: bold; border-subtitle-color: $text-muted;
        background: $surface; padding: 0 1;
    }
    #runs-search-hits { height: 1fr; border: none; text-wrap: nowrap; text-overflow: ellipsis; }
    #runs-search-status { height: 1; }
    """

    def __init__(self, searcher: Searcher, prompt_of: PromptOf, where: str) -> None:
        super().__init__()
        self.searcher, self.prompt_of, self.where = searcher, prompt_of, where
        self.hits: list[Hit] = []
        self.runs: list[str] = []
        self.query_text = ""
        self.state = "idle"  # searching, done, stopped, full, failed
        self._stop = threading.Event()  # set: the search under way stops (a new one, esc)
        self._found: deque[tuple[threading.Event, Hit]] = deque()  # from the worker

    def compose(self) -> ComposeResult:
        with Vertical(id="runs-search"):
            yield Input(
                placeholder="text in any prompt, argument, result, answer or error",
                select_on_focus=False,  # back from the results: the cursor at the end (below)
            )
            yield Static(Text(""), markup=False, id="runs-search-status")
            yield OptionList(id="runs-search-hits")

    def on_mount(self) -> None:
        box = self.query_one("#runs-search")
        box.border_title = Content(f"Search every run · {literal_line(self.where, 80)}")
        box.border_subtitle = Content("enter searches, then opens · tab · esc stops, closes")
        self.query_one(Input).focus()
        self.set_interval(BATCH_S, self._drain)

    @property
    def hit_list(self) -> OptionList:
        return self.query_one("#runs-search-hits", OptionList)

    @property
    def query_input(self) -> Input:
        return self.query_one(Input)

    @on(events.DescendantFocus)
    def _focused(self, event: events.DescendantFocus) -> None:
        if event.widget is self.query_input:
            self.query_input.action_end()  # the query kept, to be changed: nothing selected

    # -- searching -----------------------------------------------------------------------------

    @on(Input.Submitted)
    def _submitted(self, message: Input.Submitted) -> None:
        message.stop()
        query = message.value
        if not query.strip():
            self._say(Text("Type what to look for.", "italic"))
            return
        self._stop.set()  # a search under way stops: this one replaces it
        self._stop = threading.Event()
        self.hits, self.runs, self.query_text, self.state = [], [], query, "searching"
        self.hit_list.clear_options()
        self._say(search_status(self.state, query, 0, 0))
        self._search(query, self._stop)

    @work(thread=True, exclusive=True, group="runs-search", exit_on_error=False)
    def _search(self, query: str, stop: threading.Event) -> None:
        """In a worker thread: hits go to `_found` as they come (the screen takes them in
        every BATCH_S: a hit is shown even when the next one is long in coming)."""
        found, error = self._found, None
        try:
            for hit in self.searcher(query):
                if stop.is_set():
                    return
                found.append((stop, hit))
        except (ValueError, OSError, KeyError) as exc:
            error = str(exc)
        self.app.call_from_thread(self._finished, stop, error)

    def _drain(self) -> None:
        """Show the hits found since the last look (those of a search since replaced or
        stopped are dropped)."""
        batch = []
        while self._found:
            stop, hit = self._found.popleft()
            if stop is self._stop and not stop.is_set():
                batch.append(hit)
        if batch:
            self._add(batch)

    def _add(self, batch: list[Hit]) -> None:
        room = MAX_HITS - len(self.hits)
        options = []
        for hit in batch[:room]:
            if not self.runs or self.runs[-1] != hit.run_id:
                self.runs.append(hit.run_id)
                heading = run_heading(hit.run_id, self.prompt_of(hit.run_id))
                options.append(Option(heading, disabled=True))
            options.append(Option(hit_line(hit, self._hit_width()), id=f"{len(self.hits)}"))
            self.hits.append(hit)
        self.hit_list.add_options(options)
        if self.hit_list.highlighted is None:
            self.hit_list.action_first()
            # The first hit: to the results, unless the query is being changed already.
            query_input = self.query_input
            if query_input.has_focus and query_input.value == self.query_text:
                self.hit_list.focus()
        if len(batch) > room:
            self._stop.set()
            self.state = "full"
        self._say(search_status(self.state, self.query_text, len(self.hits), len(self.runs)))

    def _hit_width(self) -> int | None:
        """The cells a hit's line has (None before the list is laid out): its snippet is cut
        to fit around the match."""
        width = self.hit_list.scrollable_content_region.width
        return width - 1 if width > 1 else None  # beside the list's scrollbar, when it has one

    def on_resize(self) -> None:
        """Each hit's snippet cut again for the new width."""
        self.call_after_refresh(self._fit_hits)

    def _fit_hits(self) -> None:
        width, hit_list = self._hit_width(), self.hit_list
        for i, hit in enumerate(self.hits):
            hit_list.replace_option_prompt(f"{i}", hit_line(hit, width))

    def _finished(self, stop: threading.Event, error: str | None) -> None:
        if stop is not self._stop or stop.is_set():
            return
        self._drain()
        if self.state != "searching":
            return  # stopped at MAX_HITS
        if error is not None:
            self.state = "failed"
            self._say(Text("✗ " + literal_line(error, 300), "red"))
            return
        self.state = "done"
        self._say(search_status(self.state, self.query_text, len(self.hits), len(self.runs)))

    def _say(self, text: Text) -> None:
        self.query_one("#runs-search-status", Static).update(text)

    # -- leaving -------------------------------------------------------------------------------

    @on(OptionList.OptionSelected)
    def _opened(self, message: OptionList.OptionSelected) -> None:
        hit = self.hits[int(message.option.id or 0)]
        self._stop.set()
        self.dismiss((hit.run_id, hit.line))

    def action_close(self) -> None:
        """esc: stop the search under way; with none, close."""
        if self.state == "searching":
            self._stop.set()
            self.state = "stopped"
            self._say(search_status(self.state, self.query_text, len(self.hits), len(self.runs)))
            return
        self.dismiss(None)
