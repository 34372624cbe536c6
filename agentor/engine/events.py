"""The one schema of a run log: `Event`, `Usage`, and each type of event declared once
(`EVENT_TYPES`: its fields and what it means).

A run log is a sequence of events, one JSON object per line, `type` first. The field names are
those of upstream Agentor 0.1.x; our additions (`ts`, `run_id`, `v`, `pid`, `host`, ...) are
optional and ignored by an upstream reader. Unknown fields and unknown event types are kept,
never fatal: they survive a `from_dict` / `to_dict` round trip unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from itertools import repeat
from typing import Any, ClassVar, TypeGuard

LOG_VERSION = 1

# The types a log holds, and two a live run streams (transient): each is declared once, in
# EVENT_TYPES below, with its fields and what it means.
RUN_START = "run_start"
GENERATION = "generation"
TOOL_CALL = "tool_call"
TOOL_RESULT = "tool_result"
MESSAGE = "message"
RUN_END = "run_end"
FORK = "fork"
APPROVAL_REQUEST = "approval_request"
APPROVAL = "approval"
CLAIM = "claim"
RELEASE = "release"
TOOL_START = "tool_start"
INVALID_OUTPUT = "invalid_output"
TOOL_DISABLED = "tool_disabled"
TEXT_DELTA = "text_delta"
TOOL_WAIT = "tool_wait"


@dataclass(frozen=True)
class EventType:
    """One type of event: its `name` (the `type` of its lines), what it `means`, the `fields`
    of `Event` it carries besides `type` and `ts` (every event has a `ts`), and the `extra`
    keys of ours it carries (kept in `Event.extra`; an upstream reader ignores them).
    `transient`: streamed to a run's live listeners, never written to a log.

    The manual's log format page is made from these (scripts/gen_docs.py), and every view
    that shows an event has an entry for each type (tests/test_event_types.py)."""

    name: str
    means: str
    fields: tuple[str, ...]
    extra: tuple[str, ...] = ()
    transient: bool = False


# Every event type, in the order a run writes them.
EVENT_TYPES: dict[str, EventType] = {
    t.name: t
    for t in (
        EventType(
            RUN_START,
            "A segment begins (a run, or its resume): the agent, its model and its input. "
            "What each generation of the segment is asked with besides its messages is written "
            "once, here: `tools` (the tool schemas offered), `settings` (the model's settings, "
            "when it exposes any), `config` (a digest of the two), `mcp` (the MCP servers and "
            "the tools each offered) and `output` (the structured output's type and retries). "
            "A run collected from another framework's spans says where it came from in "
            "`source`.",
            (
                "run_id",
                "agent",
                "model",
                "config",
                "tools",
                "settings",
                "mcp",
                "output",
                "messages",
                "v",
                "pid",
                "host",
                "started_at",
            ),
            ("source",),
        ),
        EventType(
            GENERATION,
            "The model answered: its text or the tool calls it asks for, the tokens it used, "
            "the request it was sent (`messages`; written as a delta against the generation "
            "before, `messages_delta`) and the segment's `config`. `note` says why a fallback "
            "model answered; `withdrawn` names the tools no longer offered.",
            (
                "turn",
                "model",
                "usage",
                "calls",
                "text",
                "note",
                "config",
                "messages",
                "started_at",
                "ended_at",
            ),
            ("messages_delta", "withdrawn"),
        ),
        EventType(
            TOOL_CALL,
            "A tool call the model asked for, with its arguments (`server`: the MCP server "
            "its tool came from).",
            ("turn", "name", "call_id", "args", "server"),
        ),
        EventType(
            TOOL_START,
            'A call of a tool that asks a person after a crash (`on_interrupt="ask"`) is '
            "about to run, in the process `pid` on `host`: a `tool_start` with no "
            "`tool_result` after it is a call whose outcome is unknown.",
            ("turn", "name", "call_id", "args", "server", "pid", "host"),
        ),
        EventType(
            TOOL_RESULT,
            "A tool call's result, or its `error`. `by`: the person who gave the result it "
            "had (it did not run); `replayed_from`: the recorded call whose result it "
            "repeats (it did not run either), and `drift`: that call's arguments, when a "
            "replay served its result to a call with others; `novel`: true on the result of a "
            "replay's call with no recorded answer (with an `error` when it was refused, "
            "without when it ran).",
            (
                "turn",
                "name",
                "call_id",
                "args",
                "result",
                "error",
                "server",
                "by",
                "replayed_from",
                "started_at",
                "ended_at",
            ),
            ("drift", "novel"),
        ),
        EventType(
            MESSAGE,
            "The final answer of a completed run.",
            ("turn", "text", "usage"),
        ),
        EventType(
            RUN_END,
            "A segment ends: its `status` (the last segment's decides the run's), its answer "
            "or its error, and the tokens of the segment. A `run_end` the fleet wrote when it "
            "gave up on a run carries `gave_up` (the number of attempts).",
            ("turn", "status", "text", "error", "usage", "ended_at"),
            ("gave_up",),
        ),
        EventType(
            FORK,
            "This log is a fork: what comes before is its parent's, copied; what follows, its "
            "own segments. `at`: the parent's line it was forked at (absent for a whole-run "
            "fork); `edit`: what it was given there; `replay`: a replay's recording and how it "
            "answers calls.",
            ("forked_from", "started_at", "ended_at"),
            ("at", "edit", "replay"),
        ),
        EventType(
            APPROVAL_REQUEST,
            "A person's approval is asked for a gated tool call, by its `deadline` when the "
            "call has an approval timeout; the segment then ends awaiting approval. A resume "
            "asks it too for a call a crash interrupted (`reason`; `started_at`, `pid` and "
            "`host`: where it was started).",
            (
                "turn",
                "name",
                "call_id",
                "args",
                "server",
                "deadline",
                "reason",
                "started_at",
                "pid",
                "host",
            ),
        ),
        EventType(
            APPROVAL,
            'A person\'s decision on a requested call: `decision` ("approved" or '
            '"rejected"), `by` whom, a `note`; `args` when the approver edited the '
            "arguments, `result` when they gave the result the call had.",
            ("turn", "name", "call_id", "decision", "by", "note", "args", "result"),
        ),
        EventType(
            CLAIM,
            "A worker of a fleet took the run (`by`: the worker; `attempt`: how many attempts "
            "since the run last ended a segment, this one included). A claim with neither a "
            "`run_end` nor a `release` after it is an attempt whose worker died. Not counted "
            "as time worked on the run.",
            ("by", "pid", "host"),
            ("attempt",),
        ),
        EventType(
            RELEASE,
            "The worker let the run go without a `run_end`; `note` says why (it was stopping, "
            "it lost the run...). Not counted as time worked on the run.",
            ("by", "pid", "host", "note"),
        ),
        EventType(
            INVALID_OUTPUT,
            "A final answer that does not match the agent's `output_type`: `text`, the raw "
            "answer; `error`, what is invalid; `messages`, the correction the model is then "
            "sent.",
            ("turn", "text", "error", "messages"),
        ),
        EventType(
            TOOL_DISABLED,
            "A tool withdrawn after `max_tool_failures` failed calls: `note` says so; "
            "`messages`, the notice the model is then sent.",
            ("turn", "name", "note", "messages"),
        ),
        EventType(
            TEXT_DELTA,
            "A piece of the model's text as it streams in.",
            ("turn", "text"),
            transient=True,
        ),
        EventType(
            TOOL_WAIT,
            "A cancelled run waits for a tool's thread to end before it records the result "
            "and lets the run go (a running thread cannot be interrupted).",
            ("turn", "name", "call_id"),
            transient=True,
        ),
    )
}
# Events whose `messages` join the conversation after the generation they follow: a resume sends
# them as the live run did (agentor.engine.history.follow_up_messages).
FOLLOW_UP_TYPES = frozenset({INVALID_OUTPUT, TOOL_DISABLED})
TRANSIENT_TYPES = frozenset(t.name for t in EVENT_TYPES.values() if t.transient)
# The types a log holds: every type but the transient ones.
LOGGED_TYPES = tuple(t.name for t in EVENT_TYPES.values() if not t.transient)


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
    # Why an approval_request waits (agentor.engine.interrupted: a call a crash interrupted).
    reason: str | None = None
    # On run_start: the MCP servers of the segment and the tools each offered
    # (agentor.engine.toolset).
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
