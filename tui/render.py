"""Events and runs as text for the screen: one-line summaries, the detail view, numbers, times.

Everything built here is a rich `Text` assembled from plain strings passed through `literal`,
never from markup, so nothing in a log can style or control the terminal.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.highlighter import JSONHighlighter
from rich.padding import Padding
from rich.text import Text

from agentor.engine.events import (
    FORK,
    GENERATION,
    MESSAGE,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
)
from agentor.engine.logformat import BadLine
from agentor.engine.replay import call_parts, event_time

from .literal import literal, literal_line

# Status colours mean something (k9s / lazygit): cyan is alive, yellow wants a hand, red broke.
STATUS_STYLES = {
    "running": "bold cyan",
    "interrupted": "bold yellow",
    "failed": "bold red",
    "max_turns": "bold red",
    "unreadable": "red",
    "completed": "dim",
}
TYPE_STYLES = {
    RUN_START: "bold green",
    GENERATION: "blue",
    TOOL_CALL: "yellow",
    TOOL_RESULT: "green",
    MESSAGE: "default",
    RUN_END: "bold",
    FORK: "magenta",
}
ROLE_STYLES = {
    "system": "bold magenta",
    "user": "bold green",
    "assistant": "bold cyan",
    "tool": "bold yellow",
}
ERROR_STYLE = "red"

# How much of one value the detail view shows; the rest is cut with a note saying how much.
DETAIL_LIMIT = 8_000
SUMMARY_LIMIT = 160

_json = JSONHighlighter()


# -- numbers and times ---------------------------------------------------------------------------


def relative_time(t: float | None, now: float) -> str:
    """`"3m ago"`, `"2h ago"`; a future time (clock skew) reads `"in 3m"`."""
    if t is None:
        return "-"
    delta = now - t
    if abs(delta) < 10:
        return "just now"
    text = _span(abs(delta))
    return f"{text} ago" if delta > 0 else f"in {text}"


def _span(seconds: float) -> str:
    if seconds < 60:
        return f"{int(seconds)}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h"
    if seconds < 86400 * 365:
        return f"{int(seconds // 86400)}d"
    return f"{int(seconds // (86400 * 365))}y"


def duration(seconds: float | None) -> str:
    """`"850ms"`, `"4.2s"`, `"3m05s"`, `"2h03m"`."""
    if seconds is None or seconds < 0:
        return "-"
    if seconds < 1:
        return f"{int(seconds * 1000)}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"


def offset(seconds: float | None) -> str:
    """A timeline offset from the run's start: `"+0.00s"`, `"+12.3s"`, `"+3m05s"`."""
    if seconds is None:
        return ""
    if seconds < 0:
        return "-" + offset(-seconds)[1:]
    if seconds < 10:
        return f"+{seconds:.2f}s"
    if seconds < 60:
        return f"+{seconds:.1f}s"
    return "+" + duration(seconds)


def count(n: int) -> str:
    """A compact count: `"950"`, `"12.3k"`, `"1.2M"`."""
    if n < 10_000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def clock_time(t: float | None) -> str:
    """An absolute time in UTC (the same on every machine, and in snapshots)."""
    if t is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d} UTC"


# -- one-line summaries ----------------------------------------------------------------------------


def value_line(value: Any, limit: int = SUMMARY_LIMIT) -> str:
    """A value on one line: strings as they are, anything else as compact JSON."""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str)
    return literal_line(value, limit)


def call_line(name: str | None, args: Any, limit: int = SUMMARY_LIMIT) -> str:
    """`get_weather(city="London")`: a tool call as it reads in code."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            pass
    if isinstance(args, dict):
        inner = ", ".join(
            f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in args.items()
        )
    elif args is None:
        inner = ""
    else:
        inner = json.dumps(args, ensure_ascii=False, default=str)
    return literal_line(f"{name or '?'}({inner})", limit)


def _tokens(e: Event) -> str:
    if e.usage is None:
        return ""
    return f"{count(e.usage.input_tokens)}→{count(e.usage.output_tokens)} tok"


def summary(item: Event | BadLine, segment: int = 1) -> Text:
    """What one timeline row says about an event; `segment` numbers the run_start rows."""
    if isinstance(item, BadLine):
        return Text(f"unreadable line {item.lineno}: {literal_line(item.reason)}", "dim")
    e = item
    out = Text(no_wrap=True, overflow="ellipsis")
    if e.type == RUN_START:
        if segment > 1:
            out.append(f"▶ resumed · segment {segment}", "bold green")
        else:
            out.append(literal_line(e.agent or "?", 40), "bold")
            out.append(f" · {literal_line(e.model or '?', 40)}", "dim")
            prompt = _first_user_text(e.messages)
            if prompt:
                out.append(" · ")
                out.append(literal_line(prompt, SUMMARY_LIMIT))
    elif e.type == GENERATION:
        if e.calls:
            names = [call_line(n, a) for _, n, a in (call_parts(c) for c in e.calls)]
            out.append("→ " + ", ".join(names))
        elif e.text is not None:
            out.append(value_line(e.text), "italic")
        else:
            out.append("(no text)", "dim")
        if tokens := _tokens(e):
            out.append(f"  {tokens}", "dim")
    elif e.type == TOOL_CALL:
        out.append(call_line(e.name, e.args))
    elif e.type == TOOL_RESULT:
        out.append(literal_line(e.name or "?", 40))
        if e.replayed_from:
            out.append(" (recorded)", "dim")
        if e.error is not None:
            out.append(" ✗ ", ERROR_STYLE)
            out.append(literal_line(e.error, SUMMARY_LIMIT), ERROR_STYLE)
        else:
            out.append(" → ", "dim")
            out.append(value_line(e.result))
    elif e.type == MESSAGE:
        out.append(value_line(e.text or ""), "italic")
    elif e.type == RUN_END:
        status = e.status or "failed"
        out.append(literal_line(status, 20), STATUS_STYLES.get(status, "bold"))
        if e.error:
            out.append(" · ")
            out.append(literal_line(e.error, SUMMARY_LIMIT), ERROR_STYLE)
        elif e.text:
            out.append(" · ")
            out.append(value_line(e.text))
    elif e.type == FORK:
        out.append(f"forked from {literal_line(e.forked_from or '?', 64)}", "magenta")
    else:
        keys = ", ".join(e.extra) or "no fields"
        out.append(f"({literal_line(keys, 80)})", "dim")
    return out


def _first_user_text(messages: Sequence[dict[str, Any]] | None) -> str | None:
    for m in messages or ():
        if m.get("role") == "user":
            return _content_text(m.get("content"))
    return None


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        texts = [p.get("text") if isinstance(p, dict) else p for p in content]
        if all(isinstance(t, str) for t in texts):
            return "\n".join(texts)
    return json.dumps(content, ensure_ascii=False, default=str)


# -- the detail view -------------------------------------------------------------------------------


def cut(text: str, limit: int = DETAIL_LIMIT) -> tuple[str, str | None]:
    """`text` cut to `limit` characters, and a note of how much was left out (or None)."""
    if len(text) <= limit:
        return text, None
    rest = text[limit:]
    lines = rest.count("\n")
    more = f"{len(rest):,} more characters"
    if lines:
        more += f", {lines:,} more lines"
    return text[:limit], f"… cut: {more} not shown"


class DetailText:
    """The detail view's content: flowing lines, and indented blocks whose wrapped lines keep
    their indent (a `Text` alone would wrap them back to the margin)."""

    def __init__(self) -> None:
        self.blocks: list[tuple[int, Text]] = []
        self._flow = Text()

    def append(self, text: str, style: str = "") -> None:
        self._flow.append(text, style)

    def block(self, text: Text, indent: int = 2) -> None:
        self._close()
        if text.plain.endswith("\n"):
            text.right_crop(1)
        self.blocks.append((indent, text))

    def _close(self) -> None:
        if self._flow:
            if self._flow.plain.endswith("\n"):
                self._flow.right_crop(1)
            self.blocks.append((0, self._flow))
            self._flow = Text()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self._close()
        for indent, text in self.blocks:
            yield Padding(text, (0, 0, 0, indent)) if indent else text

    @property
    def plain(self) -> str:
        self._close()
        pad = " "
        return "\n".join(
            "\n".join(pad * indent + line for line in text.plain.split("\n"))
            for indent, text in self.blocks
        )


def _append_value(out: DetailText, value: Any, indent: int = 2) -> None:
    """A value, pretty: strings as text (JSON inside a string is pretty-printed too)."""
    as_json = value
    if isinstance(value, str):
        as_json = _maybe_json(value)
    if isinstance(as_json, str):
        body, note = cut(literal(as_json))
        out.block(Text(body), indent)
    else:
        pretty = json.dumps(as_json, indent=2, ensure_ascii=False, default=str)
        body, note = cut(literal(pretty))
        out.block(_json(Text(body)), indent)
    if note:
        out.block(Text(note, "bold yellow"), indent)


def _maybe_json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and len(stripped) <= 1_000_000:
        try:
            return json.loads(stripped)
        except ValueError:
            pass
    return text


def _heading(out: DetailText, title: str) -> None:
    out.append("\n")
    out.append(title, "bold underline")
    out.append("\n")


def _field(out: DetailText, name: str, value: str, style: str = "") -> None:
    out.append(f"{name:<9}", "dim")
    out.append(value, style)
    out.append("\n")


def detail(
    item: Event | BadLine,
    index: int,
    run_id: str,
    start: float | None,
    request: list[dict[str, Any]] | None = None,
) -> DetailText:
    """Everything about one event: fields, the request as a conversation, values as JSON."""
    out = DetailText()
    if isinstance(item, BadLine):
        out.append(f"unreadable line {item.lineno}", "bold red")
        out.append("\n")
        _field(out, "run", run_id)
        _field(out, "byte", f"{item.offset:,}")
        _field(out, "reason", literal_line(item.reason))
        _heading(out, "Raw line")
        raw = item.raw.decode("utf-8", errors="replace")
        _append_value(out, raw.rstrip("\n"))
        return out
    e = item
    out.append(literal_line(e.type, 40), TYPE_STYLES.get(e.type, "bold") + " bold")
    if e.turn is not None:
        out.append(f" · turn {e.turn}")
    out.append(f" · line {index + 1}", "dim")
    out.append("\n")
    _field(out, "run", literal_line(e.run_id or run_id))
    t = event_time(e)
    if t is not None:
        when = clock_time(t)
        if start is not None:
            when = f"{offset(t - start)}  ({when})"
        _field(out, "at", when)
    if e.started_at is not None and e.ended_at is not None:
        _field(out, "took", duration(e.ended_at - e.started_at))
    for name in ("agent", "model", "name", "call_id", "status"):
        value = getattr(e, name)
        if value is not None:
            style = STATUS_STYLES.get(value, "") if name == "status" else ""
            _field(out, name, literal_line(value, 200), style)
    for name in ("pid", "host", "v", "forked_from", "replayed_from"):
        value = getattr(e, name)
        if value is not None:
            _field(out, name, literal_line(str(value), 200))
    if e.usage is not None:
        u = e.usage
        _field(
            out,
            "usage",
            f"in {u.input_tokens:,} · out {u.output_tokens:,} · total {u.total_tokens:,}",
        )
    if e.error is not None:
        _heading(out, "Error")
        body, note = cut(literal(e.error))
        out.block(Text(body, ERROR_STYLE))
        if note:
            out.block(Text(note, "bold yellow"))

    messages = request if e.type == GENERATION else e.messages
    if messages is not None:
        label = "Request" if e.type == GENERATION else "Input"
        _heading(out, f"{label} ({len(messages)} message{'s' if len(messages) != 1 else ''})")
        conversation(out, messages)
    elif e.type == GENERATION:
        _heading(out, "Request")
        out.block(Text("(not recorded in full: the line it extends is unreadable)", "dim"))

    if e.type == GENERATION:
        _heading(out, "Response")
        if e.text is not None:
            _append_value(out, e.text)
        for cid, name, raw in (call_parts(c) for c in e.calls or []):
            call = Text.assemble(("→ ", "dim"), (literal_line(name, 200), "bold"))
            call.append(f"  {literal_line(cid, 80)}", "dim")
            out.block(call)
            _append_value(out, _maybe_json(raw), 4)
    if e.args is not None and e.type in (TOOL_CALL, TOOL_RESULT):
        _heading(out, "Arguments")
        _append_value(out, e.args)
    # A tool result shows its result even when it is None; other events only when they have one.
    if (e.type == TOOL_RESULT and e.error is None) or (
        e.result is not None and e.type != TOOL_RESULT
    ):
        _heading(out, "Result")
        _append_value(out, e.result)
    if e.text is not None and e.type != GENERATION:
        _heading(out, "Text")
        _append_value(out, e.text)
    if e.extra:
        _heading(out, "Other fields")
        _append_value(out, e.extra)
    return out


def conversation(out: DetailText, messages: Sequence[dict[str, Any]]) -> None:
    """Messages as a chat transcript, each role in its colour."""
    for m in messages:
        role = m.get("role")
        role_text = role if isinstance(role, str) else "?"
        out.append(f"{literal_line(role_text, 20):<9}", ROLE_STYLES.get(role_text, "bold"))
        if isinstance(m.get("tool_call_id"), str):
            out.append(f"(for {literal_line(m['tool_call_id'], 80)})", "dim")
        out.append("\n")
        content = m.get("content")
        if content is not None:
            body, note = cut(literal(_content_text(content)))
            out.block(Text(body))
            if note:
                out.block(Text(note, "bold yellow"))
        for call in m.get("tool_calls") or ():
            if isinstance(call, dict):
                _, name, raw = call_parts(call)
                out.block(Text.assemble(("→ ", "dim"), call_line(name, raw, 400)))
