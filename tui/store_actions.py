"""`StoreActions`: operating the store from the TUI (`tui.keys.store_keys`): `p` pins or unpins
the selected run, `d` deletes it once confirmed, `w` writes its export to a file, `ctrl+f`
searches every run, `S` shows the stats of the runs shown. A part of `RunsApp`, mixed into it,
kept apart so that the app's module stays its wiring; handlers go by Textual's naming rule.

Everything goes through `agentor.ops` and the source's store, by the store protocols: a store
without pins (`PinningStore`) or deletion (`DeletingStore`) says so, and nothing else happens.
Searching and exporting run in worker threads: the screen never waits on them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentor.engine.store.api import DeletingStore, PinningStore, Store
from agentor.engine.store.matching import Hit
from agentor.errors import DeleteRefusedError, RunNotFoundError
from agentor.literal import literal_line
from agentor.ops.pins import pin, pinned, unpin
from agentor.ops.retention import delete_refusal, delete_run
from agentor.ops.run_export import export
from agentor.ops.run_search import search
from agentor.sources.export_file import write_new
from agentor.sources.lineage import forks_of
from agentor.sources.runrow import RunRow
from tui.controllers.controller import while_running
from tui.text import notices
from tui.text.detail import RunTotals
from tui.widgets.delete_screen import DeleteScreen
from tui.widgets.export_screen import ExportScreen
from tui.widgets.runs_search import RunsSearchScreen
from tui.widgets.stats_screen import StatsScreen

if TYPE_CHECKING:  # to a type checker the mixin is the app it is mixed into
    from collections.abc import Iterator

    from textual.app import App
    from textual.notifications import SeverityLevel

    from agentor.sources.source import Changes, RunSource
    from tui.widgets.event_detail import EventDetail
    from tui.widgets.run_list import RunList
    from tui.widgets.runs_pane import RunsPane
    from tui.widgets.timeline import Timeline

    _Base = App[str | None]
else:
    _Base = object


class StoreActions(_Base):
    """Mixed into `RunsApp` (an `App`), whose source, run list, timeline and `tell` these use."""

    export_dir: str | os.PathLike[str] | None = None  # `--export-dir`; None: the current one

    if TYPE_CHECKING:
        source: RunSource
        run_list: RunList
        runs_pane: RunsPane
        timeline: Timeline
        event_detail: EventDetail

        def tell(
            self,
            message: str,
            *,
            title: str = "",
            severity: SeverityLevel = "information",
            timeout: float | None = None,
        ) -> None: ...
        def tell_note(self, note: notices.Note) -> None: ...
        def apply_changes(self, changes: Changes) -> None: ...
        def open_run(self, run_id: str | None) -> None: ...
        def show_detail(self, index: int | None, live: bool = False) -> None: ...

    @property
    def store(self) -> Store | None:
        """The source's store (both sources have one; a directory that is gone has none)."""
        return getattr(self.source, "store", None)

    def on_mount(self) -> None:  # after the app's own (Textual calls each class's in turn)
        self.event_detail.totals_of = self._totals
        self.refresh_pins()

    @while_running
    def on_watcher_ticked(self) -> None:
        self.refresh_pins()  # `agentor pin` in a shell shows here too

    def _totals(self, run_id: str) -> RunTotals | None:
        row = self.source.get(run_id)
        cost = row.cost if row is not None else None
        return RunTotals(cost, run_id in self.run_list.pinned)

    def _selected(self) -> RunRow | None:
        """The run the keys act on; None (said) when there is none, or when a screen is open
        above the list (the app's keys reach it too: `d` there deletes nothing)."""
        if self.screen is not self.screen_stack[0]:
            return None
        row = self.run_list.current
        if row is None:
            self.tell("No run selected.", severity="warning")
        return row

    def _cannot(self, doing: str) -> None:
        where = self.source.where
        self.tell(f"This store cannot {doing} ({where}).", severity="warning", timeout=6)

    # -- p: pins -------------------------------------------------------------------------------

    # The store is asked in worker threads: a database may be slow to answer, or not at all.

    def refresh_pins(self) -> None:
        """Read which runs are pinned (one call, in a worker thread); the list marks them."""
        store = self.store
        self.run_worker(
            lambda: self._read_pins(store),
            thread=True,
            group="pins",
            exclusive=True,
            exit_on_error=False,
        )

    def _read_pins(self, store: Store | None) -> None:
        try:
            now = pinned(store) if store is not None else set()
        except Exception:  # a store that cannot answer now: the marks stay as they were
            return
        self.call_from_thread(self._show_pins, now)

    def _show_pins(self, now: set[str]) -> None:
        changed = now ^ self.run_list.pinned
        if not changed:
            return
        self.run_list.pinned = now
        self.run_list.runs_updated(changed)
        if self.timeline.run_id in changed:
            self.show_detail(self.timeline.cursor)  # its detail says so

    def action_pin(self) -> None:
        row, store = self._selected(), self.store
        if row is None:
            return
        if not isinstance(store, PinningStore):
            self._cannot("pin runs")
            return
        run_id, was = row.run_id, row.run_id in self.run_list.pinned
        self.run_worker(
            lambda: self._pin(store, run_id, was), thread=True, group="pin", exit_on_error=False
        )

    def _pin(self, store: PinningStore, run_id: str, was: bool) -> None:
        """In a worker thread: pin or unpin, then the marks and the notice."""
        try:
            (unpin if was else pin)(store, run_id)
            now = pinned(store)
        except (RunNotFoundError, OSError, ValueError) as exc:
            doing = "unpinned" if was else "pinned"
            self.call_from_thread(
                self.tell, f"Run {run_id} cannot be {doing}: {exc}", severity="error"
            )
            return
        if was:
            told = f"Unpinned run {run_id}: prune may remove it again."
        else:
            told = f"Pinned run {run_id}: prune keeps it."
        self.call_from_thread(self._pinned, now, told)

    def _pinned(self, now: set[str], told: str) -> None:
        self._show_pins(now)
        self.tell(told, timeout=4)

    # -- d: delete -----------------------------------------------------------------------------

    def action_delete_run(self) -> None:
        row, store = self._selected(), self.store
        if row is None:
            return
        if not isinstance(store, DeletingStore):
            self._cannot("delete runs")
            return
        status = self.run_list.shown_status(row)
        self.run_worker(
            lambda: self._ask_to_delete(store, row, status),
            thread=True,
            group="delete",
            exit_on_error=False,
        )

    def _ask_to_delete(self, store: DeletingStore, row: RunRow, status: str) -> None:
        """In a worker thread (the store is asked who holds the run): a run that would be
        refused is said so at once; any other is named in the dialog, with its forks."""
        try:
            refused = delete_refusal(store, row.run_id, status)
        except (OSError, ValueError, RuntimeError) as exc:  # a database that cannot answer
            self.call_from_thread(self.tell_note, notices.not_deleted(row.run_id, str(exc)))
            return
        if refused is not None:
            self.call_from_thread(self.tell_note, notices.not_deleted(row.run_id, refused.detail))
            return
        self.call_from_thread(self._confirm_delete, store, row, status)

    def _confirm_delete(self, store: DeletingStore, row: RunRow, status: str) -> None:
        if self.screen is not self.screen_stack[0]:
            return  # another screen opened meanwhile: `d` meant this list
        run_id = row.run_id
        screen = DeleteScreen(row, status, forks_of(self.source.rows(), run_id))
        self.push_screen(screen, lambda yes: self._delete(store, run_id) if yes else None)

    def _delete(self, store: Store, run_id: str) -> None:
        self.run_worker(
            lambda: self._delete_in_thread(store, run_id),
            thread=True,
            group="delete",
            exit_on_error=False,
        )

    def _delete_in_thread(self, store: Store, run_id: str) -> None:
        """Delete the run (its lock is taken: a held run is refused), say how it went; the
        list shows it gone, watched or not."""
        try:
            freed = delete_run(store, run_id)
        except DeleteRefusedError as exc:
            told = notices.not_deleted(run_id, exc.detail)
        except RunNotFoundError:
            told = notices.Note(f"Run {run_id} is gone already.", severity="warning", timeout=8)
        except (OSError, ValueError, TypeError) as exc:
            told = notices.Note(
                f"Run {run_id} cannot be deleted: {exc}", severity="error", timeout=8
            )
        else:
            size = f" ({freed:,} bytes freed)" if freed else ""
            told = notices.Note(f"Deleted run {run_id}{size}.", timeout=8)
        changes = self.source.refresh([run_id])
        self.call_from_thread(self._deleted, changes, told)

    def _deleted(self, changes: Changes, told: notices.Note) -> None:
        self.apply_changes(changes)
        self.tell_note(told)
        self.refresh_pins()

    # -- w: export -----------------------------------------------------------------------------

    def action_export(self) -> None:
        row = self._selected()
        if row is None:
            return
        where = os.path.abspath(self.export_dir or os.curdir)
        run_id = row.run_id
        self.push_screen(
            ExportScreen(run_id, where),
            lambda format: self._export(run_id, format, where) if format else None,
        )

    def _export(self, run_id: str, format: str, where: str) -> None:
        store = self.store
        if store is None:
            self.tell(
                f"Run {run_id} cannot be read: {self.source.where} is gone.", severity="error"
            )
            return
        self.run_worker(
            lambda: self._write_export(store, run_id, format, where),
            thread=True,
            group="export",
            exit_on_error=False,
        )

    def _write_export(self, store: Store, run_id: str, format: str, where: str) -> None:
        """In a worker thread: the export, then a file that did not exist; told either way."""
        try:
            path = write_new(where, run_id, format, export(store, run_id, format))
        except (OSError, KeyError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            message, severity = f"Run {run_id} was not exported to {where}: {reason}", "error"
        else:
            message, severity = f"Wrote {path}", "information"
            first = Path(where) / f"{run_id}{path.suffix}"
            if path != first:
                message += f" ({first.name} exists: left as it is)"
        self.call_from_thread(self.tell, message, title="Export", severity=severity, timeout=10)

    # -- ctrl+f: every run ---------------------------------------------------------------------

    def action_search_runs(self) -> None:
        if self.screen is not self.screen_stack[0]:
            return  # a screen is open above the list
        store = self.store
        if store is None:
            self.tell(f"Nothing to search: {self.source.where} is gone.", severity="warning")
            return

        def searcher(query: str) -> Iterator[Hit]:
            return search(store, query)

        screen = RunsSearchScreen(searcher, self._prompt_of, self.source_label)
        self.push_screen(screen, self._jump_to)

    def _prompt_of(self, run_id: str) -> str | None:
        row = self.source.get(run_id)
        return row.summary.first_prompt if row is not None and row.summary is not None else None

    def _jump_to(self, found: Any) -> None:
        """The run of a search's hit, open at its line in the timeline (the filter is
        dropped when it hides the run)."""
        if not found:
            return
        run_id, line = found
        if self.run_list.index_of(run_id) is None:
            self.runs_pane.clear_filter()
        if not self.run_list.select(run_id):
            self.tell(f"Run {run_id} is not in the list any more.", severity="warning")
            return
        self.open_run(run_id)
        timeline = self.timeline
        if timeline.run_id == run_id and timeline.run_log is not None:
            timeline.follow = False
            timeline.move_cursor(min(max(0, line - 1), len(timeline.run_log) - 1))
            self.screen.set_focus(timeline)

    # -- S: stats ------------------------------------------------------------------------------

    def action_stats(self) -> None:
        if self.screen is not self.screen_stack[0]:
            return  # a screen is open above the list
        pane, rows = self.runs_pane, self.run_list.rows
        described = f"{len(rows):,} shown of {len(rows) + self.run_list.hidden:,} runs"
        if filtered := pane.run_filter.describe():
            described += f" · {filtered}"
        self.push_screen(StatsScreen(rows, f"{literal_line(pane.label)} · {described}"))
