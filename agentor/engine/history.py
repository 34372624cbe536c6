"""Pure functions over a run's events: status, what to resend, pending calls, usage, summary.

No I/O. The engine resumes from `resume_point`; the TUI folds each run's events into its
`RunSummary` as they are read (`fold`). Both read logs written by this engine and by upstream
Agentor 0.1.x.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.events import (
    CLAIM,
    FOLLOW_UP_TYPES,
    FORK,
    GENERATION,
    RELEASE,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Usage,
)
from agentor.engine.fork_mark import fork_opening
from agentor.engine.statuses import COMPLETED, FAILED, INCOMPLETE


def segments(events: Sequence[Event]) -> list[list[Event]]:
    """The log split at each `run_start`; events before the first one form their own segment."""
    out: list[list[Event]] = []
    for e in events:
        if e.type == RUN_START or not out:
            out.append([])
        out[-1].append(e)
    return out


def last_run_end(events: Sequence[Event]) -> Event | None:
    """The `run_end` of the last segment, or None when that segment did not end."""
    for e in reversed(events):
        if e.type == RUN_END:
            return e
        if e.type == RUN_START:
            return None
    return None


def status(events: Sequence[Event]) -> str:
    """`completed | failed | max_turns | awaiting_approval | incomplete`: only the last
    segment decides."""
    end = last_run_end(events)
    if end is None:
        return INCOMPLETE
    return end.status or FAILED


def total_usage(events: Sequence[Event]) -> Usage:
    """Tokens of every generation in the log, all segments: what the run has cost."""
    total = Usage()
    for e in events:
        if e.type == GENERATION and e.usage is not None:
            total = total + e.usage
    return total


def canonical_args(args: Any) -> str:
    """A key under which two calls with equal arguments compare equal."""
    if isinstance(args, str):
        text = args
        try:
            args = json.loads(text)
        except (ValueError, RecursionError):
            return text
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def call_parts(call: dict[str, Any]) -> tuple[str, str, str]:
    """(id, name, raw arguments) of an OpenAI-shaped tool call, tolerating missing parts."""
    fn = f if isinstance(f := call.get("function"), dict) else {}
    args = fn.get("arguments", "")
    if not isinstance(args, str):
        args = json.dumps(args)
    return str(call.get("id", "")), str(fn.get("name", "")), args


def assistant_message(gen: Event) -> dict[str, Any]:
    """The assistant message a generation produced, as it goes into the next request."""
    msg: dict[str, Any] = {"role": "assistant", "content": gen.text}
    if gen.calls:
        msg["tool_calls"] = gen.calls
    return msg


def tool_message(call_id: str, result: Event) -> dict[str, Any]:
    content = result.result if result.error is None else f"Error: {result.error}"
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False, default=str)
    return {"role": "tool", "tool_call_id": call_id, "content": _utf8_safe(content)}


def _utf8_safe(text: str) -> str:
    """`text` with lone surrogates (what `os.listdir` gives for non-UTF-8 names) replaced by
    U+FFFD: a request holding them cannot be encoded and would fail the run. The log keeps
    the tool's result as it was."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    return text


def follow_up_messages(events: Sequence[Event], start: int) -> list[dict[str, Any]]:
    """The messages that events from `start` to the next generation add to the conversation
    after the generation's answer and results (FOLLOW_UP_TYPES: a correction of an invalid
    structured answer, a notice that a tool was withdrawn), in the order they were recorded."""
    out: list[dict[str, Any]] = []
    for i in range(start, len(events)):
        e = events[i]
        if e.type == GENERATION:
            break
        if e.type in FOLLOW_UP_TYPES and e.messages:
            out.extend(e.messages)
    return out


@dataclass
class Recorded:
    """A tool result from a rewound generation, kept to answer one equal call later."""

    name: str
    args_key: str
    event: Event


@dataclass
class ResumePoint:
    """Where a resume picks up.

    `messages` is the request to send next; when `final_text` is set, the last generation
    already answered and only the ending is missing. `rewound` is True when the last
    generation's calls were not all answered and it is asked again. `recorded` holds results
    of rewound generations, each of which answers one equal call instead of running the tool.
    """

    messages: list[dict[str, Any]]
    turn: int
    final_text: str | None = None
    rewound: bool = False
    recorded: list[Recorded] = field(default_factory=list)
    input_messages: list[dict[str, Any]] = field(default_factory=list)


def results_after(events: Sequence[Event], start: int) -> dict[str, Event]:
    """The tool results from `start` to the next generation, by call id (the last one wins)."""
    return {cid: events[i] for cid, i in result_positions(events, start).items()}


def result_positions(events: Sequence[Event], start: int) -> dict[str, int]:
    """Where `results_after` finds each result: its position in `events`, by call id."""
    found: dict[str, int] = {}
    for i in range(start, len(events)):
        e = events[i]
        if e.type == GENERATION:
            break
        if e.type == TOOL_RESULT and e.call_id:
            found[e.call_id] = i
    return found


def _unspent_records(events: Sequence[Event], gens: list[int]) -> list[Recorded]:
    """Results of rewound generations (not all calls answered) that no later call has used.

    Walked in order so that a replay spends the record it was answered from at that point:
    call ids are not unique across segments (many servers number calls per request).
    """
    recorded: list[Recorded] = []
    for i in gens:
        results = results_after(events, i + 1)
        for r in results.values():
            if r.replayed_from:
                key = canonical_args(r.args)
                spent = next(
                    (
                        x
                        for x in recorded
                        if x.event.call_id == r.replayed_from
                        and x.name == (r.name or "")
                        and x.args_key == key
                    ),
                    None,
                )
                if spent is not None:
                    recorded.remove(spent)
        ids = [call_parts(c)[0] for c in events[i].calls or []]
        if ids and not all(cid in results for cid in ids):
            for cid in ids:
                answer = results.get(cid)
                if answer is not None and answer.error is None:
                    recorded.append(
                        Recorded(answer.name or "", canonical_args(answer.args), answer)
                    )
    return recorded


def resume_point(events: Sequence[Event]) -> ResumePoint:
    """What to send next to continue the run the log describes.

    A fork that adds messages (agentor.engine.fork_mark) and has not asked the model yet is asked
    with them: its new prompt, or the conversation so far (its final answer included, when the
    copied run had ended) followed by its input."""
    mark = fork_opening(events)
    if mark is None:
        return _point(events)
    point = _point(events[: mark.index], mark.prompt)
    if mark.input is None:
        return point
    said = [] if point.final_text is None else [{"role": "assistant", "content": point.final_text}]
    messages = [*point.messages, *said, *mark.input]
    return dataclasses.replace(point, messages=messages, final_text=None, rewound=False)


def _point(events: Sequence[Event], prompt: list[dict[str, Any]] | None = None) -> ResumePoint:
    """`resume_point` of a log whose last fork (if any) is settled; `prompt` stands for the
    input of a log with no run_start yet (a fork from the start)."""
    first = next((e for e in events if e.type == RUN_START and e.messages is not None), None)
    input_messages = first.messages if first is not None and first.messages else prompt or []
    gens = [i for i, e in enumerate(events) if e.type == GENERATION and e.messages is not None]
    point = ResumePoint(
        messages=list(input_messages),
        turn=0,
        recorded=_unspent_records(events, gens),
        input_messages=input_messages,
    )
    if not gens:
        return point
    gen = events[gens[-1]]
    assert gen.messages is not None
    point.messages, point.turn = list(gen.messages), gen.turn or 0
    follow_ups = follow_up_messages(events, gens[-1] + 1)
    if not gen.calls:
        if follow_ups:  # an answer refused (an invalid structured output): asked again
            point.messages += [assistant_message(gen), *follow_ups]
        else:
            point.final_text = gen.text or ""
        return point
    results = results_after(events, gens[-1] + 1)
    ids = [call_parts(c)[0] for c in gen.calls]
    if all(cid in results for cid in ids):
        point.messages += [assistant_message(gen), *(tool_message(c, results[c]) for c in ids)]
        point.messages += follow_ups
        return point
    # Rewind: ask again with the request that produced the half-answered calls.
    point.turn, point.rewound = max(point.turn - 1, 0), True
    return point


@dataclass
class RunSummary:
    """What a list of runs shows about one run; derived from its events alone.

    `tool_calls` counts the calls of the run's conversation, not `tool_call` events: a resume
    that rewinds asks the latest turn's calls again (often under the same ids, as many servers
    number calls per request), and a re-asked call answered from the record is the call that
    was recorded. So each turn counts the calls of its latest generation: a re-asked turn
    replaces the calls of the generation it rewound, it does not add to them.

    `active_time()` is the time the run was worked on: the sum over segments of each
    segment's span (its `run_start` to its `run_end`, or to its last event if it has none),
    without the idle gaps between a crash and the resume, nor a fork's `fork` marker (written
    when the fork was made, after the steps it copied), nor a fleet's `claim` and `release`
    markers. The fields after `bad_lines`
    are the tailing state behind these two.
    """

    run_id: str
    status: str = INCOMPLETE
    agent: str | None = None
    model: str | None = None
    started_at: float | None = None
    last_event_at: float | None = None
    ended_at: float | None = None
    turns: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    first_prompt: str | None = None
    final_output: str | None = None
    error: str | None = None
    segments: int = 0
    events: int = 0
    bad_lines: int = 0
    calls_before: int = 0  # calls of the turns before the latest generation's
    calls_latest: int = 0  # `tool_call` events since the latest generation
    calls_turn: int | None = None  # the latest generation's turn
    active_before: float | None = None  # seconds spanned by the segments before this one
    segment_started_at: float | None = None  # the current segment's first time
    segment_last_at: float | None = None  # the current segment's latest time
    segment_open: bool = True  # the current segment has not ended (no `run_end` yet)

    def active_time(
        self, now: float | None = None, held_since: float | None = None
    ) -> float | None:
        """Seconds the run was worked on (see the class); `now` extends the current segment
        to now (a run a live process is running). None when no event has a time.

        `held_since`: when its holder took the run at the earliest. An open segment begun
        before then is the one a crash left (a resume records its segment only with its first
        step): it counts to its last event, and the live work from `held_since`, not the idle
        time between."""
        start = self.segment_started_at
        if start is None:
            return self.active_before
        before = self.active_before or 0.0
        end = self.segment_last_at
        if now is not None and self.segment_open:
            if held_since is not None and start < held_since:
                last = end or start
                return before + max(0.0, last - start) + max(0.0, now - held_since)
            end = max(now, end or now)
        return before + max(0.0, (end or start) - start)

    @property
    def wall_time(self) -> float | None:
        """Seconds from the first start to the last event, idle gaps included."""
        if self.started_at is None or self.last_event_at is None:
            return None
        return max(0.0, self.last_event_at - self.started_at)


def first_user_text(messages: Sequence[dict[str, Any]] | None) -> str | None:
    for m in messages or ():
        if m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):  # content parts
                texts = [p.get("text") for p in content if isinstance(p, dict)]
                return " ".join(t for t in texts if isinstance(t, str))
    return None


def event_time(e: Event) -> float | None:
    return e.ts or e.ended_at or e.started_at


def summarize(run_id: str, events: Sequence[Event], bad_lines: int = 0) -> RunSummary:
    """A run's summary from all of its events at once (exports, the `agentor` command)."""
    return fold(RunSummary(run_id=run_id, bad_lines=bad_lines), events)


def fold(s: RunSummary, events: Sequence[Event]) -> RunSummary:
    """Update a summary with events that follow the ones it was made from (for tailing)."""
    for e in events:
        s.events += 1
        t = event_time(e)
        if t is not None:
            s.last_event_at = t if s.last_event_at is None else max(s.last_event_at, t)
        if e.type == RUN_START:
            _new_segment(s, e.started_at or t)  # before its time extends the segment
        if e.type not in _BOOKKEEPING:
            _segment_time(s, t)
        if e.type == RUN_START:
            s.segments += 1
            s.status = INCOMPLETE
            s.ended_at = None
            s.error = None  # the error of an earlier segment no longer describes the run
            s.agent = s.agent or e.agent
            s.model = s.model or e.model
            if s.started_at is None:
                s.started_at = e.started_at or e.ts
            if s.first_prompt is None:
                s.first_prompt = first_user_text(e.messages)
        elif e.type == GENERATION:
            s.turns = max(s.turns, e.turn or 0)
            if e.usage is not None:
                s.usage = s.usage + e.usage
            s.model = s.model or e.model
            if e.turn is None or e.turn != s.calls_turn:
                s.calls_before += s.calls_latest  # a new turn; else it asks a rewound one again
            s.calls_turn, s.calls_latest = e.turn, 0
        elif e.type == TOOL_CALL:
            s.calls_latest += 1
        elif e.type == RUN_END:
            s.segment_open = False
            s.status = e.status or FAILED
            s.ended_at = e.ended_at or e.ts
            s.error = e.error
            if e.status == COMPLETED:
                s.final_output = e.text
        s.tool_calls = s.calls_before + s.calls_latest
    return s


# A fleet's claims and releases are no work on the run: a claim comes long after the crash of
# the segment before it, and must not stretch that segment over the idle time between. Nor is
# a fork's marker, written after a copy of its parent's steps (maybe days after them).
_BOOKKEEPING = frozenset({CLAIM, RELEASE, FORK})


def _new_segment(s: RunSummary, start: float | None) -> None:
    """A `run_start`: the segment before it is closed, its span added to the active time."""
    s.active_before = s.active_time()
    s.segment_started_at = start if start is not None and math.isfinite(start) else None
    s.segment_last_at = s.segment_started_at
    s.segment_open = True


def _segment_time(s: RunSummary, t: float | None) -> None:
    """An event's time extends the current segment, until the segment has ended."""
    if t is None or not math.isfinite(t) or not s.segment_open:
        return  # no time, one no clock can show (a log may hold any number), or ended
    if s.segment_started_at is None:
        s.segment_started_at = t  # a segment without a timed run_start starts at its first time
    if s.segment_last_at is None or t > s.segment_last_at:
        s.segment_last_at = t
