"""append: FileStore.append of a typical ~300-byte event vs raw os.write + os.fsync.

Ours appends to a locked run (as the engine does: `lock` holds the log's descriptor for the
run's life). The baseline writes the very same bytes to a file in the same directory through
one O_APPEND descriptor, fsync after each write. The ratio is throughput, ours / baseline; the
fsync dominates both, so what is left is FileStore's own cost per append: turning the event
into a line, which the baseline gets for free, and its bookkeeping. That work runs right after
the previous fsync, with a cold CPU cache, at two to four times its warm cost.

Shown for information: an unlocked append (open and close per event, as a store used outside a
run does), and the baseline plus the encoding any durable JSONL writer pays: `json.dumps` of
the event, and orjson of its dict (the floor for a Python writer of this format).

Blocks of 50 appends, many of them, interleaved: on a shared disk fsync latency drifts by
the second, and short blocks spread that drift over every case alike.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import harness
import orjson

from agentor.engine.events import TOOL_RESULT, Event
from agentor.engine.log.format import LogEncoder
from agentor.engine.store.file import FileStore

NAME = "append"
GOAL = 0.9


def typical_event() -> Event:
    """A tool result as the weather agent writes it (~300 bytes on disk)."""
    now = time.time()
    return Event(
        TOOL_RESULT,
        name="get_weather",
        args={"city": "London"},
        call_id="call_8dGMCmOeQ2x7LkR4TnW9pZsV",
        turn=3,
        result="The weather in London is sunny and 22C, with a light breeze and no rain.",
        started_at=now,
        ended_at=now + 0.0004,
        ts=now + 0.0004,
    )


def main() -> None:
    args = harness.parse_args(__doc__)
    # Short blocks, many of them: drift on a shared machine hits every case alike.
    n, reps = (20, 3) if args.quick else (50, 101)
    event = typical_event()
    data = LogEncoder().encode(event)
    tmp = Path(tempfile.mkdtemp(prefix="bench-append-"))
    store = FileStore(tmp)
    counter = iter(range(1_000_000))

    def ours_locked() -> float:
        run_id = f"locked{next(counter)}"
        with store.lock(run_id):
            t = time.perf_counter()
            for _ in range(n):
                store.append(run_id, event)
            elapsed = time.perf_counter() - t
        store.path(run_id).unlink()
        return elapsed

    def ours_unlocked() -> float:
        run_id = f"open{next(counter)}"
        t = time.perf_counter()
        for _ in range(n):
            store.append(run_id, event)
        elapsed = time.perf_counter() - t
        store.path(run_id).unlink()
        return elapsed

    @contextlib.contextmanager
    def raw_file(prefix: str) -> Iterator[int]:
        """A new file in the same directory, one O_APPEND descriptor, removed afterwards."""
        path = tmp / f"{prefix}{next(counter)}.jsonl"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            yield fd
        finally:
            os.close(fd)
            path.unlink()

    # The writing loops stay inline (no call per write): each is what it says, nothing more.
    def baseline() -> float:
        with raw_file("raw") as fd:
            t = time.perf_counter()
            for _ in range(n):
                os.write(fd, data)
                os.fsync(fd)
            return time.perf_counter() - t

    def baseline_encoding() -> float:
        # The baseline plus serialising the event each time with the standard library.
        with raw_file("enc") as fd:
            t = time.perf_counter()
            for _ in range(n):
                os.write(fd, (json.dumps(event.to_dict(), ensure_ascii=False) + "\n").encode())
                os.fsync(fd)
            return time.perf_counter() - t

    def baseline_orjson() -> float:
        # The floor for this format in Python: the fastest encoder, no store around it.
        with raw_file("orj") as fd:
            t = time.perf_counter()
            for _ in range(n):
                os.write(fd, orjson.dumps(event.to_dict(), option=orjson.OPT_APPEND_NEWLINE))
                os.fsync(fd)
            return time.perf_counter() - t

    try:
        times = harness.interleaved(
            [
                ("ours", ours_locked),
                ("baseline", baseline),
                ("unlocked", ours_unlocked),
                ("encoding", baseline_encoding),
                ("orjson", baseline_orjson),
            ],
            reps,
        )
    finally:
        for p in tmp.iterdir():
            p.unlink()
        tmp.rmdir()

    rate = {k: n / harness.median(v) for k, v in times.items()}
    print(
        f"{NAME}: {reps} interleaved blocks of {n} appends of {len(data)} bytes, "
        f"{harness.machine()}"
    )
    harness.table(
        ["case", "appends/s", "per append", "block min..max", "vs baseline"],
        [
            [
                label,
                f"{rate[k]:.0f}",
                harness.fmt_s(1 / rate[k]),
                harness.spread(times[k]),
                f"{rate[k] / rate['baseline']:.3f}",
            ]
            for k, label in [
                ("ours", "FileStore.append (locked run)"),
                ("unlocked", "FileStore.append (no lock)"),
                ("baseline", "os.write + os.fsync"),
                ("encoding", "json.dumps + os.write + os.fsync"),
                ("orjson", "orjson.dumps + os.write + os.fsync"),
            ]
        ],
    )
    harness.result_line(
        NAME,
        rate["ours"] / rate["baseline"],
        f">={GOAL}",
        f"{rate['ours']:.0f}/s",
        f"{rate['baseline']:.0f}/s",
    )


if __name__ == "__main__":
    main()
