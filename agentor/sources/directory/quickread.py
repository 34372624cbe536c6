"""The quick read of a run log: its first line and its last lines, not what lies between.

Listing 10,000 runs must take about a second, and decoding every line of every file does not
fit. A quick read decodes the first line (agent, model, start, prompt), then walks back from
the end: it decodes the last lines back to one with a time (the latest, as events are written
in time order) and the last `run_start` / `run_end` (found by each line's leading
`{"type": "..."`, the way every writer of the format starts a line, `logfile.TYPE_AT`; lines
that do not start so are decoded). Folded with `replay.fold`, that gives the right status,
agent, model, started_at, first_prompt, last_event_at and ended_at; the counts (turns, tool
calls, usage, events, bad lines) cover only the lines decoded.

Reads are small first and grow: the first read is FIRST_READ bytes (a typical log whole); the
tail read is the last TAIL_FIRST bytes, reaching 4 times further back each time the walk has
not found its boundary yet, up to TAIL_BYTES back (further only while the last line is longer).
Where the walk stops does not depend on those steps: a read of the last TAIL_BYTES at once
would decode the same lines. Syscalls per file: open, fstat, one or two preads, close.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentor.engine.events import RUN_END, RUN_START, Event
from agentor.engine.history import event_time
from agentor.engine.log.format import BadLine
from agentor.sources.logfile import TYPE_AT, decode_for_summary, pread

TAIL_BYTES = 64 * 1024  # how far back from the end a quick read looks for a boundary
HEAD_MAX = 4 * 1024 * 1024  # a first line longer than this is not looked for
FIRST_READ = 16 * 1024  # the first read, from the start; a smaller file is read whole at once
TAIL_FIRST = 4 * 1024  # the first read back from the end; TAIL_BYTES is a power of 4 of it

_BOUNDARY_TYPES = {RUN_START.encode(), RUN_END.encode()}


@dataclass(slots=True)
class QuickRead:
    items: list[Event | BadLine]  # the first line, then the last lines walked, in file order
    offset: int  # just past the last whole line: where reading the appended bytes starts
    every_line: bool  # `items` are every whole line of the file
    bytes_read: int


def quick_read(fd: int, size: int) -> QuickRead:
    """The first line and the last lines back to the last segment's boundary."""
    # The first line: agent, model, start, prompt.
    probe = min(size, FIRST_READ)
    nread = 0
    while True:
        head = pread(fd, probe, 0)
        nread += len(head)
        head_end = head.find(b"\n") + 1
        if head_end or probe >= size or probe >= HEAD_MAX:
            break  # found, or no first line worth looking for
        probe = min(size, probe * 4)
    items: list[Event | BadLine] = []
    if head_end:
        items.append(decode_for_summary(head[:head_end], 0, 0))
    # The last lines, walking back from the end.
    walk = _TailWalk(fd, size, head, head_end)
    walk.run()
    items += reversed(walk.items)
    return QuickRead(
        items=items,
        offset=walk.last if walk.last > walk.first else head_end,
        every_line=walk.every_line and walk.r0 <= head_end and walk.end <= walk.first,
        bytes_read=nread + walk.bytes_read,
    )


class _TailWalk:
    """The walk back from the end of a log to the last segment's boundary.

    Offsets are absolute; `region` holds the bytes [r0, size) and grows at its front when the
    walk needs more. A small file (read whole as the head) is walked in the head's bytes."""

    def __init__(self, fd: int, size: int, head: bytes, head_end: int) -> None:
        self.fd, self.size, self.head, self.head_end = fd, size, head, head_end
        self.whole = len(head) == size
        self.items: list[Event | BadLine] = []  # the lines decoded, newest first
        self.region = b""
        self.r0 = size
        self.first = size  # where the first whole line of `region` starts
        self.last = -1  # just past the last whole line of the file, once found
        self.end = -1  # the walk has decoded or skipped the lines from here to `last`
        self.timed = False  # whether the latest event with a time was decoded
        self.every_line = True
        self.bytes_read = 0

    def run(self) -> None:
        span = TAIL_FIRST
        while True:
            if not self._reach(max(self.head_end, self.size - span - 1)):
                return  # it shrank under us: what was read stands, a refresh reads again
            if self.last < 0:
                cut = self.r0 + self.region.rfind(b"\n") + 1
                if cut > self.first:
                    self.last = self.end = cut
                elif self.r0 > self.head_end:
                    span *= 4  # the last line is longer than the tail read: read further back
                    continue
                else:
                    return  # no whole line after the first one
            if self._walk() or self.r0 <= self.head_end or span >= TAIL_BYTES:
                return
            span *= 4  # no boundary yet: look further back, up to TAIL_BYTES

    def _reach(self, start_at: int) -> bool:
        """The region reaches back to `start_at`; False when the file shrank under us."""
        if start_at >= self.r0:
            return True
        if self.whole:
            self.region = self.head[start_at:]
        else:
            more = pread(self.fd, self.r0 - start_at, start_at)
            self.bytes_read += len(more)
            if len(more) < self.r0 - start_at:
                return False
            self.region = more + self.region
        self.r0 = start_at
        # Whole lines start at once if the region starts where the first line ends, else
        # after the newline ending the line the region cuts into.
        r0, region = self.r0, self.region
        self.first = r0 if r0 == self.head_end else r0 + region.find(b"\n") + 1
        return True

    def _walk(self) -> bool:
        """Lines back from `end` to the region's first whole line; True once the last
        segment's boundary is decoded (enough for the status)."""
        region, r0 = self.region, self.r0
        while self.end > self.first:
            end = self.end
            start = max(self.first, r0 + region.rfind(b"\n", self.first - r0, end - r0 - 1) + 1)
            self.end = start
            kind = TYPE_AT.match(region, start - r0)
            if self.timed and kind is not None and kind[1] not in _BOUNDARY_TYPES:
                self.every_line = False  # skipped by its type
                continue
            # Lines up to the latest with a time (events are written in time order; some
            # upstream ones carry none), a segment boundary, a line that does not say its
            # type up front: decoded.
            item = decode_for_summary(region[start - r0 : end - r0], start, 0)
            self.items.append(item)
            if isinstance(item, Event):
                self.timed = self.timed or event_time(item) is not None
                if item.type in (RUN_START, RUN_END):
                    return True
        return False
