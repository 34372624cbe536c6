"""`StoreKeeper`: operating the store from the TUI (`tui.keys.store_keys`): `p` pins or unpins a
run, `d` deletes one (once it is known not to be refused, and confirmed), `w` writes its export
to a file, `ctrl+f` searches every run.

Everything goes through `agentor.ops` and the source's store, by the store protocols: a store
without pins (`PinningStore`) or deletion (`DeletingStore`) says so, and nothing else happens.
The store is asked in worker threads (a database may be slow to answer, or not at all): the
screen never waits on it. It reports by messages (`Pins`, `Deletable`, `Deleted`, `Notice`);
the screen marks the rows, asks before deleting and shows the list without the run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.message import Message

from agentor.engine.store.api import DeletingStore, PinningStore, Store
from agentor.engine.store.matching import Hit
from agentor.errors import DeleteRefusedError, RunNotFoundError
from agentor.ops.pins import pin, pinned, unpin
from agentor.ops.retention import delete_refusal, delete_run
from agentor.ops.run_export import export as export_run
from agentor.ops.run_search import search
from agentor.sources.export_file import write_new
from agentor.sources.runrow import RunRow
from agentor.sources.source import Changes, RunSource
from tui.controllers.controller import Controller
from tui.text import store_notes


class StoreKeeper(Controller):
    @dataclass
    class Pins(Message):
        """The runs pinned now (read after a change, or as a second went by)."""

        pinned: set[str]

    @dataclass
    class Deletable(Message):
        """The run may be deleted (the store would not refuse it now): ask first. `status`
        is the one the list showed when `d` was pressed."""

        row: RunRow
        status: str

    @dataclass
    class Deleted(Message):
        """A deletion is over (done or not): what the source found since."""

        changes: Changes

    def __init__(self, source: RunSource) -> None:
        super().__init__()
        self.source = source

    @property
    def store(self) -> Store | None:
        """The source's store (both sources have one; a directory that is gone has none)."""
        return self.source.store

    # -- p: pins -------------------------------------------------------------------------------

    def refresh_pins(self) -> None:
        """Read which runs are pinned (one call, in a worker thread): `Pins`."""
        self._read_pins(self.store)

    @work(thread=True, group="pins", exclusive=True, exit_on_error=False)
    def _read_pins(self, store: Store | None) -> None:
        try:
            now = pinned(store) if store is not None else set()
        except Exception:  # a store that cannot answer now: the marks stay as they were
            return
        self.report(self.Pins(now))

    def pin(self, run_id: str, was: bool) -> None:
        """Pin the run, or unpin it (`was`: it is pinned), then say so."""
        store = self.store
        if not isinstance(store, PinningStore):
            self.say(store_notes.cannot_pin(self.source.where))
            return
        self._pin(store, run_id, was)

    @work(thread=True, group="pin", exit_on_error=False)
    def _pin(self, store: Store, run_id: str, was: bool) -> None:  # a PinningStore
        try:
            (unpin if was else pin)(store, run_id)
            now = pinned(store)
        except (RunNotFoundError, OSError, ValueError) as exc:
            self.say(store_notes.not_pinned(run_id, was, exc))
            return
        self.report(self.Pins(now))
        self.say(store_notes.pinned(run_id, was))

    # -- d: delete -----------------------------------------------------------------------------

    def ask_to_delete(self, row: RunRow, status: str) -> None:
        """A run that would be refused is said so at once; any other is `Deletable`."""
        store = self.store
        if not isinstance(store, DeletingStore):
            self.say(store_notes.cannot_delete(self.source.where))
            return
        self._ask_to_delete(store, row, status)

    @work(thread=True, group="delete", exit_on_error=False)
    def _ask_to_delete(self, store: Store, row: RunRow, status: str) -> None:  # a DeletingStore
        """The store is asked who holds the run."""
        try:
            refused = delete_refusal(store, row.run_id, status)
        except (OSError, ValueError, RuntimeError) as exc:  # a database that cannot answer
            self.say(store_notes.not_deleted(row.run_id, str(exc)))
            return
        if refused is not None:
            self.say(store_notes.not_deleted(row.run_id, refused.detail))
            return
        self.report(self.Deletable(row, status))

    def delete(self, run_id: str) -> None:
        """Delete the run, confirmed (its lock is taken: a held run is refused)."""
        store = self.store
        if isinstance(store, DeletingStore):
            self._delete(store, run_id)

    @work(thread=True, group="delete", exit_on_error=False)
    def _delete(self, store: Store, run_id: str) -> None:  # a DeletingStore
        """Delete, then what the source found (the list shows the run gone, watched or not),
        then how it went."""
        try:
            freed = delete_run(store, run_id)
        except DeleteRefusedError as exc:
            told = store_notes.not_deleted(run_id, exc.detail)
        except RunNotFoundError:
            told = store_notes.gone_already(run_id)
        except (OSError, ValueError, TypeError) as exc:
            told = store_notes.delete_failed(run_id, exc)
        else:
            told = store_notes.deleted(run_id, freed)
        self.report(self.Deleted(self.source.refresh([run_id])))
        self.say(told)

    # -- w: export -----------------------------------------------------------------------------

    def export(self, run_id: str, format: str, where: str) -> None:
        """Write the run's export (`format`: md, html, json) to a new file in `where`."""
        store = self.store
        if store is None:
            self.say(store_notes.nothing_to_export(run_id, self.source.where))
            return
        self._export(store, run_id, format, where)

    @work(thread=True, group="export", exit_on_error=False)
    def _export(self, store: Store, run_id: str, format: str, where: str) -> None:
        """The export, then a file that did not exist; told either way."""
        try:
            path = write_new(where, run_id, format, export_run(store, run_id, format))
        except (OSError, KeyError, ValueError) as exc:
            self.say(store_notes.not_exported(run_id, where, exc))
        else:
            self.say(store_notes.exported(path, Path(where) / f"{run_id}{path.suffix}"))

    # -- ctrl+f: every run ---------------------------------------------------------------------

    def searcher(self) -> Callable[[str], Iterator[Hit]] | None:
        """What searches every run of the store (None, said: the source is gone)."""
        store = self.store
        if store is None:
            self.say(store_notes.nothing_to_search(self.source.where))
            return None
        return functools.partial(search, store)
