"""`RunsPane`: the run list under its `/` filter bar, titled with the source and what its rows
show. The screen gives it where every row comes from (`rows`, the source's) and which run is
being resumed here (`resuming`); which rows the list shows is the pane's: the filter's, and
the runs kept in view."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.cells import cell_len
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content

from agentor.sources.runrow import RunRow
from tui.text.costs import list_cost
from tui.text.experiment_form import selected_words
from tui.text.run_filter import RunFilter, list_title
from tui.widgets.filter_bar import FilterBar
from tui.widgets.run_list import RunList


class RunsPane(Vertical):
    def __init__(
        self,
        label: str,
        rows: Callable[[], list[RunRow]],
        resuming: Callable[[], str | None],
        clock: Callable[[], float] = time.time,
        *,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.label = label  # the source, as the title names it (literal)
        self.rows = rows  # every run, newest first
        self.resuming = resuming  # the run being resumed here, if any
        self.clock = clock
        self.gone = False  # the source is gone: the title says so
        self.run_filter = RunFilter()
        # Runs shown only because they are kept in view (`show_rows`), and the run the cursor
        # was on when `/` was pressed (it goes back there while it matches what is typed).
        self._kept: set[str] = set()
        self._filter_from: str | None = None
        self._titles: tuple[str, str] = ("", "")

    def compose(self) -> ComposeResult:
        yield FilterBar(id="filter")
        yield RunList(self.clock, id="runs")

    @property
    def run_list(self) -> RunList:
        return self.query_one(RunList)

    @property
    def filter_bar(self) -> FilterBar:
        return self.query_one(FilterBar)

    def on_mount(self) -> None:
        self.filter_bar.display = False

    # -- the rows ------------------------------------------------------------------------------

    def show_rows(self, keep_in_view: bool = True) -> None:
        """The rows the filter shows; with `keep_in_view`, also the selected run and the one
        being resumed while shown, whatever their status becomes (a resumed run turns
        running), until the user moves away or changes the filter."""
        every = self.rows()
        run_list = self.run_list
        keep: set[str] = set()
        if keep_in_view:
            current = run_list.current
            ids = (self.resuming(), current.run_id if current else None)
            keep = {i for i in ids if i is not None and run_list.index_of(i) is not None}
        rows = self.run_filter.apply(every, keep)
        self._kept = {r.run_id for r in rows if r.run_id in keep and not self.run_filter.admits(r)}
        run_list.set_rows(rows, hidden=len(every) - len(rows))
        self.show_title()

    def show_title(self) -> None:
        """The source and what its rows show (`RunList.shown_status`); the filter and the rows'
        cost below."""
        run_list = self.run_list
        total = len(run_list.rows) + run_list.hidden
        gone = " · directory gone" if self.gone else ""
        # The border's corners and the spaces around the title take 6 cells: a title that fits
        # the rest is not cut (before layout, the width is 0: the whole title).
        room = self.outer_size.width - 6 - cell_len(gone) if self.outer_size.width else None
        rows, status_of = run_list.rows, run_list.shown_status
        title = list_title(rows, total, status_of, label=self.label, room=room) + gone
        # Below the list: the runs selected, the filter, and what the runs shown cost (their
        # sum).
        chosen = selected_words(len(run_list.selected))
        described = (chosen, self.run_filter.describe(), list_cost(run_list.rows))
        subtitle = " · ".join(filter(None, described))
        if (title, subtitle) != self._titles:  # a new title repaints the whole pane
            self._titles = (title, subtitle)
            self.border_title = Content(title)
            self.border_subtitle = Content(subtitle)

    def on_resize(self) -> None:
        self.show_title()  # narrower or wider: the title's words that fit

    @on(RunList.Highlighted)
    def _run_highlighted(self, message: RunList.Highlighted) -> None:
        # The screen opens the run (the message goes on to it).
        if self._kept - {message.run_id, self.resuming()}:
            self.show_rows()  # moved away from a run only kept in view: the filter takes it

    # -- the filter ----------------------------------------------------------------------------

    def open_filter(self) -> None:
        current = self.run_list.current
        self._filter_from = current.run_id if current else None
        self.filter_bar.open()

    def clear_filter(self) -> bool:
        """`esc` on the list: drop the filter (False: there is none)."""
        if not self.run_filter.text:
            return False
        self.filter_bar.value = ""
        self.filter_bar.display = False
        self._set_filter("")
        return True

    def reveal(self, run_id: str) -> bool:
        """Select `run_id`; when the filters hide it, drop them first (False: not listed)."""
        if self.run_list.select(run_id):
            return True
        self.filter_bar.value = ""
        self.filter_bar.display = False
        self.run_filter.text, self.run_filter.status = "", 0
        self.show_rows(keep_in_view=False)
        return self.run_list.select(run_id)

    def cycle_status(self) -> None:
        current = self.run_list.current
        self.run_filter.cycle_status()
        self._refilter(current.run_id if current else None)

    def _set_filter(self, text: str) -> None:
        current = self.run_list.current
        self.run_filter.text = text
        self._refilter(self._filter_from or (current.run_id if current else None))

    def _refilter(self, run_id: str | None) -> None:
        """The filter changed: show what it admits, the cursor on `run_id` (the run it was on
        when the change began) when that is shown, else on the first run."""
        self.show_rows(keep_in_view=False)
        if run_id is None or not self.run_list.select(run_id):
            self.run_list.move_cursor(0)

    @on(FilterBar.Changed)
    def _filter_changed(self, message: FilterBar.Changed) -> None:
        message.stop()
        self._set_filter(message.value)

    @on(FilterBar.Submitted)
    def _filter_submitted(self, message: FilterBar.Submitted) -> None:
        message.stop()
        self.filter_bar.display = False
        self._set_filter(message.value)
        self._filter_from = None
        self.screen.set_focus(self.run_list)

    @on(FilterBar.Cleared)
    def _filter_cleared(self, message: FilterBar.Cleared) -> None:
        message.stop()
        self._set_filter("")
        self._filter_from = None
        self.screen.set_focus(self.run_list)
