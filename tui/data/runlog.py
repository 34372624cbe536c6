"""The events of one run's log file, for the timeline: `RunLog`, a lazy log, the directory
source's `RunEvents`. Never imports textual.

RunLog(path)                        lazy: indexes newline offsets, decodes lines on demand
    .poll() -> int                  read new bytes; returns how many new lines (events or
                                    bad lines) were added; re-reads a replaced or truncated
                                    file. Raises OSError when the file cannot be read.
    .reset_happened -> bool         the last poll() re-read the file from scratch
                                    (timeline reloads)
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
    .raw(i) -> bytes                line i as it is in the file
    .indexed_to -> int              where the whole lines indexed end (a byte offset)
    .search(...), .marks(...)       the lines a search matches, the error and tool call
                                    lines (`tui.data.logscan`), from their own descriptor:
                                    safe in a worker thread
    extras: .path, .pending (bytes of an unfinished last line), .decoded (lines json-
    decoded by item(), for tests), .close() (also a context manager). Keeps the file
    open; memory is 8 bytes a line plus the caches. Not thread-safe (UI thread only).

Torn lines (no newline yet) are never decoded: they wait for their newline, or for the engine's
repair (which truncates them) before its next append.
"""

from __future__ import annotations

import bisect
import json
import os
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable
from itertools import accumulate, islice, repeat
from operator import add
from pathlib import Path
from typing import Any

from agentor.engine.events import GENERATION, RUN_START, Event, is_list_of_dicts
from agentor.engine.logformat import DELTA_FIELD, BadLine, messages_delta
from agentor.engine.replay import event_time

from . import logscan
from .logfile import (
    CHUNK,
    Unreadable,
    decode_line,
    gc_paused,
    line_of_type,
    line_of_type_after_newline,
    open_readonly,
    pread,
    whole_lines,
)
from .source import Scan

# Searched with a literal first (a newline), which the regex engine scans for fast; a `^`
# anchor with re.MULTILINE would try every byte of a big log.
_RUN_START_AFTER_NEWLINE = line_of_type_after_newline(RUN_START)
_RUN_START_AT = line_of_type(RUN_START)
_GENERATION_AT = line_of_type(GENERATION)
CACHE_SIZE = 1024
_Rebuilt = tuple[int, "int | None", list[dict[str, Any]]]  # line, generation ordinal, messages


class RunLog:
    """The lines of one run log, indexed by newline offsets and decoded only when asked for.

    Types are told from a line's leading bytes (`{"type": "run_start"` ...), which is how every
    writer of this format (this engine, upstream Agentor) starts a line.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.reset_happened = False
        self.decoded = 0
        self.pending = 0
        self.segment_starts: list[int] = []
        self._ends = array("q")  # byte offset just past each whole line's newline
        self._cache: OrderedDict[int, Event | BadLine] = OrderedDict()
        self._rebuilt: _Rebuilt | None = None  # the last request rebuilt
        self._ordinals: dict[int, int] = {}  # full generation's line -> generations before it
        self._start_time: float | None = None
        self._start_known = False
        self._fd = -1
        self._inode = 0
        self._open()

    # -- public --------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ends)

    @property
    def indexed_to(self) -> int:
        """Where the whole lines indexed end (a scan of what the log gained starts here)."""
        return self._end()

    def search(
        self,
        query: str,
        start: int,
        end: int,
        first_line: int,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> Scan | None:
        return logscan.search(self.path, query, start, end, first_line, cancelled)

    def marks(
        self, start: int, end: int, first_line: int, cancelled: Callable[[], bool] = lambda: False
    ) -> Scan | None:
        return logscan.marks(self.path, start, end, first_line, cancelled)

    def raw(self, i: int) -> bytes:
        """Line i as it is in the file, its newline included."""
        if i < 0:
            i += len(self._ends)
        return self._line(i)[1]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def poll(self) -> int:
        self.reset_happened = False
        st = os.stat(self.path, follow_symlinks=False)
        end = self._end()
        replaced = self._fd < 0 or st.st_ino != self._inode or st.st_size < end
        if not replaced and end and os.pread(self._fd, 1, end - 1) != b"\n":
            replaced = True  # rewritten in place
        if replaced:
            self.close()
            self._reset_state()
            self._open()
            self.reset_happened = True
            return len(self)
        if st.st_size == end:
            return 0
        return self._index(end, st.st_size)

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

    # -- reading -------------------------------------------------------------------------------

    def _open(self) -> None:
        try:
            fd, st = open_readonly(self.path)
        except Unreadable as exc:
            raise OSError(f"{self.path}: {exc}") from None
        self._fd, self._inode = fd, st.st_ino
        self._index(0, st.st_size)

    def _reset_state(self) -> None:
        self._ends = array("q")
        self._cache.clear()
        self._rebuilt = None
        self._ordinals.clear()
        self.segment_starts = []
        self._start_time, self._start_known = None, False
        self.pending = 0

    def _end(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _index(self, start: int, end: int) -> int:
        """Index the whole lines in [start, end); returns how many were added."""
        before = len(self._ends)
        for pos, body in whole_lines(self._fd, start, end):
            # Offsets by C-level iterators (no Python code per line): lengths + 1, summed
            # from `pos`, whose own first value is the previous end and skipped.
            lengths = map(len, body[:-1].split(b"\n"))
            ends = accumulate(map(add, lengths, repeat(1)), initial=pos)
            self._ends.extend(islice(ends, 1, None))
            if _RUN_START_AT.match(body):
                self.segment_starts.append(bisect.bisect_right(self._ends, pos))
            for m in _RUN_START_AFTER_NEWLINE.finditer(body):
                self.segment_starts.append(bisect.bisect_right(self._ends, pos + m.start() + 1))
        self.pending = max(0, end - self._end())  # `start` is where the lines indexed end
        return len(self._ends) - before

    def _line(self, i: int) -> tuple[int, bytes]:
        start = self._ends[i - 1] if i else 0
        return start, pread(self._fd, self._ends[i] - start, start)

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
            block = pread(self._fd, top - base, base)
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
