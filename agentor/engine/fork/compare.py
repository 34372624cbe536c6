"""Comparing two runs: a fork with its parent, a replay with the run it replayed, any two runs.
Pure: `compare(a_events, b_events)` reads two event lists (as `store.load` gives them) and
returns a `Comparison`; the `agentor diff` command prints one, the TUI's compare view shows one.

The runs are aligned by turn number (a fork numbers its turns on from its parent's, a replay
from 1). A turn is the run's latest generation of that number (a turn asked again after a
crash replaces the one it rewound), its calls, and the results that answered them.

    Comparison
        a, b           Side: each run as a whole
        turns          [TurnPair]: turn 1, 2, ... up to the longer run's last, each with the
                       two runs' `Turn` (None where a run has no such turn) and its differences
        differences    [Difference]: every difference, in order: by turn, then within a turn
                       request, text, calls, arguments, results; then the final answer, status
        first          the first divergence (`differences[0]`), or None: the runs did the same
        same           no difference at all

    Side: events, turns ([Turn]), status, final_output, error, usage (every generation's
        tokens), duration (seconds worked on it, as the run list's *took*; None when its log
        has no times), tool_calls, fork (its own `fork` event as a `ForkMark`, or None);
        `usage_since(turn)`: the tokens of that turn and the ones after it
    Turn: number, index (its generation's position in the events), model, request (the
        messages sent), text, calls ([Call]), usage, duration (the model's seconds)
    Call: call_id, name, args (the JSON text the model gave), result, error, index (its
        generation's position), result_index (its tool result's position; None: never
        answered), replayed_from (answered from a recorded result: copied, served, replayed),
        answer (how a view marks its answer: "served", "executed", "refused" or None, as
        agentor.engine.fork.recording.marked_answer says), drift (a fifo replay served it the
        result of a call with other arguments)
    Difference: kind (one of KINDS), turn (None for the run as a whole), call (the call's
        position in the turn's calls, or None), name (its tool), a and b (the two values; None
        where absent), a_index and b_index (the positions, in each run's events, of the event
        that shows it, for a view to highlight; None where absent); `describe()`, one line

Kinds: `request` (what the model was asked differs, and not only because of an earlier
difference: a new prompt, an added message), `text`, `calls` (how many, or which tool),
`args`, `result` (value or error), `turn` (a turn only one run has), `final_output`,
`status`. Call ids are not compared (each model numbers its own): calls are matched by
position, and requests are compared without them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.events import GENERATION, Event, Usage
from agentor.engine.fork.recording import DRIFT, marked_answer
from agentor.engine.fork_mark import ForkMark, last_fork
from agentor.engine.history import call_parts, canonical_args, result_positions, summarize

REQUEST, TEXT, CALLS, ARGS, RESULT, TURN = "request", "text", "calls", "args", "result", "turn"
FINAL_OUTPUT, STATUS = "final_output", "status"
KINDS = (REQUEST, TEXT, CALLS, ARGS, RESULT, TURN, FINAL_OUTPUT, STATUS)


@dataclass(frozen=True)
class Call:
    call_id: str
    name: str
    args: Any
    result: Any = None
    error: str | None = None
    index: int = 0
    result_index: int | None = None
    replayed_from: str | None = None
    answer: str | None = None
    drift: bool = False


@dataclass(frozen=True)
class Turn:
    number: int
    index: int
    model: str | None
    request: list[dict[str, Any]]
    text: str | None
    calls: list[Call]
    usage: Usage | None
    duration: float | None


@dataclass(frozen=True)
class Difference:
    kind: str
    turn: int | None
    a: Any = None
    b: Any = None
    call: int | None = None
    name: str | None = None
    a_index: int | None = None
    b_index: int | None = None

    def describe(self) -> str:
        """Where the runs differ, in one line ("turn 2, call 1 get_weather: result")."""
        where = "the run" if self.turn is None else f"turn {self.turn}"
        if self.call is not None:
            where += f", call {self.call + 1}" + (f" {self.name}" if self.name else "")
        return f"{where}: {_WHAT[self.kind]}"


@dataclass
class Side:
    events: Sequence[Event]
    turns: list[Turn]
    status: str
    final_output: str | None
    error: str | None
    usage: Usage
    duration: float | None
    tool_calls: int
    fork: ForkMark | None

    def usage_since(self, turn: int) -> Usage:
        """The tokens of turn `turn` and the turns after it (what a fork spent on its own)."""
        total = Usage()
        for t in self.turns:
            if t.number >= turn and t.usage is not None:
                total = total + t.usage
        return total


@dataclass
class TurnPair:
    number: int
    a: Turn | None
    b: Turn | None
    differences: list[Difference] = field(default_factory=list)


@dataclass
class Comparison:
    a: Side
    b: Side
    turns: list[TurnPair]
    differences: list[Difference]

    @property
    def first(self) -> Difference | None:
        return self.differences[0] if self.differences else None

    @property
    def same(self) -> bool:
        return not self.differences


def compare(a_events: Sequence[Event], b_events: Sequence[Event]) -> Comparison:
    """The comparison of two runs' events (see the module)."""
    a, b = side(a_events), side(b_events)
    by_a = {t.number: t for t in a.turns}
    by_b = {t.number: t for t in b.turns}
    pairs: list[TurnPair] = []
    same_so_far = True
    alike: set[tuple[int, int]] = set()  # messages found the same but for their call ids
    for n in sorted(by_a.keys() | by_b.keys()):
        pair = TurnPair(n, by_a.get(n), by_b.get(n))
        pair.differences = _turn_differences(pair, same_so_far, alike)
        same_so_far = same_so_far and not pair.differences
        pairs.append(pair)
    differences = [d for p in pairs for d in p.differences]
    if a.final_output != b.final_output:
        differences.append(Difference(FINAL_OUTPUT, None, a.final_output, b.final_output))
    if a.status != b.status:
        differences.append(Difference(STATUS, None, a.status, b.status))
    return Comparison(a, b, pairs, differences)


def first_differing_message(a: Any, b: Any) -> tuple[Any, Any]:
    """Of two requests (a REQUEST difference's sides), the first message where they part: what
    the new prompt or input is. (None, None) when none differs."""
    a, b = list(a or []), list(b or [])
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x != y:
            return x, y
    return None, None


def side(events: Sequence[Event]) -> Side:
    """One run as a comparison sees it."""
    s = summarize("", events)
    return Side(
        events=events,
        turns=turns_of(events),
        status=s.status,
        final_output=s.final_output,
        error=s.error,
        usage=s.usage,
        duration=s.active_time(),
        tool_calls=s.tool_calls,
        fork=last_fork(events),
    )


def turns_of(events: Sequence[Event]) -> list[Turn]:
    """The run's turns in order: the latest generation of each number, its calls answered."""
    return [_turn(events, n, i) for n, i in sorted(latest_generations(events).items())]


def latest_generations(events: Sequence[Event]) -> dict[int, int]:
    """Each turn's generation as the engine sees the run: by turn number, the position of its
    latest generation (a turn asked again after a crash replaces the attempt it rewound)."""
    latest: dict[int, int] = {}
    for i, e in enumerate(events):
        if e.type == GENERATION:
            latest[e.turn if e.turn is not None else len(latest) + 1] = i
    return latest


def _turn(events: Sequence[Event], number: int, i: int) -> Turn:
    gen = events[i]
    where = result_positions(events, i + 1)
    calls = []
    for call in gen.calls or []:
        call_id, name, raw = call_parts(call)
        j = where.get(call_id)
        r = None if j is None else events[j]
        if r is None:
            calls.append(Call(call_id, name, raw, index=i))
            continue
        answer, drift = marked_answer(r), DRIFT in r.extra
        calls.append(
            Call(call_id, name, raw, r.result, r.error, i, j, r.replayed_from, answer, drift)
        )
    began, ended = gen.started_at, gen.ended_at
    took = ended - began if began is not None and ended is not None else None
    return Turn(number, i, gen.model, gen.messages or [], gen.text, calls, gen.usage, took)


def _turn_differences(
    pair: TurnPair, same_so_far: bool, alike: set[tuple[int, int]]
) -> list[Difference]:
    a, b, n = pair.a, pair.b, pair.number
    if a is None or b is None:
        return [Difference(TURN, n, _brief(a), _brief(b), a_index=_at(a), b_index=_at(b))]
    out = []
    if same_so_far and not _same_request(a.request, b.request, alike):
        out.append(Difference(REQUEST, n, a.request, b.request, a_index=a.index, b_index=b.index))
    if (a.text or None) != (b.text or None):
        out.append(Difference(TEXT, n, a.text, b.text, a_index=a.index, b_index=b.index))
    if len(a.calls) != len(b.calls):
        names = [c.name for c in a.calls], [c.name for c in b.calls]
        out.append(Difference(CALLS, n, *names, a_index=a.index, b_index=b.index))
    for k, (x, y) in enumerate(zip(a.calls, b.calls, strict=False)):
        out.extend(_call_differences(n, k, x, y))
    return out


def _call_differences(n: int, k: int, x: Call, y: Call) -> list[Difference]:
    if x.name != y.name:
        return [Difference(CALLS, n, x.name, y.name, k, a_index=x.index, b_index=y.index)]
    out = []
    if canonical_args(x.args) != canonical_args(y.args):
        out.append(Difference(ARGS, n, x.args, y.args, k, x.name, x.index, y.index))
    if (x.result, x.error) != (y.result, y.error):
        a, b = _answer(x), _answer(y)
        out.append(Difference(RESULT, n, a, b, k, x.name, x.result_index, y.result_index))
    return out


def _answer(call: Call) -> Any:
    """A call's answer as compared and shown: its result, or its error."""
    if call.result_index is None and call.error is None and call.result is None:
        return None
    return {"error": call.error} if call.error is not None else call.result


def _brief(turn: Turn | None) -> dict[str, Any] | None:
    if turn is None:
        return None
    return {"text": turn.text, "calls": [c.name for c in turn.calls]}


def _at(turn: Turn | None) -> int | None:
    return None if turn is None else turn.index


def _same_request(
    a: list[dict[str, Any]], b: list[dict[str, Any]], alike: set[tuple[int, int]]
) -> bool:
    """Whether two requests are the same but for their call ids. Message by message, each
    compared as it is first and without its ids only when that differs: a request holds every
    message before it, so copying each whole (as `_plain` does) made long runs quadratic.
    `alike` holds the pairs of messages (by identity) found the same without their ids in the
    requests before: a log's requests share their earlier messages (the very objects), so a
    replay's, whose call ids all differ, are each copied once, not once a turn."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if x == y or (id(x), id(y)) in alike:
            continue
        if _plain([x]) != _plain([y]):
            return False
        alike.add((id(x), id(y)))
    return True


def _plain(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A request without its call ids, which each model numbers its own way."""
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if k != "tool_call_id"}
        if isinstance(m.get("tool_calls"), list):
            m["tool_calls"] = [
                {k: v for k, v in c.items() if k != "id"} if isinstance(c, dict) else c
                for c in m["tool_calls"]
            ]
        out.append(m)
    return out


_WHAT = {
    REQUEST: "the model was asked something else",
    TEXT: "the model said something else",
    CALLS: "other tool calls",
    ARGS: "other arguments",
    RESULT: "another result",
    TURN: "only one run has this turn",
    FINAL_OUTPUT: "another final answer",
    STATUS: "another status",
}
