"""The lines of one run, indexed and decoded on demand: `LineLog`, what the timeline reads of a
run (`RunEvents`), whatever holds the bytes.

A run's lines are one byte stream (each line as a FileStore writes it, its newline included);
`LineLog` keeps the offset where each whole line ends (8 bytes a line), decodes a line when it
is asked for (an LRU cache of them), and rebuilds a generation's request as the engine's
loader does. What holds the bytes is the subclass's: a log file read by offset
(`agentor.sources.directory.runlog.RunLog`), or lines read from a database into memory
(`agentor.sources.postgres.runlog.StoredLog`).

What a subclass provides: `_read(offset, size)` (bytes of whole lines already indexed),
`_scan_chunks(start, end)` (the whole lines of a range, a piece at a time, for a scan in a
worker thread), `poll()` (index what the run gained, by `_add_lines`), `close`. `search` and
`marks` are the same for every run log: a scan of `_scan_chunks` (`agentor.sources.logscan`).

    len(log)                        number of whole lines indexed
    .item(i) -> Event | BadLine     line i decoded (LRU cache); generations keep
                                    `messages=None` here (cheap), see `.request(i)`
    .request(i) -> list[dict] | None
                                    full request messages of generation i, as
                                    FileStore.load rebuilds them: walks back to the nearest
                                    full-form generation (or the last one rebuilt) and
                                    applies the deltas; one step back from the last one
                                    rebuilt is a slice. None for other lines or a delta
                                    whose base is lost. The messages are shared with that
                                    cache: copy before changing them. A delta's base is
                                    checked against the generations the engine's decoder
                                    counts (lines that read as generation events), so a
                                    corrupt line breaks a chain exactly where it breaks the
                                    engine's.
    .segment_starts -> list[int]    line indexes of run_start events
    .start_time -> float | None     the first run_start's time (timeline offsets)
    .raw(i) -> bytes                line i as it was written
    .indexed_to -> int              where the whole lines indexed end (an offset in the
                                    stream: a scan of what the run gained starts here)
    .reset_happened -> bool         the last poll() read the run again from scratch
    extras: .decoded (lines json-decoded by item(), for tests); a context manager (close).
"""

from __future__ import annotations

import bisect
import json
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from itertools import accumulate, islice, repeat
from operator import add
from typing import Any

from agentor.engine.events import GENERATION, RUN_START, Event, is_list_of_dicts
from agentor.engine.history import event_time
from agentor.engine.log.format import DELTA_FIELD, BadLine, messages_delta
from agentor.sources import logscan
from agentor.sources.logfile import (
    CHUNK,
    decode_line,
    gc_paused,
    line_of_type,
    line_of_type_after_newline,
)
from agentor.sources.source import Scan

# Searched with a literal first (a newline), which the regex engine scans for fast; a `^`
# anchor with re.MULTILINE would try every byte of a big log.
_RUN_START_AFTER_NEWLINE = line_of_type_after_newline(RUN_START)
_RUN_START_AT = line_of_type(RUN_START)
_GENERATION_AT = line_of_type(GENERATION)
CACHE_SIZE = 1024
_Rebuilt = tuple[int, "int | None", list[dict[str, Any]]]  # line, generation ordinal, messages


class LineLog:
    """The lines of one run, indexed by where each ends and decoded only when asked for.

    Types are told from a line's leading bytes (`{"type": "run_start"` ...), which is how every
    writer of this format (this engine, upstream Agentor) starts a line. Not thread-safe (UI
    thread only), but `search` and `marks` (see the subclass).
    """

    def __init__(self) -> None:
        self.reset_happened = False
        self.decoded = 0
        self.segment_starts: list[int] = []
        self._ends = array("q")  # offset just past each whole line's newline
        self._cache: OrderedDict[int, Event | BadLine] = OrderedDict()
        self._rebuilt: _Rebuilt | None = None  # the last request rebuilt
        self._ordinals: dict[int, int] = {}  # full generation's line -> generations before it
        self._start_time: float | None = None
        self._start_known = False

    # -- what a subclass provides --------------------------------------------------------------

    def _read(self, offset: int, size: int) -> bytes:
        """`size` bytes of the stream from `offset` (within the lines indexed)."""
        raise NotImplementedError

    def _scan_chunks(self, start: int, end: int) -> Iterator[tuple[int, bytes]]:
        """(offset, bytes) of the whole lines in [start, end), about CHUNK bytes at a time, each
        piece ending with a newline; safe in a worker thread while the timeline reads and
        `poll` appends."""
        raise NotImplementedError

    def poll(self) -> int:
        """Index what the run gained; how many new lines. OSError when it cannot be read."""
        raise NotImplementedError

    def close(self) -> None:
        """Let go of what the log holds open (nothing, unless the subclass says so)."""

    def __enter__(self) -> LineLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        start: int,
        end: int,
        first_line: int,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Scan | None:
        """The lines from `start` to `end` (numbered from `first_line`) holding `query`, as
        written, case-insensitively; None when `cancelled()` turned true on the way."""
        return logscan.search(self._scan_chunks(start, end), query, start, first_line, cancelled)

    def marks(
        self, start: int, end: int, first_line: int, cancelled: Callable[[], bool] = lambda: False
    ) -> Scan | None:
        """The error lines and the tool call lines from `start` to `end`."""
        return logscan.marks(self._scan_chunks(start, end), start, first_line, cancelled)

    def __len__(self) -> int:
        return len(self._ends)

    @property
    def indexed_to(self) -> int:
        """Where the whole lines indexed end (a scan of what the log gained starts here)."""
        return self._end()

    def raw(self, i: int) -> bytes:
        """Line i as it was written, its newline included."""
        if i < 0:
            i += len(self._ends)
        return self._line(i)[1]

    def item(self, i: int) -> Event | BadLine:
        if i < 0:
            i += len(self._ends)
        hit = self._cache.get(i)
        if hit is not None:
            self._cache.move_to_end(i)
            return hit
        start, line = self._line(i)
        self.decoded += 1
        item = decode_line(line, start, i)
        if isinstance(item, Event) and item.type == GENERATION:
            item.messages = None  # see request(): the timeline needs no request here
            item.extra.pop(DELTA_FIELD, None)
        self._cache[i] = item
        if len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return item

    def request(self, i: int) -> list[dict[str, Any]] | None:
        """Full request messages of generation i, rebuilt as `LogDecoder` rebuilds them.

        The messages are shared with a cache: copy one before changing it.
        """
        if i < 0:
            i += len(self._ends)
        if not 0 <= i < len(self._ends):
            raise IndexError(i)
        cached = self._rebuilt
        if cached is not None and cached[0] == i:
            return list(cached[2])
        with gc_paused():
            if cached is not None and cached[0] > i:
                out = self._step_back(i, cached)
                if out is not None:
                    return out
            return self._walk_forward(i, cached if cached is not None and cached[0] < i else None)

    def _walk_forward(self, i: int, cached: _Rebuilt | None) -> list[dict[str, Any]] | None:
        """Walk back to a full generation (or `cached`), then apply the deltas up to i.

        A line that is not a generation event to the engine's decoder (corrupt, or of another
        type) is passed over, as the decoder passes it over: it counts no generation."""
        chain: list[dict[str, Any]] = []  # the generations after the anchor, newest first
        anchor: _Rebuilt | None = None  # (line, ordinal or None, messages)
        for k, data in self._generations_back(i):
            if cached is not None and k == cached[0]:
                anchor = cached
                break
            gen = _generation_dict(data)
            if gen is None:
                if k == i:
                    return None  # not a generation
                continue
            messages = gen.get("messages")
            if is_list_of_dicts(messages):
                anchor = (k, None, messages)
                break
            chain.append(gen)
        if anchor is None:
            return None
        line, ordinal, messages = anchor
        out = list(messages)
        if chain and ordinal is None:
            ordinal = self._ordinal(line)
        for gen in reversed(chain):
            delta = _delta(gen)
            assert ordinal is not None
            # The engine's decoder takes a delta only on the generation it counted just before.
            if delta is None or delta.get("base") != ordinal or delta["keep"] > len(out):
                return None  # FileStore.load cannot rebuild it either
            del out[delta["keep"] :]
            out.extend(delta["tail"])
            ordinal += 1
        self._rebuilt = (i, ordinal, out)
        return list(out)

    def _step_back(self, i: int, cached: _Rebuilt) -> list[dict[str, Any]] | None:
        """From a later rebuilt request back to i, when each step in between only appended.

        Generation k's request is then the first len(request k) messages of the next one;
        that length is on line k itself. None when that does not hold (walk forward instead).
        """
        later, ordinal, messages = cached
        after: dict[str, Any] | None = None  # the generation line after the one at hand
        for k, data in self._generations_back(later):
            gen = _generation_dict(data)
            if gen is None:
                return None
            if k == later:
                after = gen
                continue
            assert after is not None
            delta, size = _delta(after), _request_size(gen)
            if ordinal is None or delta is None or size is None or delta["keep"] != size:
                return None
            if delta.get("base") != ordinal - 1:
                return None
            ordinal, messages, after = ordinal - 1, messages[:size], gen
            if k == i:
                self._rebuilt = (i, ordinal, messages)
                return list(messages)
            if k < i:
                return None
        return None

    def _ordinal(self, line: int) -> int:
        """How many generations the engine's decoder counts before `line` (the `base` a delta
        on the generation after it names): the lines that read as generation events."""
        known = [k for k in self._ordinals if k < line]
        start = max(known, default=-1)
        count = self._ordinals[start] + 1 if start >= 0 else 0
        found = 0
        for _, data in self._generations_back(line - 1, stop=start + 1):
            if _generation_dict(data) is not None:
                found += 1
        self._ordinals[line] = count + found
        return count + found

    @property
    def start_time(self) -> float | None:
        if not self._start_known and len(self._ends):
            first = self.segment_starts[0] if self.segment_starts else 0
            item = self.item(first)
            self._start_time = event_time(item) if isinstance(item, Event) else None
            self._start_known = True
        return self._start_time

    # -- the index -----------------------------------------------------------------------------

    def _reset_state(self) -> None:
        self._ends = array("q")
        self._cache.clear()
        self._rebuilt = None
        self._ordinals.clear()
        self.segment_starts = []
        self._start_time, self._start_known = None, False

    def _end(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _add_lines(self, pos: int, body: bytes) -> None:
        """Index the whole lines `body` holds (it ends with a newline), which start at `pos`."""
        # Offsets by C-level iterators (no Python code per line): lengths + 1, summed from
        # `pos`, whose own first value is the previous end and skipped.
        lengths = map(len, body[:-1].split(b"\n"))
        ends = accumulate(map(add, lengths, repeat(1)), initial=pos)
        self._ends.extend(islice(ends, 1, None))
        if _RUN_START_AT.match(body):
            self.segment_starts.append(bisect.bisect_right(self._ends, pos))
        for m in _RUN_START_AFTER_NEWLINE.finditer(body):
            self.segment_starts.append(bisect.bisect_right(self._ends, pos + m.start() + 1))

    def _line(self, i: int) -> tuple[int, bytes]:
        start = self._ends[i - 1] if i else 0
        return start, self._read(start, self._ends[i] - start)

    def _generations_back(self, i: int, stop: int = 0) -> Iterable[tuple[int, bytes]]:
        """(index, bytes) of line i and the generation lines before it, back to line `stop`,
        by blocks of lines."""
        ends = self._ends
        hi = i + 1  # lines [lo, hi) are read as one block
        while hi > stop:
            lo = hi - 1
            top = ends[hi - 1]
            while lo > stop and top - ends[lo - 1] < CHUNK:
                lo -= 1
            base = ends[lo - 1] if lo else 0
            block = self._read(base, top - base)
            for k in range(hi - 1, lo - 1, -1):
                start = (ends[k - 1] if k else 0) - base
                if k == i or _GENERATION_AT.match(block, start):
                    yield k, block[start : ends[k] - base]
            hi = lo


def _delta(gen: dict[str, Any]) -> dict[str, Any] | None:
    """A generation's compact delta when the engine's decoder would apply it (its base is
    checked apart): None for a full generation (its messages win) or a malformed delta."""
    if is_list_of_dicts(gen.get("messages")):
        return None
    return messages_delta(gen)


def _request_size(gen: dict[str, Any]) -> int | None:
    """How many messages a generation's request holds, from its own line."""
    messages = gen.get("messages")
    if is_list_of_dicts(messages):
        return len(messages)
    delta = _delta(gen)
    return delta["keep"] + len(delta["tail"]) if delta is not None else None


def _generation_dict(line: bytes) -> dict[str, Any] | None:
    """The decoded line if it is a generation event, else None (torn, corrupt, other type)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("type") != GENERATION:
        return None
    return data
