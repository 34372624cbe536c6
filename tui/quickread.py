"""The quick read of a run log: its first line and its last lines, not what lies between.

Listing 10,000 runs must take about a second, and decoding every line of every file does not
fit. A quick read decodes the first line (agent, model, start, prompt), then walks back from
the end: it decodes the last lines back to one with a time (the latest, as events are written
in time order) and the last `run_start` / `run_end` (found by each line's leading
`{"type": "..."`, the way every writer of the format starts a line; lines that do not start
so are decoded). Folded with `replay.fold`, that gives the right status, agent, model,
started_at, first_prompt, last_event_at and ended_at; the counts (turns, tool calls, usage,
events, bad lines) cover only the lines decoded.

Reads are small first and grow: the first read is FIRST_READ bytes (a typical log whole); the
tail read is the last TAIL_FIRST bytes, reaching 4 times further back each time the walk has
not found its boundary yet, up to TAIL_BYTES back (further only while the last line is longer).
Where the walk stops does not depend on those steps: a read of the last TAIL_BYTES at once
would decode the same lines. Syscalls per file: open, fstat, one or two preads, close.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentor.engine.events import RUN_END, RUN_START, Event
from agentor.engine.logformat import BadLine
from agentor.engine.replay import event_time

from .logfile import decode_for_summary, pread

TAIL_BYTES = 64 * 1024  # how far back from the end a quick read looks for a boundary
HEAD_MAX = 4 * 1024 * 1024  # a first line longer than this is not looked for
FIRST_READ = 16 * 1024  # the first read, from the start; a smaller file is read whole at once
TAIL_FIRST = 4 * 1024  # the first read back from the end; TAIL_BYTES is a power of 4 of it

# A line's type as every writer of the format puts it: first (json.dumps keeps key order).
_TYPE_AT = re.compile(rb'\{\s*"type"\s*:\s*"(\w+)"')
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
    whole = len(head) == size  # a small file: every read below is a slice of `head`

    # The last lines, walking back from the end. Offsets are absolute; `region` holds the
    # bytes [r0, size), and grows at its front when the walk needs more.
    tail: list[Event | BadLine] = []
    region = b""
    r0 = size
    span = TAIL_FIRST
    first = size  # where the first whole line of `region` starts
    last = -1  # just past the last whole line of the file, once found
    end = -1  # the walk has decoded or skipped the lines from here to `last`
    timed = False  # whether the latest event with a time was decoded
    every_line = True
    while True:
        start_at = max(head_end, size - span - 1)
        if start_at < r0:
            if whole:
                region = head[start_at:]
            else:
                more = pread(fd, r0 - start_at, start_at)
                nread += len(more)
                if len(more) < r0 - start_at:
                    break  # it shrank under us: what was read stands, a refresh reads again
                region = more + region
            r0 = start_at
            # Whole lines start at once if the region starts where the first line ends, else
            # after the newline ending the line the region cuts into.
            first = r0 if r0 == head_end else r0 + region.find(b"\n") + 1
        if last < 0:
            cut = r0 + region.rfind(b"\n") + 1
            if cut > first:
                last = end = cut
            elif r0 > head_end:
                span *= 4  # the last line is longer than the tail read: read further back
                continue
            else:
                break  # no whole line after the first one
        boundary = False
        while end > first:
            start = max(first, r0 + region.rfind(b"\n", first - r0, end - r0 - 1) + 1)
            kind = _TYPE_AT.match(region, start - r0)
            if not timed or kind is None or kind[1] in _BOUNDARY_TYPES:
                # Lines up to the latest with a time (events are written in time order; some
                # upstream ones carry none), a segment boundary, a line that does not say its
                # type up front: decoded. Other lines are skipped by their type.
                item = decode_for_summary(region[start - r0 : end - r0], start, 0)
                tail.append(item)
                if isinstance(item, Event):
                    timed = timed or event_time(item) is not None
                    if item.type in (RUN_START, RUN_END):
                        end = start
                        boundary = True
                        break  # the last segment's boundary: enough for the status
            else:
                every_line = False
            end = start
        if boundary or r0 <= head_end or span >= TAIL_BYTES:
            break
        span *= 4  # no boundary yet: look further back, up to TAIL_BYTES
    tail.reverse()
    items += tail
    return QuickRead(
        items=items,
        offset=last if last > first else head_end,
        every_line=every_line and r0 <= head_end and end <= first,
        bytes_read=nread,
    )
