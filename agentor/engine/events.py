"""The one schema of a run log: `Event` and `Usage`.

A run log is a sequence of events, one JSON object per line, `type` first. The field names are
those of upstream Agentor 0.1.x; our additions (`ts`, `run_id`, `v`, `pid`, `host`, ...) are
optional and ignored by an upstream reader.

What a generation was asked with besides its messages is written once per segment, on its
`run_start`: `tools` (the tool schemas offered), `settings` (the model's settings, when it
exposes any) and `config`, a digest of the two (and `output`, the structured output's type and
retries, when the agent has one); each generation of the segment carries the
same `config` (engine/request.py). Unknown fields and unknown event types are kept,
never fatal: they survive a `from_dict` / `to_dict` round trip unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from itertools import repeat
from typing import Any, ClassVar, TypeGuard

LOG_VERSION = 1

# Types written to a log. Transient types are streamed to live listeners, never persisted.
RUN_START = "run_start"
GENERATION = "generation"
TOOL_CALL = "tool_call"
TOOL_RESULT = "tool_result"
MESSAGE = "message"
RUN_END = "run_end"
FORK = "fork"
# A person's approval is asked for a gated tool call (`call_id`, `name`, `args`, `turn`, and a
# `deadline` when the call has an approval timeout); the segment then ends awaiting approval.
APPROVAL_REQUEST = "approval_request"
# A person's decision on a requested call (`call_id`, `name`, `turn`, `decision`: "approved" or
# "rejected", `by`, `note`; `args` only when the approver edited the arguments).
APPROVAL = "approval"
# A worker of a fleet took the run (`by`: the worker, `pid`, `host`; `attempt`: how many
# attempts since the run last ended a segment, this one included), and let it go without a
# `run_end` (`note` says why: it was stopping, it lost the run...). A claim with neither after
# it is an attempt whose worker died (agentor/fleet/claims.py).
CLAIM = "claim"
RELEASE = "release"
# A call of a tool that asks a person after a crash (`on_interrupt="ask"`) is about to run
# (`name`, `call_id`, `args`, `turn`, `server`, `pid`, `host`): a `tool_start` with no
# `tool_result` after it is a call whose outcome is unknown (engine/interrupted.py).
TOOL_START = "tool_start"
# A final answer that does not match the agent's `output_type` (`text`: the raw answer, `error`:
# what is invalid, `messages`: the correction the model is then sent; engine/structured.py).
INVALID_OUTPUT = "invalid_output"
# A tool withdrawn after `max_tool_failures` failed calls (`name`, `note`, `messages`: the notice
# the model is then sent; engine/toolfailures.py).
TOOL_DISABLED = "tool_disabled"
# Events whose `messages` join the conversation after the generation they follow: a resume sends
# them as the live run did (agentor.engine.history.follow_up_messages).
FOLLOW_UP_TYPES = frozenset({INVALID_OUTPUT, TOOL_DISABLED})
TEXT_DELTA = "text_delta"
# Transient too: a cancelled run is waiting for a tool thread to end (`name`, `call_id`, `turn`)
# before it records the result and lets the run go (a running thread cannot be interrupted).
TOOL_WAIT = "tool_wait"
TRANSIENT_TYPES = frozenset({TEXT_DELTA, TOOL_WAIT})


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }

    @classmethod
    def from_value(cls, value: Any) -> Usage | None:
        """A usage from a log value; None when the value is not a usage object."""
        if isinstance(value, Usage):
            return value
        if not isinstance(value, dict):
            return None
        return cls(
            input_tokens=_as_int(value.get("input_tokens")),
            output_tokens=_as_int(value.get("output_tokens")),
            total_tokens=_as_int(value.get("total_tokens")),
        )


def _as_int(value: Any) -> int:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 2**63:
        return int(value)
    return 0


@dataclass
class Event:
    """One step of a run. Fields that are None are not written."""

    type: str
    run_id: str | None = None
    agent: str | None = None
    model: str | None = None
    turn: int | None = None
    name: str | None = None
    call_id: str | None = None
    args: Any = None
    result: Any = None
    error: str | None = None
    status: str | None = None
    text: str | None = None
    calls: list[dict[str, Any]] | None = None
    usage: Usage | None = None
    started_at: float | None = None
    ended_at: float | None = None
    ts: float | None = None
    v: int | None = None
    pid: int | None = None
    host: str | None = None
    forked_from: str | None = None
    replayed_from: str | None = None
    config: str | None = None
    decision: str | None = None
    by: str | None = None
    note: str | None = None
    deadline: float | None = None
    tools: list[dict[str, Any]] | None = None
    settings: dict[str, Any] | None = None
    # The MCP server a tool_call / tool_result / tool_start's tool came from (its name).
    server: str | None = None
    # Why an approval_request waits (engine/interrupted.py: a call a crash interrupted).
    reason: str | None = None
    # On run_start: the MCP servers of the segment and the tools each offered
    # (engine/toolset.py).
    mcp: list[dict[str, Any]] | None = None
    output: dict[str, Any] | None = None
    messages: list[dict[str, Any]] | None = None
    # Fields this version does not know, kept in the order they were read and written back.
    extra: dict[str, Any] = field(default_factory=dict)
    # Not a field, so never in `to_dict` and never written: True on the copies a stream hands
    # back from the log of a finished run instead of recording anything (`ReplayedEvent`).
    # Not to be confused with `replayed_from`, a tool result answered from an earlier record.
    replayed: ClassVar[bool] = False

    @property
    def transient(self) -> bool:
        """True for events that are shown live but never written to a store."""
        return self.type in TRANSIENT_TYPES

    def to_dict(self) -> dict[str, Any]:
        # Runs once per saved event, between two fsyncs (bench/append.py), where a cold CPU
        # cache makes every step dear; a plain loop is the cheapest there (a comprehension
        # is a call more). __dict__ holds the fields in declaration order, `type` first.
        out = {}
        for key, value in self.__dict__.items():
            if value is not None:
                out[key] = value
        extra = self.extra
        if extra is not None:
            del out["extra"]
            for key, value in extra.items():
                out.setdefault(key, value)
        if "usage" in out and type(self.usage) is Usage:
            out["usage"] = self.usage.to_dict()
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, separators=(", ", ": "))

    def replayed_copy(self) -> ReplayedEvent:
        """This event as a stream hands it back from a finished run's log (`replayed` is True)."""
        copy = ReplayedEvent(**{f.name: getattr(self, f.name) for f in fields(Event)})
        copy.extra = dict(self.extra)
        return copy

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        """Build an event from a decoded log line.

        Raises `ValueError` when `data` is not an object with a string `type`. Known fields of
        the wrong JSON type are moved to `extra` (kept, written back) rather than trusted.
        """
        if not isinstance(data, dict):
            raise ValueError(f"an event must be a JSON object, not {type(data).__name__}")
        kind = data.get("type")
        if not isinstance(kind, str):
            raise ValueError("an event needs a string 'type'")
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            if key == "type":
                continue
            check = _FIELD_CHECKS.get(key)
            if check is None or value is None:
                extra[key] = value
            elif key == "usage":
                usage = Usage.from_value(value)
                if usage is None:
                    extra[key] = value
                else:
                    known[key] = usage
            elif check(value):
                known[key] = value
            else:
                extra[key] = value
        return cls(type=kind, extra=extra, **known)


class ReplayedEvent(Event):
    """A recorded event handed to a listener again, not recorded now (`Event.replayed_copy`)."""

    replayed: ClassVar[bool] = True


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_dict(v: Any) -> bool:
    return isinstance(v, dict)


def is_list_of_dicts(v: Any) -> TypeGuard[list[dict[str, Any]]]:
    """A list whose every item is a dict (a request's messages, a call list, tool schemas).
    A C loop: a MemoryStore checks every generation's whole request (~20 ns a message)."""
    return isinstance(v, list) and all(map(isinstance, v, repeat(dict)))


def _any(v: Any) -> bool:
    return True


_FIELD_CHECKS = {
    "run_id": _is_str,
    "agent": _is_str,
    "model": _is_str,
    "messages": is_list_of_dicts,
    "turn": _is_int,
    "usage": _any,
    "calls": is_list_of_dicts,
    "text": _is_str,
    "name": _is_str,
    "args": _any,
    "result": _any,
    "error": _is_str,
    "call_id": _is_str,
    "status": _is_str,
    "started_at": _is_num,
    "ended_at": _is_num,
    "ts": _is_num,
    "v": _is_int,
    "pid": _is_int,
    "host": _is_str,
    "forked_from": _is_str,
    "replayed_from": _is_str,
    "config": _is_str,
    "decision": _is_str,
    "by": _is_str,
    "note": _is_str,
    "deadline": _is_num,
    "tools": is_list_of_dicts,
    "settings": _is_dict,
    "server": _is_str,
    "reason": _is_str,
    "mcp": is_list_of_dicts,
    "output": _is_dict,
}
_FIELDS = tuple(f.name for f in fields(Event) if f.name not in ("type", "extra"))
assert set(_FIELDS) == set(_FIELD_CHECKS), "every Event field needs a type check"
