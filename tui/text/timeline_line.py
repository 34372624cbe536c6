"""What one timeline row says about an event: `get_weather(city="London")`, the result or the
error, a generation's tool requests or text with its tokens, the end status.

Every `Text` here is assembled from plain strings passed through `literal_line`, never from
markup, so nothing in a log can style or control the terminal.
"""

from __future__ import annotations

import json
from typing import Any

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
from agentor.engine.replay import call_parts, first_user_text
from agentor.engine.statuses import FAILED
from agentor.literal import literal_line

from .formatting import count
from .styles import ERROR_STYLE, STATUS_STYLES

LINE_LIMIT = 160


def compact_json(value: Any) -> str:
    """`value` as one line of JSON; anything JSON cannot hold is written as its `str`."""
    return json.dumps(value, ensure_ascii=False, default=str)


def value_line(value: Any, limit: int = LINE_LIMIT) -> str:
    """A value on one line: strings as they are, anything else as compact JSON."""
    return literal_line(value if isinstance(value, str) else compact_json(value), limit)


def call_line(name: str | None, args: Any, limit: int = LINE_LIMIT) -> str:
    """`get_weather(city="London")`: a tool call as it reads in code."""
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            pass
    if isinstance(args, dict):
        inner = ", ".join(f"{k}={compact_json(v)}" for k, v in args.items())
    elif args is None:
        inner = ""
    else:
        inner = compact_json(args)
    return literal_line(f"{name or '?'}({inner})", limit)


def content_text(content: Any) -> str:
    """A message's content as text: a string, text parts joined, anything else as JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        texts = [p.get("text") if isinstance(p, dict) else p for p in content]
        if all(isinstance(t, str) for t in texts):
            return "\n".join(texts)
    return compact_json(content)


def _tokens(e: Event) -> str:
    if e.usage is None:
        return ""
    return f"{count(e.usage.input_tokens)}→{count(e.usage.output_tokens)} tok"


def timeline_line(item: Event | BadLine, segment: int = 1) -> Text:
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
            prompt = first_user_text(e.messages)
            if prompt:
                out.append(" · ")
                out.append(literal_line(prompt, LINE_LIMIT))
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
            out.append(literal_line(e.error, LINE_LIMIT), ERROR_STYLE)
        else:
            out.append(" → ", "dim")
            out.append(value_line(e.result))
    elif e.type == MESSAGE:
        out.append(value_line(e.text or ""), "italic")
    elif e.type == RUN_END:
        status = e.status or FAILED
        out.append(literal_line(status, 20), STATUS_STYLES.get(status, "bold"))
        if e.error:
            out.append(" · ")
            out.append(literal_line(e.error, LINE_LIMIT), ERROR_STYLE)
        elif e.text:
            out.append(" · ")
            out.append(value_line(e.text))
    elif e.type == FORK:
        out.append(f"forked from {literal_line(e.forked_from or '?', 64)}", "magenta")
    else:
        keys = ", ".join(e.extra) or "no fields"
        out.append(f"({literal_line(keys, 80)})", "dim")
    return out
