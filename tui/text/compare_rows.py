"""What the compare view shows: two runs' turns side by side, a row for each thing a turn holds
(`compare_rows`), each difference on the row that shows it, and the totals (`side_summary`).
Plain Rich text, every cell from `literal_line`: nothing in a log can style the terminal.

The alignment and the differences are `agentor.engine.fork.compare`'s (`Comparison`), never found
again here. A turn reads as rows:

    turn      "turn 2 · gpt-4o · 310 tok"       (a turn only one run has: `turn` differs here)
    asked     the first message the requests part at (only where `request` differs)
    said      the model's text, or how many calls it made (`text`, `calls` by count)
    call k    get_weather(city="Paris")          (`calls` by tool, `args`)
    result k  → Sunny in Paris. / ✗ error        (`result`)

and after the turns, the final answer (`final_output`) and the status (`status`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from agentor.durations import duration
from agentor.engine.fork.compare import (
    ARGS,
    CALLS,
    FINAL_OUTPUT,
    REQUEST,
    RESULT,
    TEXT,
    TURN,
    Call,
    Comparison,
    Difference,
    Side,
    Turn,
    compare,
    first_differing_message,
)
from agentor.literal import literal_line
from agentor.sources.whole_run import WholeRun
from tui.text.formatting import token_count
from tui.text.styles import ERROR_STYLE, STATUS_STYLES
from tui.text.timeline_line import (
    LINE_LIMIT,
    answer_mark,
    call_line,
    content_text,
    value_line,
)

# Row kinds.
TURN_ROW, ASKED, SAID, CALL, ANSWER, FINAL, END = (
    "turn",
    "asked",
    "said",
    "call",
    "result",
    "final",
    "status",
)
ABSENT = "—"


@dataclass
class CompareRow:
    """One line of the view: what each run shows there (`a`, `b`), the differences it shows
    (indexes into `Comparison.differences`) and the events it stands for (positions in each
    run's events; None where absent)."""

    kind: str
    turn: int | None
    a: Text
    b: Text
    call: int | None = None  # the call's position in the turn (call and result rows)
    differences: list[int] = field(default_factory=list)
    a_index: int | None = None
    b_index: int | None = None


def compare_rows(found: Comparison) -> list[CompareRow]:
    """Every row of the view, in order, each difference placed on the row that shows it."""
    rows: list[CompareRow] = []
    for pair in found.turns:
        a, b, n = pair.a, pair.b, pair.number
        rows.append(_row(TURN_ROW, n, (_turn_head(a), _turn_head(b)), a, b))
        asked = [d for d in pair.differences if d.kind == REQUEST]
        if asked:
            x, y = first_differing_message(asked[0].a, asked[0].b)
            rows.append(_row(ASKED, n, (_message(x), _message(y)), a, b))
        if a is not None or b is not None:
            rows.append(_row(SAID, n, (_said(a), _said(b)), a, b))
        for k in range(max(len(a.calls) if a else 0, len(b.calls) if b else 0)):
            x, y = _call_at(a, k), _call_at(b, k)
            rows.append(_call_row(CALL, n, k, (_call(x), _call(y)), x, y))
            rows.append(_call_row(ANSWER, n, k, (_answer(x), _answer(y)), x, y))
    finals = (_final(found.a), _final(found.b))
    rows.append(CompareRow(FINAL, None, *finals))
    ends = (_status(found.a), _status(found.b))
    rows.append(CompareRow(END, None, *ends))
    _place(rows, found.differences)
    return rows


def row_of(d: Difference) -> tuple[str, int | None, int | None]:
    """The row (kind, turn, call) that shows a difference."""
    if d.kind == TURN:
        return TURN_ROW, d.turn, None
    if d.kind == REQUEST:
        return ASKED, d.turn, None
    if d.kind == TEXT or (d.kind == CALLS and d.call is None):
        return SAID, d.turn, None
    if d.kind in (CALLS, ARGS):
        return CALL, d.turn, d.call
    if d.kind == RESULT:
        return ANSWER, d.turn, d.call
    return (FINAL if d.kind == FINAL_OUTPUT else END), None, None


def _place(rows: list[CompareRow], differences: list[Difference]) -> None:
    where = {(r.kind, r.turn, r.call): r for r in rows}
    for i, d in enumerate(differences):
        row = where.get(row_of(d))
        if row is not None:
            row.differences.append(i)
        if d.kind == CALLS and d.call is None:
            # Other numbers of calls: the calls only one run made are marked too.
            k = min(len(d.a or []), len(d.b or []))
            for r in rows:
                if r.turn == d.turn and r.call is not None and r.call >= k:
                    r.differences.append(i)


def _row(kind: str, n: int, cells: tuple[Text, Text], a: Turn | None, b: Turn | None) -> CompareRow:
    at = (a.index if a else None), (b.index if b else None)
    return CompareRow(kind, n, *cells, a_index=at[0], b_index=at[1])


def _call_row(
    kind: str, n: int, k: int, cells: tuple[Text, Text], x: Call | None, y: Call | None
) -> CompareRow:
    if kind == ANSWER:
        at = (x.result_index if x else None), (y.result_index if y else None)
    else:
        at = (x.index if x else None), (y.index if y else None)
    return CompareRow(kind, n, *cells, call=k, a_index=at[0], b_index=at[1])


def _absent(what: str = ABSENT) -> Text:
    return Text(what, "dim")


def _turn_head(t: Turn | None) -> Text:
    if t is None:
        return _absent("(no such turn)")
    out = Text(f"turn {t.number}", "bold")
    if t.model:
        out.append(f" · {literal_line(t.model, 40)}", "dim")
    if t.usage is not None:
        out.append(f" · {token_count(t.usage.total_tokens)} tok", "dim")
    if t.duration is not None:
        out.append(f" · {duration(t.duration)}", "dim")
    return out


def _message(m: Any) -> Text:
    if not isinstance(m, dict):
        return _absent()
    role = literal_line(str(m.get("role", "?")), 20)
    return Text(f"{role}: ") + Text(literal_line(content_text(m.get("content")), LINE_LIMIT))


def _said(t: Turn | None) -> Text:
    if t is None:
        return _absent()
    if t.text:
        return Text(value_line(t.text), "italic")
    if t.calls:
        n = len(t.calls)
        return Text(f"→ {n} tool call{'s' if n != 1 else ''}", "dim")
    return _absent("(no text)")


def _call_at(t: Turn | None, k: int) -> Call | None:
    return t.calls[k] if t is not None and k < len(t.calls) else None


def _call(c: Call | None) -> Text:
    return _absent() if c is None else Text(call_line(c.name, c.args))


def _answer(c: Call | None) -> Text:
    """A call's result or error, after how it was answered (`answer_mark`: served, executed,
    refused), when a replay marks it."""
    if c is None:
        return _absent()
    if c.error is not None:
        out = Text("✗ ", ERROR_STYLE) + Text(literal_line(c.error, LINE_LIMIT), ERROR_STYLE)
    elif c.result_index is None:
        return _absent("(no result)")
    else:
        out = Text("→ ", "dim") + Text(value_line(c.result))
    mark = answer_mark(c.answer, c.drift, lead="")
    return mark + Text(" ") + out if mark.plain else out


def _final(s: Side) -> Text:
    if s.final_output is None:
        return Text("answer: ", "bold") + _absent("(none)")
    return Text("answer: ", "bold") + Text(value_line(s.final_output))


def _status(s: Side) -> Text:
    out = Text(literal_line(s.status, 20), STATUS_STYLES.get(s.status, "bold"))
    if s.error:
        out.append(" · ")
        out.append(literal_line(s.error, LINE_LIMIT), ERROR_STYLE)
    return out


def side_summary(s: Side) -> Text:
    """A run as a whole, on one line: status, turns, tool calls, tokens, time, its parent."""
    out = Text(literal_line(s.status, 20), STATUS_STYLES.get(s.status, "bold"))
    n = len(s.turns)
    calls = s.tool_calls
    out.append(f" · {n} turn{'s' if n != 1 else ''} · {calls} tool call{'s' if calls != 1 else ''}")
    out.append(f" · {s.usage.total_tokens:,} tokens · took {duration(s.duration)}")
    if s.fork is not None and s.fork.forked_from:
        kind = "replay" if s.fork.replay is not None else "fork"
        at = f" at line {s.fork.at}" if s.fork.at is not None else ""
        out.append(f" · {kind} of {literal_line(s.fork.forked_from, 40)}{at}", "magenta")
        if s.fork.experiment:
            out.append(f" · experiment {literal_line(s.fork.experiment, 40)}", "magenta")
    return out


DETAIL_LIMIT = 600  # characters of a value the detail shows (one wrapped line each)


def row_detail(found: Comparison, row: CompareRow, lines: tuple[list[int], list[int]]) -> Text:
    """What the row's differences are, each value whole (up to DETAIL_LIMIT), with the log
    line each run shows it at (`lines`: each run's event lines, by position)."""
    where = [_line(row.a_index, lines[0]), _line(row.b_index, lines[1])]
    if not row.differences:
        at = " · ".join(f"{s} line {n}" for s, n in zip("ab", where, strict=True) if n)
        return Text("the same in both" + (f" ({at})" if at else ""), "dim")
    out = Text()
    for i in row.differences:
        d = found.differences[i]
        if out:
            out.append("\n")
        out.append(literal_line(d.describe()), "bold #ffd75f")
        a, b = (d.a, d.b) if d.kind != REQUEST else first_differing_message(d.a, d.b)
        for label, value, n in (
            ("a", a, _line(d.a_index, lines[0])),
            ("b", b, _line(d.b_index, lines[1])),
        ):
            out.append(f"\n{label}" + (f" (line {n})" if n else "") + ": ", "bold")
            out.append_text(_detail_value(value, d.kind == REQUEST))
    return out


def _detail_value(value: Any, message: bool) -> Text:
    if value is None:
        return Text(ABSENT)
    if message and isinstance(value, dict):
        role = literal_line(str(value.get("role", "?")), 20)
        return Text(f"{role}: " + literal_line(content_text(value.get("content")), DETAIL_LIMIT))
    return Text(value_line(value, DETAIL_LIMIT))


def _line(index: int | None, lines: list[int]) -> int | None:
    return lines[index] if index is not None and 0 <= index < len(lines) else None


def overview(found: Comparison) -> Text:
    """The comparison in a line: the first divergence and how many differences, or the same."""
    first = found.first
    if first is None:
        n = len(found.a.turns)
        return Text(f"no difference: the runs did the same ({n} turn{'s' if n != 1 else ''})")
    out = Text("first divergence: ", "bold")
    out.append(literal_line(first.describe()), "bold #ffaf00")
    n = len(found.differences)
    out.append(f" · {n} difference{'s' if n != 1 else ''}")
    if first.turn is not None:
        a, b = (s.usage_since(first.turn).total_tokens for s in (found.a, found.b))
        out.append(f" · tokens from turn {first.turn} on: a {a:,}, b {b:,}", "dim")
    return out


@dataclass
class Compared:
    """Two runs read whole and compared, as the compare view shows them (made off the UI
    thread: reading and comparing long runs takes a while)."""

    a: WholeRun
    b: WholeRun
    found: Comparison
    rows: list[CompareRow]
    first_row: int | None  # the row of the first divergence (None: the runs did the same)


def compared(a: WholeRun, b: WholeRun) -> Compared:
    found = compare(a.events, b.events)
    rows = compare_rows(found)
    first = found.first
    where = {(r.kind, r.turn, r.call): i for i, r in enumerate(rows)}
    return Compared(a, b, found, rows, where.get(row_of(first)) if first is not None else None)
