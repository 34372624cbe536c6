"""The receiver's spool (agentor.collect.spool): a trace's spans come back whole after a
restart, after being dropped from memory, and past a line a kill cut short; old segments go."""

from __future__ import annotations

import os
import time
from pathlib import Path

from agentor.collect import spool as spool_module
from agentor.collect.spans import LogRecord, Span, SpanEvent
from agentor.collect.spool import DirectorySpool


def _span(trace: int, n: int) -> Span:
    return Span(
        trace_id=f"{trace:032x}",
        span_id=f"{n + 1:016x}",
        parent_id=None if n == 0 else f"{1:016x}",
        name=f"chat {n}",
        start_ns=n,
        end_ns=n + 1,
        attributes={"gen_ai.operation.name": "chat", "blob": b"\x00\xff", "nested": {"a": [1]}},
        events=(SpanEvent("exception", 5, {"exception.message": "x"}),),
        status_code=2,
        status_message="boom",
        resource={"service.name": "s"},
        scope="tests",
    )


def test_a_traces_spans_come_back_whole_in_a_new_spool_and_each_is_kept_once(
    tmp_path: Path,
) -> None:
    first = DirectorySpool(tmp_path)
    spans = [_span(1, n) for n in range(3)]
    record = LogRecord(f"{1:032x}", f"{2:016x}", "gen_ai.client.inference.operation.details", 7,
                       {"k": "v"}, {"body": 1})  # fmt: skip
    assert first.add(spans[:2], [record]) == {f"{1:032x}"}
    assert first.add(spans[:2], [record]) == set()  # a retry keeps nothing twice
    assert first.add(spans, []) == {f"{1:032x}"}
    again = DirectorySpool(tmp_path)
    held, logs = again.trace(f"{1:032x}")
    assert sorted(held, key=lambda s: s.span_id) == spans
    assert logs == [record]
    (segment,) = (tmp_path / ".collect").iterdir()
    assert len(segment.read_bytes().splitlines()) == 4


def test_a_trace_dropped_from_memory_is_read_back_past_a_torn_line(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(spool_module, "_HELD_TRACES", 2)
    spool = DirectorySpool(tmp_path)
    for trace in range(1, 5):
        spool.add([_span(trace, 0)], [])
    (segment,) = (tmp_path / ".collect").iterdir()
    with segment.open("ab") as f:
        f.write(b'{"trace_id":"' + f"{1:032x}".encode() + b'","kind":"span","span_id')
    assert len(spool._traces) == 2
    held, _ = spool.trace(f"{1:032x}")
    assert held == [_span(1, 0)]


def test_segments_older_than_keep_are_removed_when_a_spool_starts(tmp_path: Path) -> None:
    DirectorySpool(tmp_path).add([_span(1, 0)], [])
    (old,) = (tmp_path / ".collect").iterdir()
    past = time.time() - 3600
    os.utime(old, (past, past))
    fresh = DirectorySpool(tmp_path, keep=60)
    assert not old.exists()
    assert fresh.trace(f"{1:032x}") == ([], [])
