"""The `fork` event: what a fork records about where it came from, and reading that back.
It lives beside agentor.engine.events, not in agentor.engine.fork: every reader of a log
(history's folds) reads it.

A fork's log is self-contained: a copy of its parent's events before the fork point, then one
`fork` event, then the fork's own segments. The event is upstream Agentor's (`forked_from`,
`started_at`, `ended_at`: upstream writes it after a whole copied run) with fields of ours
that an upstream reader ignores:

    at      the line of the parent's log the fork was made at (1-based, as the TUI numbers
            lines, unreadable ones included); absent when the whole run was forked
    edit    what the fork was given there:
              result, call_id, name   a tool result replaced (the result the fork used)
              input                   user messages added after the conversation so far
              prompt                  the messages a fork from the start began with (its new
                                      prompt, or its parent's again)
              model                   the model the fork's first segment ran with (a
                                      replay's, always: a resume asks it again)
    replay  for a replay (agentor.forking.replay_run):
              recording   the parent's tool results (`call_id`, `name`, `args`, `result` or
                          `error`), served to the replay's calls
              match       which recorded result answers a call: "strict" (the same tool and
                          arguments; repeats in recorded order) or "fifo" (the tool's results
                          in recorded order, whatever the arguments); absent (a log written
                          before it existed) reads as "strict"
              novel       what a call with no recorded answer gets: "error" (an error result:
                          nothing runs), "stop" (the replay ends `diverged` there) or "run"
              experiment  the experiment the replay is a candidate of (its id), when it is one
              model_settings  the request settings the replay set over its model's (a None
                          drops one), when it was given any: a resume sets them again;
                          absent (none given, or a log written before it existed) reads as {}

A log may hold anything: a field of the wrong shape reads as absent, never as an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.events import FORK, GENERATION, RUN_START, Event, is_list_of_dicts
from agentor.engine.settings import setting_changes

AT = "at"
EDIT = "edit"
REPLAY = "replay"
# Keys of `edit`.
RESULT = "result"
CALL_ID = "call_id"
NAME = "name"
INPUT = "input"
PROMPT = "prompt"
MODEL = "model"
# Keys of `replay`.
NOVEL = "novel"
RECORDING = "recording"
MATCH = "match"
EXPERIMENT = "experiment"
MODEL_SETTINGS = "model_settings"
NOVEL_ERROR = "error"  # a call the recording lacks is answered with an error: nothing runs
NOVEL_STOP = "stop"  # the replay ends there, `diverged`: nothing runs
NOVEL_RUN = "run"  # it runs
NOVEL_POLICIES = (NOVEL_ERROR, NOVEL_STOP, NOVEL_RUN)
MATCH_STRICT = "strict"  # the same tool and canonical arguments; repeats in recorded order
MATCH_FIFO = "fifo"  # the tool's recorded results in recorded order, whatever the arguments
MATCH_POLICIES = (MATCH_STRICT, MATCH_FIFO)


@dataclass(frozen=True)
class ForkMark:
    """A `fork` event read back. `index` is its position in the events it was read from."""

    index: int
    forked_from: str | None
    at: int | None = None
    edit: dict[str, Any] = field(default_factory=dict)
    replay: dict[str, Any] | None = None

    @property
    def input(self) -> list[dict[str, Any]] | None:
        value = self.edit.get(INPUT)
        return value if is_list_of_dicts(value) and value else None

    @property
    def prompt(self) -> list[dict[str, Any]] | None:
        value = self.edit.get(PROMPT)
        return value if is_list_of_dicts(value) and value else None

    @property
    def model(self) -> str | None:
        value = self.edit.get(MODEL)
        return value if isinstance(value, str) and value else None

    @property
    def novel(self) -> str:
        value = (self.replay or {}).get(NOVEL)
        return value if value in NOVEL_POLICIES else NOVEL_ERROR

    @property
    def match(self) -> str:
        value = (self.replay or {}).get(MATCH)
        return value if value in MATCH_POLICIES else MATCH_STRICT

    @property
    def experiment(self) -> str | None:
        value = (self.replay or {}).get(EXPERIMENT)
        return value if isinstance(value, str) and value else None

    @property
    def model_settings(self) -> dict[str, Any]:
        value = (self.replay or {}).get(MODEL_SETTINGS)
        if not isinstance(value, dict):
            return {}
        try:
            return setting_changes(value)
        except (ValueError, TypeError):  # not settings this version knows: read as absent
            return {}

    @property
    def recording(self) -> list[dict[str, Any]]:
        value = (self.replay or {}).get(RECORDING)
        return value if is_list_of_dicts(value) else []

    @classmethod
    def of(cls, index: int, event: Event) -> ForkMark:
        at = event.extra.get(AT)
        edit = event.extra.get(EDIT)
        replay = event.extra.get(REPLAY)
        return cls(
            index=index,
            forked_from=event.forked_from,
            at=at if isinstance(at, int) and not isinstance(at, bool) else None,
            edit=edit if isinstance(edit, dict) else {},
            replay=replay if isinstance(replay, dict) else None,
        )


def fork_event(
    forked_from: str,
    now: float,
    at: int | None = None,
    edit: dict[str, Any] | None = None,
    replay: dict[str, Any] | None = None,
) -> Event:
    """The `fork` event a fork writes after the events it copied."""
    extra: dict[str, Any] = {}
    if at is not None:
        extra[AT] = at
    if edit:
        extra[EDIT] = edit
    if replay is not None:
        extra[REPLAY] = replay
    return Event(FORK, forked_from=forked_from, started_at=now, ended_at=now, ts=now, extra=extra)


def last_fork(events: Sequence[Event]) -> ForkMark | None:
    """The run's own fork event: the last one (a fork of a fork also holds the copied one)."""
    for i in range(len(events) - 1, -1, -1):
        if events[i].type == FORK:
            return ForkMark.of(i, events[i])
    return None


def fork_opening(events: Sequence[Event]) -> ForkMark | None:
    """The last fork event when no generation has followed it yet and it adds messages (a new
    prompt, or input): what the model is asked next is still to be made from its edit."""
    mark = last_fork(events)
    if mark is None or (mark.input is None and mark.prompt is None):
        return None
    for e in events[mark.index + 1 :]:
        if e.type == GENERATION and e.messages is not None:
            return None
    return mark


def replay_mark(events: Sequence[Event]) -> ForkMark | None:
    """The fork event that makes this run a replay (it holds a recording), if any: it rules
    every segment after it, so a resumed replay serves and refuses calls as it began."""
    mark = last_fork(events)
    return mark if mark is not None and mark.replay is not None else None


def replayed_model(events: Sequence[Event], mark: ForkMark) -> str | None:
    """The name of the model the replay `mark` (read from `events`) was made with: its `edit`'s
    `model`, else (a log without it) the model of its first run_start; None if neither says."""
    if mark.model is not None:
        return mark.model
    for e in events[mark.index + 1 :]:
        if e.type == RUN_START:
            return e.model if isinstance(e.model, str) and e.model else None
    return None
