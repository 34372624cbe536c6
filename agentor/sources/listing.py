"""A source's rows read whole, once: what a reader that does not stay (`agentor ls`,
`agentor show`) shows. The same rows, statuses and reasons as the run list of the TUI, which
keeps its source open and fills it lazily instead.

Cost model: `list_rows` is the source's scan (a directory's from its run index for every file
unchanged since the index was saved, every other file read whole at once; a database's one
query), then one fill of the rows the scan could only sketch (rows an index saved while they
were sketches: their files read whole; a database's one query), unpriced: a listing shows no
cost. A directory's rows read so are then saved to its run index (`keep_index`), as the TUI
saves them, so that the next listing reads no log that has not changed. `read_row` reads one
run's row without listing the store, and writes nothing. `waiting_by_run` reads only the logs
of runs whose latest turn asked for approval, or may have (`RunRow.asks_approval`).

`list_table` is `list_rows` for a reader that only prints the rows (`agentor ls`): the same rows
as a `runtable.RunTable`, in the same order, a directory's fresh rows taken from its index's
columns without a `RunRow` each (`TabledSource`: `DirectorySource.leave_aside`): 100,000 of them
in ~0.1 s beyond checking their files, where building them costs ~0.5 s. `table_listed` is
`list_table` for a reader that prints the table in its block (`agentor ls`): a large index save
(thousands of logs read) is made meanwhile by a forked process (`apart`), on another core, and
waited for when the block ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Container, Iterator

from agentor.engine.events import APPROVAL_REQUEST
from agentor.engine.statuses import AWAITING_APPROVAL, INCOMPLETE
from agentor.engine.store.api import TypeQueryStore
from agentor.errors import AgentorError
from agentor.sources.apart import Apart, fork_off, forkable
from agentor.sources.gated import GatedCall, waiting_calls
from agentor.sources.runrow import RunRow
from agentor.sources.runtable import RunTable
from agentor.sources.source import IndexedSource, RunSource, TabledSource

SAVE_APART_FROM = 4000  # files read at a listing's scan from which `table_listed` forks its save


def list_rows(source: RunSource) -> list[RunRow]:
    """Every run's row, complete (its counts read), newest first; [] and `source.error` when
    the store cannot be listed; a directory's run index saved when rows were read (`keep_index`)."""
    if isinstance(source, IndexedSource):
        source.whole_at_scan = True  # a file not in the index: read once, not sketched then read
    source.scan()
    if source.incomplete:
        source.fill(priced=False)  # every sketch at once (one gone meanwhile stays a sketch)
    keep_index(source)
    return source.rows()


def list_table(source: RunSource) -> RunTable:
    """`list_rows` as a table (`runtable`), in the same order: of a source that can
    (`TabledSource`, a directory), the rows its index holds fresh and of which a listing needs
    no more than the index holds (ended runs that wait for no one) are not built; the index is
    saved as `list_rows` saves it."""
    return _listed(source, apart=False)[0]


@contextlib.contextmanager
def table_listed(source: RunSource) -> Iterator[RunTable]:
    """`list_table` for a reader that goes on with the table (prints it) in this block: a large
    save of the index (`SAVE_APART_FROM` files read or more) is made meanwhile by a forked
    process (`apart.fork_off`) when one can be, and waited for when the block ends (an index
    that cannot be written is the next listing's cost only, as `keep_index` says)."""
    table, saving = _listed(source, apart=True)
    try:
        yield table
    finally:
        if saving is not None:
            saving.wait()


def _listed(source: RunSource, apart: bool) -> tuple[RunTable, Apart | None]:
    if not isinstance(source, TabledSource):
        return RunTable.of_rows(list_rows(source)), None
    source.leave_aside = True
    source.whole_at_scan = True
    source.scan()
    if source.incomplete:
        source.fill(priced=False)
    saving = _save_apart(source) if apart else None
    if saving is None:
        keep_index(source)
    return source.table(), saving


def _save_apart(source: TabledSource) -> Apart | None:
    """`keep_index` in a forked process, when the save is large and one can be forked."""
    if not source.index_stale or source.error or source.read_at_scan < SAVE_APART_FROM:
        return None
    if not forkable() or (pid := fork_off(lambda: _keep_or_fail(source))) is None:
        return None
    source.index_stale = False  # saved by that process (as `save_index` clears it at once)
    return Apart(pid)


def _keep_or_fail(source: RunSource) -> None:
    if not keep_index(source):
        raise OSError("the run index was not saved")  # the forked process's status says so


def keep_index(source: RunSource) -> bool:
    """Save a directory's run index when rows were read since it was (`index_stale`), as the
    TUI does: True when saved. A listing never fails for it: a directory and a cache that
    cannot be written are the next listing's cost only (it reads the logs again)."""
    if not isinstance(source, IndexedSource) or not source.index_stale or source.error:
        return False
    try:
        source.save_index()
    except (OSError, ValueError):  # not writable; a row field of no JSON form
        return False
    return True


def read_row(source: RunSource, run_id: str) -> RunRow | None:
    """One run's row, complete, read without listing the store (`source` not scanned); None
    when the store holds no such run."""
    source.refresh([run_id])
    row = source.get(run_id)
    if row is not None and not row.complete:
        source.fill(priced=False)
    return source.get(run_id)


def waiting_by_run(source: RunSource, run_ids: list[str], now: float) -> dict[str, list[GatedCall]]:
    """The calls a person can decide now (`waiting_of`), of each of these runs that has any:
    the runs of a table whose calls may wait (`RunTable.may_wait`: a row read whole says
    whether its latest turn asked for approval, and one that did not is not among them). A
    store that finds the events of a type for many runs in one query (a `TypeQueryStore`: a
    database) first narrows the runs to read to those that asked for approval at all."""
    asked = _asked(source, run_ids)
    found = {}
    for run_id in run_ids:
        if run_id in asked and (calls := waiting_calls(source, run_id, now)):
            found[run_id] = calls
    return found


def _asked(source: RunSource, run_ids: list[str]) -> Container[str]:
    """The runs among these whose log holds an approval request: every one, unless the store
    says which in one query (`events_of_type`)."""
    store = source.store
    if not isinstance(store, TypeQueryStore) or not run_ids:
        return set(run_ids)
    try:
        return set(store.events_of_type(run_ids, APPROVAL_REQUEST))
    except AgentorError:  # the store went: each run is asked as it is read
        return set(run_ids)


def may_wait(row: RunRow) -> bool:
    """Whether calls of the run may wait for a person: its last segment paused for approval,
    or has not ended (a crash, or a live process, between asking and pausing)."""
    s = row.summary
    return s is not None and s.status in (AWAITING_APPROVAL, INCOMPLETE)


def waiting_of(source: RunSource, row: RunRow, now: float) -> list[GatedCall]:
    """The calls of the row's run that a person can still decide (`gated.waiting_calls`, as
    the TUI's approval pane counts them); [] at once for a run that cannot have any (or whose
    latest turn, read whole, asked for no approval)."""
    asked = may_wait(row) and row.asks_approval is not False
    return waiting_calls(source, row.run_id, now) if asked else []
