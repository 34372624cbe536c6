"""What a search matches in a run's events: a query made a `Matcher`, a log line made a `Hit`.

Shared by the search over files (`agentor.ops.search`, which says what matches and why) and
the database's own (`PostgresStore.search`, agentor.engine.store.pg.upkeep), so both find the same
hits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agentor.engine.log.format import loads_line
from agentor.literal import literal_line as visible_line

_BEFORE, _AFTER = 40, 80  # characters of context around a match in a snippet
# Characters every JSON writer writes as they are: printable ASCII but `"` and `\`.
_RAW_SAFE = re.compile(r"[ !#-\[\]-~]+")


@dataclass(frozen=True)
class Hit:
    run_id: str
    line: int  # 1-based line of the run's log (a store without files: the event's number)
    type: str  # the event's type
    field: str  # where the text is in the event: "result", "args.city", "messages[1].content"
    snippet: str  # one line around the match, control characters visible
    start: int  # the match is snippet[start:end]
    end: int


@dataclass(frozen=True)
class Matcher:
    pattern: re.Pattern[str]  # matched against decoded text
    needle: bytes | None  # looked for in raw bytes first (lower case when `fold`)
    fold: bool


def matcher_for(query: str, regex: bool, ignore_case: bool | None) -> Matcher:
    if not isinstance(query, str) or not query:
        raise ValueError("search for what? give a non-empty query")
    fold = not any(c.isupper() for c in query) if ignore_case is None else bool(ignore_case)
    flags = re.IGNORECASE if fold else 0
    if regex:
        try:
            pattern = re.compile(query, flags)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {query!r}: {exc}") from None
        fold = bool(pattern.flags & re.IGNORECASE)  # (?i) in the pattern says so too
        return Matcher(pattern, _needle(_required_literal(pattern), fold), fold)
    return Matcher(re.compile(re.escape(query), flags), _needle(query, fold), fold)


def _needle(text: str, fold: bool) -> bytes | None:
    """The longest run of characters of `text` that every JSON writer writes as they are."""
    runs: list[str] = _RAW_SAFE.findall(text)
    if not runs:
        return None
    needle = max(runs, key=len).encode("ascii")
    return needle.lower() if fold else needle


def _required_literal(pattern: re.Pattern[str]) -> str:
    """The longest run of plain characters that every match of `pattern` holds: consecutive
    literals at its top level (a regex with none, or one the parser cannot take, has "": every
    line is then decoded and matched)."""
    try:
        # The standard parser: private (typeshed has no stub), so any failure means "none".
        from re import _parser  # type: ignore[attr-defined]

        items = list(_parser.parse(pattern.pattern, pattern.flags & ~re.IGNORECASE))
    except Exception:
        return ""
    best, run = "", ""
    for op, arg in items:
        if str(op) == "LITERAL":
            run += chr(arg)
            best = max(best, run, key=len)
        else:
            run = ""
    return best


def line_hit(run_id: str, lineno: int, line: bytes, matcher: Matcher) -> Hit | None:
    """The hit on one raw line of a log, if it holds an event that matches."""
    event = _decode(line)
    return None if event is None else event_hit(run_id, lineno, event, matcher)


def event_hit(run_id: str, number: int, event: dict[str, Any], matcher: Matcher) -> Hit | None:
    """The hit on one event (its dict, as in the log), if its text matches."""
    found = _first_match(event, matcher.pattern)
    return None if found is None else _hit(run_id, number, event["type"], *found)


def _decode(line: bytes) -> dict[str, Any] | None:
    """The event a line holds, or None for a line that is no event (as the loader decides)."""
    try:  # orjson, or `json` for what orjson refuses or would read otherwise
        data = loads_line(line)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(data, dict) and isinstance(data.get("type"), str):
        return data
    return None


def _first_match(
    event: dict[str, Any], pattern: re.Pattern[str]
) -> tuple[str, str, int, int] | None:
    """(field, text, start, end) of the first match in the event's text, in document order:
    string values anywhere but `type`, and key names below the top level."""
    todo = [(k, v, False) for k, v in reversed(event.items()) if k != "type"]
    while todo:
        path, value, is_key = todo.pop()
        if isinstance(value, str):
            m = pattern.search(value)
            if m is not None:
                return path, value, m.start(), m.end()
        elif isinstance(value, dict) and not is_key:
            for k, v in reversed(list(value.items())):
                todo.append((f"{path}.{k}", v, False))
                todo.append((f"{path}.{k}", k, True))
        elif isinstance(value, list):
            for i in range(len(value) - 1, -1, -1):
                todo.append((f"{path}[{i}]", value[i], False))
    return None


def _hit(run_id: str, line: int, kind: str, field: str, text: str, start: int, end: int) -> Hit:
    lo, hi = max(0, start - _BEFORE), min(len(text), end + _AFTER)
    before = ("…" if lo else "") + visible_line(text[lo:start])
    match = visible_line(text[start:end])
    after = visible_line(text[end:hi]) + ("…" if hi < len(text) else "")
    return Hit(
        run_id=run_id,
        line=line,
        type=visible_line(kind),
        field=visible_line(field),
        snippet=before + match + after,
        start=len(before),
        end=len(before) + len(match),
    )
