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


def test_a_fill_goes_on_where_the_last_stopped_and_reads_again_a_row_read_in_part(
    tmp_path: Path,
) -> None:
    """`fill(n)` starts where the last one stopped (not from the top of the list each time:
    quadratic over 100,000 runs); a row read again from part of its file after the fill went
    past it (its log rewritten) is filled again, priced."""
    from agentor.sources.directory import source as directory_source

    gen = (
        b'{"type": "generation", "model": "gpt-4o", "turn": 1, "ts": 1796039001.0, '
        b'"usage": {"input_tokens": 1000, "output_tokens": 10, "total_tokens": 1010}}\n'
    )
    pad = (
        b'{"type": "tool_result", "turn": 1, "result": "'
        + b"x" * 5000
        + b'", "ts": 1796039002.0}\n'
    )
    start = b'{"type": "run_start", "agent": "A", "model": "gpt-4o", "started_at": 1796039000.0}\n'
    ids = [f"{i:032x}" for i in range(1, 41)]
    for i, run_id in enumerate(ids):  # each well past what a refresh reads whole
        (tmp_path / f"{run_id}.jsonl").write_bytes(start + (gen + pad) * (20 + i))
    source = DirectorySource(tmp_path)
    source.scan()
    assert source.incomplete == len(ids)
    filled: list[str] = []
    while step := source.fill(7):
        assert len(step) <= 7 and not set(step) & set(filled)  # none read twice
        filled += step
    assert sorted(filled) == ids and source.incomplete == 0
    assert all(
        row.cost is not None and row.cost.priced == 20 + i
        for i, row in enumerate(sorted(source.rows(), key=lambda r: r.run_id))
    )
    rewritten = tmp_path / f"{ids[0]}.jsonl"
    rewritten.write_bytes(start + (gen + pad) * 15)  # shorter: read again from the start
    assert rewritten.stat().st_size > directory_source.TAIL_BYTES
    source.refresh([ids[0]])
    assert source.incomplete == 1
    assert source.fill(7) == [ids[0]] and source.fill(7) == []
    (row,) = [r for r in source.rows() if r.run_id == ids[0]]
    assert row.complete and row.cost is not None and row.cost.priced == 15
