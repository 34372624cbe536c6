"""Edited tool arguments: the text the editor starts from, what is wrong with an edit, and what
an edit changed. Pure functions: no widgets here.

An edit is checked against the tool before it is saved: against the tool itself when the app
has an agent with it (`Tool.parse_args`, the engine's own check), else against the parameters
schema the run recorded as offered to the model (`check_schema`, `agentor.engine.argschema`,
the check `approve(..., args=...)` makes too). Either way a bad edit is shown, never saved.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentor.engine.argschema import json_kind

# Characters a terminal could be steered by (or that reorder text on screen) are written as
# JSON escapes in the editor: the text means the same, and shows them inert. JSON already
# escapes the C0 controls; DEL, C1, bidi controls, line separators and lone surrogates remain.
_UNSAFE = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)


def editor_text(args: Any) -> str:
    """`args` as pretty JSON to edit, every character that could steer a terminal escaped."""
    text = json.dumps(args, indent=2, ensure_ascii=False, default=str)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def parse_edit(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """The edited arguments, or why they are not a JSON object (with the line and column)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
    except RecursionError:
        return None, "not valid JSON: nested too deeply"
    if not isinstance(value, dict):
        return None, f"the arguments must be a JSON object {{...}}, not {json_kind(value)}"
    return value, None


def args_diff(before: Any, after: Any) -> list[str]:
    """What an edit changed, one line a property: `nights: 2 → 3`, `+ breakfast: true`,
    `- note: "x"` (whole values when either side is not an object)."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [f"{_short(before)} → {_short(after)}"]
    lines = []
    for name in [*before, *(k for k in after if k not in before)]:
        if name not in after:
            lines.append(f"- {name}: {_short(before[name])}")
        elif name not in before:
            lines.append(f"+ {name}: {_short(after[name])}")
        elif before[name] != after[name] or type(before[name]) is not type(after[name]):
            lines.append(f"{name}: {_short(before[name])} → {_short(after[name])}")
    return lines


def _short(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
