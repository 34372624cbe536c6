"""A fill does not swallow what a run did meanwhile: `DirectorySource.fill()` reads a row's file
whole, in a worker thread, and may so read lines no refresh has read yet (a run that paused
for approval between its write and the refresh that write asked for). The next refresh tells
them, as it would have had it read them first: the app announces the pause, and the open
timeline grows.

A real run, written by the engine (`tests.approvalkit.Travel`), copied line by line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentor.engine.statuses import AWAITING_APPROVAL, INTERRUPTED
from agentor.engine.store.file import FileStore
from agentor.sources.directory.source import DirectorySource
from tests.approvalkit import TRAVEL_PROMPT, Travel


async def paused_run_lines(made: Path) -> tuple[str, list[bytes]]:
    """The lines of a run of the travel agent that paused for approval (its last line)."""
    result = await Travel(FileStore(made)).agent.arun(TRAVEL_PROMPT)
    assert result.status == AWAITING_APPROVAL
    lines = (made / f"{result.run_id}.jsonl").read_bytes().splitlines(keepends=True)
    return result.run_id, lines


@pytest.mark.parametrize("last", [-1, -2], ids=["the pause", "a line that moves no status"])
async def test_what_a_fill_read_first_the_next_refresh_tells_once(
    tmp_path: Path, last: int
) -> None:
    run_id, lines = await paused_run_lines(tmp_path / "made")
    runs = tmp_path / "runs"
    runs.mkdir()
    source = DirectorySource(runs)
    source.scan()
    # The run arrives (as a fork here does: its first write, then a refresh)...
    log = runs / f"{run_id}.jsonl"
    log.write_bytes(b"".join(lines[: last - 1]))
    assert source.refresh([run_id]).added == {run_id}
    row = source.get(run_id)
    assert row is not None and row.status == INTERRUPTED and row.cost is None  # to be priced
    # ... writes again, and the fill reads that before the refresh that write asks for.
    with log.open("ab") as f:
        f.write(lines[last])
    assert source.fill() == [run_id]
    assert row.status == (AWAITING_APPROVAL if last == -1 else INTERRUPTED)
    changes = source.refresh([run_id])
    assert changes.updated == {run_id} and not changes.added
    assert not source.refresh([run_id])  # told once


async def test_a_fill_that_reads_nothing_new_tells_nothing(tmp_path: Path) -> None:
    """Filling rows whose files did not change (every row at start) makes no news."""
    run_id, _ = await paused_run_lines(tmp_path / "runs")
    source = DirectorySource(tmp_path / "runs")
    source.scan()
    assert source.fill() == [run_id]  # priced: read whole again
    assert not source.refresh([run_id]) and not source.refresh()
