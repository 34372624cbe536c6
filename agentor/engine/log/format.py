"""Lines of a run log: encoding events, and decoding them back, compact generations included.

A `generation` records the exact request sent to the model. Written in full that makes a log
quadratic in the conversation's length, so the compact form writes a generation as a delta
against the previous generation of the same log:

    {"type": "generation", ..., "messages_delta": {"base": 3, "keep": 4, "tail": [...]}}

`base` is the index (0-based, counting generations in the file) of the generation it extends,
`keep` how many of that request's leading messages are shared, `tail` the new messages. The
decoder rebuilds full `messages`. Upstream readers ignore the unknown field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from itertools import compress, count
from operator import is_not
from typing import Any

import orjson

from agentor.engine.events import GENERATION, Event, is_list_of_dicts

DELTA_FIELD = "messages_delta"
# What orjson must hand back to `json` instead of writing in its own way: subclasses of str,
# int, dict and list (an IntEnum), dataclasses and datetimes, which `json` writes as their
# base type or refuses.
_ORJSON_OPTIONS = (
    orjson.OPT_APPEND_NEWLINE
    | orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
)
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _json_line(data: Any) -> bytes:
    # A None, or a NaN that orjson would have turned into one: `json` tells them apart. Lone
    # surrogates (a tool listing non-UTF-8 file names) cannot be UTF-8: written as their JSON
    # escape ("\\udcff") they read back as the same string.
    return (_JSON.encode(data) + "\n").encode("utf-8", "backslashreplace")


@dataclass
class BadLine:
    """A line that is not an event: torn by a crash, corrupt, or not an object with a type."""

    lineno: int
    offset: int
    reason: str
    raw: bytes

    def __str__(self) -> str:
        return f"line {self.lineno} (byte {self.offset}): {self.reason}"


def skipped_lines(bad: list[BadLine]) -> str:
    """The bad lines a read skipped, in one line: a file of random bytes has hundreds, and a
    command says so once, not once a line."""
    if len(bad) == 1:
        return f"skipped {bad[0]}"
    return f"skipped {len(bad)} bad lines; the first: {bad[0]}"


class LogEncoder:
    """Encodes events of one log, remembering the last generation to write deltas against."""

    def __init__(self, compact: bool = True) -> None:
        self.compact = compact
        self._last_request: list[dict[str, Any]] | None = None
        self._generations = 0
        # Size of the log this encoder has seen, kept by FileStore: a log that grew or shrank
        # behind its back (another process, a failed write) means the delta bases are stale.
        self.offset = 0

    def follow(self, event: Event) -> None:
        """Take note of an event already in the log (read back, not encoded here)."""
        if event.type == GENERATION:
            self._last_request = event.messages
            self._generations += 1

    def encode(self, event: Event) -> bytes:
        data = event.to_dict()
        if event.type == GENERATION:
            prev, msgs = self._last_request, event.messages
            if self.compact and prev is not None and msgs is not None:
                keep = _shared_prefix(prev, msgs)
                del data["messages"]
                data[DELTA_FIELD] = {
                    "base": self._generations - 1,
                    "keep": keep,
                    "tail": msgs[keep:],
                }
            self.follow(event)
        # orjson writes the line: each is encoded between two fsyncs (bench/append.py), where
        # the standard encoder costs three times orjson. What orjson cannot write as `json`
        # would goes to `json` (`_json_line`): NaN and infinities (orjson writes null; a line
        # holding `null` is checked that way), integers past 64 bits, keys that are not
        # strings, nesting past 254 levels, lone surrogates, and the passthrough types above.
        # Inline, not a function: one call fewer on the hot path.
        try:
            line = orjson.dumps(data, option=_ORJSON_OPTIONS)
        except TypeError:  # orjson.JSONEncodeError
            return _json_line(data)
        return _json_line(data) if b"null" in line else line


def _shared_prefix(a: list[Any], b: list[Any]) -> int:
    """How many leading messages `b` shares with `a`. Run on every generation: the engine
    hands each request the very message objects of the one before, so the shared part is
    found by identity in one C loop (~5 ns a message, ~5 us at 1,000); only from the first
    message that is another object are messages compared by value, in Python."""
    n = min(len(a), len(b))
    i = next(compress(count(), map(is_not, a, b)), n)
    while i < n and a[i] == b[i]:
        i += 1
    return i


# 19 digits in a row: maybe an integer past 64 bits, which orjson would read as a float.
_LONG_NUMBER = re.compile(rb"[0-9]{19}")


def loads_line(line: bytes) -> Any:
    """The line's JSON value, as `json` reads it: by orjson (a third of the time) unless the
    line holds a long run of digits; what orjson refuses (NaN, lone surrogates, a byte-order
    mark) is read by `json`, which may refuse it too, with its own reason."""
    if _LONG_NUMBER.search(line) is None:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass
    return json.loads(line)


class LogDecoder:
    """Decodes the lines of one log in order, rebuilding compact generations.

    Feed whole lines (ending in a newline). A line that cannot be decoded becomes a `BadLine`;
    decoding goes on with the next one.
    """

    def __init__(self) -> None:
        self.lineno = 0
        self.offset = 0
        self._last_request: list[dict[str, Any]] | None = None
        self._generations = 0

    def decode(self, line: bytes) -> Event | BadLine:
        self.lineno += 1
        start, self.offset = self.offset, self.offset + len(line)
        try:
            event = Event.from_dict(loads_line(line))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            return BadLine(self.lineno, start, _reason(exc, line), line)
        if event.type == GENERATION:
            self._rebuild(event)
            self._last_request = event.messages
            self._generations += 1
        return event

    def _rebuild(self, event: Event) -> None:
        if event.messages is not None:
            return  # a full generation: its messages win
        delta = messages_delta(event.extra)
        last = self._last_request
        if (
            delta is None
            or last is None
            or delta.get("base") != self._generations - 1
            or delta["keep"] > len(last)
        ):
            # The base is missing (a corrupt line before) or the delta is malformed: keep the
            # event, but do not guess its request.
            return
        del event.extra[DELTA_FIELD]
        event.messages = last[: delta["keep"]] + delta["tail"]


def messages_delta(fields: dict[str, Any]) -> dict[str, Any] | None:
    """The compact delta of a generation's fields when it is well formed (`keep` a count,
    `tail` a list of messages), else None. Whether its `base` is the generation before it is
    for the reader to check: only a reader that counts the log's generations knows."""
    delta = fields.get(DELTA_FIELD)
    if (
        isinstance(delta, dict)
        and isinstance(delta.get("keep"), int)
        and delta["keep"] >= 0
        and is_list_of_dicts(delta.get("tail"))
    ):
        return delta
    return None


def _reason(exc: Exception, line: bytes) -> str:
    if not line.endswith(b"\n"):
        return "torn line (no newline at the end)"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)


def split_lines(data: bytes) -> tuple[list[bytes], bytes]:
    """Whole lines (each ending in a newline) and the partial rest."""
    end = data.rfind(b"\n") + 1
    if end == 0:
        return [], data
    lines = [part + b"\n" for part in data[: end - 1].split(b"\n")]
    return lines, data[end:]
