"""`Timeline`: the events of one run, one line each, read lazily from its `RunEvents`; `/`
searches them, `n` `e` `t` jump to the next match, error or tool call (`timeline_search`)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.actions import SkipAction
from textual.binding import BindingType
from textual.message import Message
from textual.worker import Worker, get_current_worker

from agentor.engine.events import APPROVAL, FORK, GENERATION, RUN_START, Event
from agentor.engine.history import event_time
from agentor.engine.log.format import BadLine
from agentor.literal import literal_line
from agentor.sources.gated import request_of
from agentor.sources.source import RunEvents, Scan
from tui.keys import bindings
from tui.keys.model import TIMELINE
from tui.text.costs import generation_cost
from tui.text.detail import segment_start
from tui.text.event_views import timeline_line, type_label, type_style
from tui.text.formatting import offset, short_id
from tui.text.run_line import fit
from tui.text.styles import MATCH_STYLE
from tui.widgets.cursor_list import CursorList
from tui.widgets.timeline_search import (
    CALLS,
    ERRORS,
    NAMES,
    PLURALS,
    SEARCH,
    Finder,
    LogScans,
    ScanJob,
)

# The turn column is as wide as the run's turns need (turn 1234 is not cut to "12…"), within
# these bounds: a log may hold any number, and a turn of 10**30 is cut rather than take the line.
TURN_WIDTH = 3
TURN_WIDTH_MAX = 9


class Timeline(CursorList):
    """Opens at the newest event; with `follow` on, new events keep the cursor at the end."""

    BINDINGS: ClassVar[list[BindingType]] = bindings(TIMELINE)

    @dataclass
    class Highlighted(Message):
        """The cursor is on another line of the open run (None: on none); `live`: it moved by
        itself, following new events."""

        index: int | None
        live: bool = False

    @dataclass
    class SearchWanted(Message):
        """`/`: the pane opens its search bar (with the current query)."""

    @dataclass
    class ForkWanted(Message):
        """`F`: fork the open run at line `index` (None: no line highlighted)."""

        index: int | None

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_log: RunEvents | None = None
        self.run_id: str | None = None
        self.follow = True
        self.empty_message = "Select a run to see its events."
        self.turn_width = TURN_WIDTH
        self.finder = Finder()
        self.scans = LogScans(self)
        self._pending: tuple[str, bool, bool, int | None] | None = None  # a jump awaiting a scan
        self._note = ""  # what the last jump said ("no error below"), until the cursor moves
        self._costs: dict[int, str] = {}  # line -> what that generation cost, as drawn

    # -- what it shows -------------------------------------------------------------------------

    def show(self, run_id: str, log: RunEvents) -> None:
        if run_id != self.run_id:
            self.follow = True
        if self.run_log is not None and self.run_log is not log:
            self.run_log.close()
        self.run_id, self.run_log = run_id, log
        self._costs.clear()
        self._forget_search()
        self.turn_width = TURN_WIDTH
        self._widen_turns(len(log))
        self.cursor = len(log) - 1
        self.rows_changed()
        self.move_cursor(len(log) - 1, notify=False)
        self.cursor_moved()
        self._retitle()

    def clear(self, message: str) -> None:
        if self.run_log is not None:
            self.run_log.close()
        self.run_id, self.run_log, self.empty_message = None, None, message
        self._forget_search()
        self.cursor = -1
        self.rows_changed()
        self.cursor_moved()
        self._retitle()

    def grow(self) -> int:
        """Read what was appended to the run's file; returns how many lines are new."""
        if self.run_log is None:
            return 0
        try:
            added = self.run_log.poll()
        except OSError as exc:
            self.clear(f"The run's file cannot be read: {exc}")
            return 0
        if self.run_log.reset_happened:
            # The file was replaced: the old lines mean nothing now.
            self.show(self.run_id or "", self.run_log)
            return added
        if added:
            before = self.cursor
            self._widen_turns(len(self.run_log))
            # Lines only come at the end (a partial line waits for its newline): the lines
            # drawn so far stay as they are.
            self.rows_appended(len(self.run_log) - added)
            if self.follow:
                self.move_cursor(len(self.run_log) - 1, notify=False)
                self.post_message(self.Highlighted(self.cursor, live=True))
            elif before < 0:
                self.cursor_moved()
            self.scans.catch_up()  # what a search or jumps look for, in the new lines too
            self._retitle()
        return added

    def _widen_turns(self, end: int) -> None:
        """Make the turn column as wide as the latest turns (turns only grow in a log, so
        the last lines hold the widest); a wider turn met in a row drawn later widens it too."""
        assert self.run_log is not None
        for index in range(end - 1, max(-1, end - 21), -1):
            item = self.run_log.item(index)
            turn = getattr(item, "turn", None)
            if turn is not None:
                self._fit_turn(str(turn))
                return

    def _fit_turn(self, text: str) -> bool:
        """Widen the turn column for `text`; True when it grew (every row is drawn again)."""
        width = min(len(text), TURN_WIDTH_MAX)
        if width <= self.turn_width:
            return False
        self.turn_width = width
        return True

    def toggle_follow(self) -> bool:
        self.follow = not self.follow
        if self.follow:
            self.move_cursor(self.row_count() - 1)
        self._retitle()
        return self.follow

    def _retitle(self) -> None:
        if self.run_log is None or self.run_id is None:
            title, subtitle = "Timeline", None
        else:
            n = len(self.run_log)
            lines = f"{n:,} line{'s' if n != 1 else ''}"
            title = f"Timeline · {literal_line(short_id(self.run_id))} · {lines}"
            parts = [self._search_status(), self._note]
            parts.append("following" if self.follow else "follow off (f)")
            subtitle = " · ".join(p for p in parts if p)
        self.set_titles(title, subtitle)

    def _search_status(self) -> str:
        """`/london: 3 of 120`, `/london: 120 matches`, `/london: searching…`."""
        query = self.finder.query
        if not query or self.run_log is None:
            return ""
        head = f"/{literal_line(query, 30)}: "
        count = len(self.finder.found[SEARCH])
        if not self.finder.complete(SEARCH, len(self.run_log)):
            return head + (f"{count:,} so far, searching…" if count else "searching…")
        if not count:
            return head + "no match"
        at = self.finder.position(self.cursor)
        if at is not None:
            return head + f"{at:,} of {count:,} (n/N)"
        return head + f"{count:,} match{'es' if count != 1 else ''} (n/N)"

    # -- search and jumps ----------------------------------------------------------------------

    def search(self, query: str) -> None:
        """Look for `query` in every line (as it is written, case-insensitively); the rows
        on screen show the matches as they are found. The cursor stays where it is."""
        if query == self.finder.query:
            return
        self.finder.set_query(query)
        self._pending, self._note = None, ""
        self.scans.catch_up()
        self.rows_restyled()
        self._retitle()

    def first_match(self) -> None:
        """The search was entered: to its first match in the run, wherever the cursor is."""
        if self.finder.query:
            self._jump(SEARCH, forward=True, wrap=True, origin=-1)

    def clear_search(self) -> None:
        self.search("")

    def _forget_search(self) -> None:
        self.finder.reset()
        self.scans.forget()
        self._pending, self._note = None, ""

    def _jump(
        self, kind: str, forward: bool, wrap: bool = False, origin: int | None = None
    ) -> None:
        """Move to the next (previous) line of `kind` after (before) line `origin` (None: the
        cursor's); a scan not done yet is waited for."""
        log = self.run_log
        if log is None:
            return
        self.finder.want(kind)
        self.scans.catch_up()
        if not self.finder.complete(kind, len(log)):
            self._pending = (kind, forward, wrap, origin)
            self._note = f"finding {PLURALS[kind]}…"
            self._retitle()
            return
        self._pending = None
        start = self.cursor if origin is None else origin
        target, wrapped = self.finder.step(kind, start, forward, wrap)
        if target is not None:
            self.move_cursor(target)
            note = f"wrapped to the {'top' if forward else 'bottom'}" if wrapped else ""
        elif kind == SEARCH:
            note = ""  # a search wraps: none at all, and its status says "no match"
        else:
            note = f"no {NAMES[kind]} {'below' if forward else 'above'}"
        self._note = note
        self._retitle()

    def scan_failed(self, reason: str) -> None:
        self._pending = None
        self._note = f"cannot search the log: {reason}"
        self._retitle()

    def scanned(self, found: list[int]) -> None:
        """A scan brought results (`LogScans`): redraw the rows on screen it found to match
        (only those: a live run's new lines are scanned as they come), go on with a jump that
        waited for them."""
        top = round(self.scroll_y)
        shown = found[bisect_left(found, top) : bisect_left(found, top + self.size.height)]
        self.rows_updated(shown)
        if self._pending is not None:
            kind, forward, wrap, origin = self._pending
            if self.run_log is not None and self.finder.complete(kind, len(self.run_log)):
                self._jump(kind, forward, wrap, origin)
        self._retitle()

    def _anywhere(self) -> None:
        """An action from the palette works from any pane: the timeline takes the focus."""
        if self.screen.focused is not self:
            self.screen.set_focus(self)

    def action_search(self) -> None:
        self._anywhere()
        self.post_message(self.SearchWanted())

    def action_fork(self) -> None:
        self.post_message(self.ForkWanted(self.cursor if self.row_count() else None))

    def action_next_match(self) -> None:
        self._anywhere()
        self._search_jump(forward=True)

    def action_previous_match(self) -> None:
        self._anywhere()
        self._search_jump(forward=False)

    def _search_jump(self, forward: bool) -> None:
        if not self.finder.query:
            self._note = "no search: / searches the events"
            self._retitle()
            return
        self._jump(SEARCH, forward, wrap=True)

    def action_next_error(self) -> None:
        self._anywhere()
        self._jump(ERRORS, forward=True)

    def action_previous_error(self) -> None:
        self._anywhere()
        self._jump(ERRORS, forward=False)

    def action_next_call(self) -> None:
        self._anywhere()
        self._jump(CALLS, forward=True)

    def action_previous_call(self) -> None:
        self._anywhere()
        self._jump(CALLS, forward=False)

    def action_clear_search(self) -> None:
        if not self.finder.query:
            raise SkipAction()  # `esc` goes on to the screen: back to the run list
        self.clear_search()

    def scan_in_thread(self, scan_kind: str, job: ScanJob) -> Worker[Scan | None]:
        """Run a scan in a worker thread; a newer scan of its kind replaces it."""
        if scan_kind == SEARCH:
            return self._search_in_thread(job)
        return self._marks_in_thread(job)

    @work(thread=True, group="scan-search", exclusive=True, exit_on_error=False)
    def _search_in_thread(self, job: ScanJob) -> Scan | None:
        worker = get_current_worker()
        return job(lambda: worker.is_cancelled)

    @work(thread=True, group="scan-marks", exclusive=True, exit_on_error=False)
    def _marks_in_thread(self, job: ScanJob) -> Scan | None:
        worker = get_current_worker()
        return job(lambda: worker.is_cancelled)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.scans.finished(event.worker)

    # -- CursorList ----------------------------------------------------------------------------

    def row_count(self) -> int:
        return len(self.run_log) if self.run_log is not None else 0

    def cursor_moved(self) -> None:
        if self.follow and not self.at_end:
            # Reading back through the run: stop pulling the cursor to the newest event.
            self.follow = False
        self._note = ""
        self._retitle()
        # Sent by the timeline, whoever moved its cursor: a jump its pane makes (a search
        # entered) must still reach the screen (Textual stops a message at its parent when the
        # parent sent it).
        index = self.cursor if self.cursor >= 0 else None
        self.post_message(self.Highlighted(index).set_sender(self))

    def empty_text(self) -> Text:
        return Text("  " + literal_line(self.empty_message), "italic")

    def _cost(self, index: int, generation: Event) -> str:
        """What the generation on line `index` cost, priced once, not at every
        repaint."""
        cost = self._costs.get(index)
        if cost is None and self.run_log is not None:
            setup = segment_start(self.run_log, index)
            cost = generation_cost(generation, setup.model if setup is not None else None)
            self._costs[index] = cost
        return cost or ""

    def _fork_before(self, index: int) -> Event | None:
        """The `fork` event right before line `index` (a fork's own first run_start)."""
        assert self.run_log is not None
        before = self.run_log.item(index - 1) if index > 0 else None
        return before if isinstance(before, Event) and before.type == FORK else None

    def render_row(self, index: int, width: int) -> Text:
        assert self.run_log is not None
        item = self.run_log.item(index)
        out = Text(no_wrap=True)
        if isinstance(item, BadLine):
            match = bool(self.finder.query) and self.finder.is_match(index)
            out.append(fit("", 8), "dim")
            out.append("▌" if match else " ", "yellow")
            out.append(fit("?", 11) + " " + fit("", self.turn_width) + "  ", "dim")
            out.append_text(timeline_line(item))
            return out
        start = self.run_log.start_time
        t = event_time(item)
        out.append(fit(offset(t - start) if t is not None and start is not None else "", 8, True))
        match = bool(self.finder.query) and self.finder.is_match(index)
        out.append("▌" if match else " ", "yellow")
        out.append(fit(type_label(item.type), 11), type_style(item.type, "dim"))
        out.append(" ")
        turn = str(item.turn) if item.turn is not None else ""
        if self._fit_turn(turn):
            self.call_after_refresh(self.rows_changed)  # the rows drawn so far are narrower
        out.append(fit(turn, self.turn_width, True), "dim")
        out.append("  ")
        segment = bisect_right(self.run_log.segment_starts, index)
        # A decision's edit is shown against the request it decides.
        request = request_of(self.run_log, index) if item.type == APPROVAL else None
        cost = self._cost(index, item) if item.type == GENERATION else ""
        fork = self._fork_before(index) if item.type == RUN_START else None
        out.append_text(timeline_line(item, segment, request, cost, fork))
        if match:
            out.highlight_words(
                [literal_line(self.finder.query)], MATCH_STYLE, case_sensitive=False
            )
        return out
