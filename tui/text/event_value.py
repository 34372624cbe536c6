"""One event of the open run as `v` shows it (the raw JSON line) and as `y` copies it (its
value). Plain text: the screen makes it literal (`agentor.literal`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentor.engine.events import GENERATION, MESSAGE, RUN_END, TOOL_RESULT, Event
from agentor.engine.log.format import DELTA_FIELD, BadLine
from agentor.literal import literal_line
from agentor.sources.source import RunEvents

# `y` copies this many characters at most: the clipboard is reached through the terminal (OSC 52,
# the text base64-encoded in one escape sequence), which many terminals cap or choke on, and
# 50 MB sent that way blocks the screen.
COPY_LIMIT = 100_000
# `v` shows this many characters of a section at most (a 10 MB line would take seconds to
# lay out); a note says how much more there is.
RAW_LIMIT = 200_000


def raw_sections(log: RunEvents, index: int) -> list[tuple[str, str]]:
    """(heading, text) of what `v` shows of line `index`: the line as it is in the file,
    pretty-printed; for a compact generation also the event decoded, its request rebuilt."""
    raw = log.raw(index)
    where = f"line {index + 1}, {len(raw):,} bytes"
    try:
        data: Any = json.loads(raw)
    except (ValueError, RecursionError):
        text = raw.decode("utf-8", "replace").rstrip("\n")
        return [(f"As written in the file ({where}; not JSON, shown as it is)", _cut(text))]
    sections = [(f"As written in the file ({where}), pretty-printed", _cut(_pretty(data)))]
    if isinstance(data, dict) and data.get("type") == GENERATION and DELTA_FIELD in data:
        item, request = log.item(index), log.request(index)
        if isinstance(item, Event):
            decoded = item.to_dict()
            if request is not None:
                decoded["messages"] = request
                heading = "Decoded: the generation with its request rebuilt from the deltas"
            else:
                heading = "Decoded: the request cannot be rebuilt (the line it extends is lost)"
            sections.append((heading, _cut(_pretty(decoded))))
    return sections


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _cut(text: str) -> str:
    if len(text) <= RAW_LIMIT:
        return text
    rest = len(text) - RAW_LIMIT
    return text[:RAW_LIMIT] + f"\n… cut: {rest:,} more characters not shown (they are in the file)"


@dataclass
class Copied:
    """What `y` copies: `what` it is ("tool result") and its `text`."""

    what: str
    text: str

    @property
    def cut(self) -> bool:
        return len(self.text) > COPY_LIMIT

    @property
    def clipboard(self) -> str:
        """The text as the clipboard takes it (UTF-8), its first COPY_LIMIT characters at most:
        a lone surrogate (a non-UTF-8 file name in a result) is replaced rather than make the
        copy fail."""
        return self.text[:COPY_LIMIT].encode("utf-8", "replace").decode("utf-8")

    @property
    def notice(self) -> str:
        n = len(self.text)
        if self.cut:
            return (
                f"Copied the first {COPY_LIMIT:,} of the {n:,} characters of the {self.what} "
                "(the clipboard takes no more through the terminal; w writes the whole run to "
                f"a file): {literal_line(self.text, 80)}"
            )
        chars = f"{n:,} character{'s' if n != 1 else ''}"
        return f"Copied the {self.what} ({chars}): {literal_line(self.text, 80)}"


def copy_value(log: RunEvents, index: int) -> Copied:
    """What `y` copies of line `index`: a tool's result (or error), a generation's or the
    final text, else the line as it is in the file."""
    item = log.item(index)
    if isinstance(item, Event):
        found = _value_of(item)
        if found is not None:
            return Copied(*found)
    what = "unreadable line" if isinstance(item, BadLine) else "event JSON"
    return Copied(what, log.raw(index).decode("utf-8", "replace").rstrip("\n"))


def _value_of(e: Event) -> tuple[str, str] | None:
    if e.type == TOOL_RESULT:
        if e.error is not None:
            return "tool error", e.error
        value = e.result
        return "tool result", value if isinstance(value, str) else _pretty(value)
    if e.text is not None and e.type in (GENERATION, MESSAGE, RUN_END):
        return ("generation text" if e.type == GENERATION else "final text"), e.text
    return None
