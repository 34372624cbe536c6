"""`Conversation`: a run's messages as the loop sends them, each message's JSON kept beside it.

A request carries the whole history, so writing it is the one cost of a turn that must grow
with the run (agentor.engine.chat_request). The loop only ever appends to its conversation and
never changes a message in place, so each message is written once, when it is first sent, and
a request is the join of those pieces: ~0.1 ms less at turn 500 on a quiet machine, ~0.6 ms
under load (bench/README.md, "long-run"). Any change but an append drops what was kept; a
message changed in place (which the engine never does) would be sent as it was first written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, SupportsIndex

import orjson


class Conversation(list[dict[str, Any]]):
    """A list of messages (dicts), appended to as the run goes on; `encoded()` is the JSON of
    each, written once."""

    __slots__ = ("_json",)

    def __init__(self, messages: Iterable[dict[str, Any]] = ()) -> None:
        super().__init__(messages)
        self._json: list[bytes] = []

    def encoded(self) -> list[bytes]:
        """The JSON of each message, in order: those not written yet are written now (orjson's
        `TypeError` when it cannot write one: the caller writes the whole request its way)."""
        done = len(self._json)
        if done > len(self):
            self._json.clear()
            done = 0
        if done < len(self):
            self._json.extend(map(orjson.dumps, self[done:]))
        return self._json

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        # A copy (copy, deepcopy, pickle) starts with nothing written: never a shared cache.
        return (Conversation, (list(self),))

    def _changed(self) -> None:
        self._json.clear()

    # Appending (append, extend, +=) keeps what was written; any other change drops it.
    def __setitem__(self, index: Any, value: Any) -> None:
        self._changed()
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        self._changed()
        super().__delitem__(index)

    def __imul__(self, n: SupportsIndex) -> Conversation:
        self._changed()
        return super().__imul__(n)

    def insert(self, index: SupportsIndex, value: Any) -> None:
        self._changed()
        super().insert(index, value)

    def pop(self, index: SupportsIndex = -1) -> Any:
        self._changed()
        return super().pop(index)

    def remove(self, value: Any) -> None:
        self._changed()
        super().remove(value)

    def clear(self) -> None:
        self._changed()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._changed()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._changed()
        super().reverse()
