"""Edited tool arguments: the text the editor starts from, what is wrong with an edit, and what
an edit changed. Pure functions: no widgets here.

An edit is checked against the tool before it is saved: against the tool itself when the app
has an agent with it (`Tool.parse_args`, the engine's own check), else against the parameters
schema the run recorded as offered to the model (`check_schema`: the common JSON-schema rules a
tool's parameters use). Either way a bad edit is shown, never saved.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Characters a terminal could be steered by (or that reorder text on screen) are written as
# JSON escapes in the editor: the text means the same, and shows them inert. JSON already
# escapes the C0 controls; DEL, C1, bidi controls, line separators and lone surrogates remain.
_UNSAFE = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}

_AN = {"integer": "an", "array": "an", "object": "an"}


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
        return None, f"the arguments must be a JSON object {{...}}, not {_kind(value)}"
    return value, None


def check_schema(args: dict[str, Any], schema: dict[str, Any] | None) -> str | None:
    """What is wrong with `args` for a tool whose parameters are `schema` (the JSON schema the
    model was offered), or None. Checks required and unknown properties, types and enums."""
    if not schema:
        return None
    props = schema.get("properties")
    props = props if isinstance(props, dict) else {}
    missing = [name for name in schema.get("required") or () if name not in args]
    if missing:
        return f"missing required {_names(missing)}"
    if schema.get("additionalProperties") is False:
        unknown = [name for name in args if name not in props]
        if unknown:
            return f"unknown {_names(unknown)} (the tool takes {', '.join(props) or 'none'})"
    for name, value in args.items():
        why = _check_value(value, props.get(name))
        if why is not None:
            return f"{name}: {why}"
    return None


def _check_value(value: Any, prop: Any) -> str | None:
    if not isinstance(prop, dict):
        return None
    if "enum" in prop and value not in prop["enum"]:
        return f"must be one of {', '.join(json.dumps(v) for v in prop['enum'])}"
    options = prop.get("anyOf")
    kinds = [o.get("type") for o in options if isinstance(o, dict)] if options else []
    if not options:
        kinds = prop["type"] if isinstance(prop.get("type"), list) else [prop.get("type")]
    kinds = [k for k in kinds if isinstance(k, str) and k in _JSON_TYPES]
    if not kinds or any(_is(value, k) for k in kinds):
        return None
    wanted = " or ".join("null" if k == "null" else f"{_AN.get(k, 'a')} {k}" for k in kinds)
    return f"must be {wanted}, not {_kind(value)}"


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False  # JSON true is no number
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES[kind])


def _kind(value: Any) -> str:
    """`a string`, `an integer`, `null`: what a JSON value is, for a message."""
    if value is None:
        return "null"
    for name, kind in (
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a number"),
        (str, "a string"),
        (list, "an array"),
        (dict, "an object"),
    ):
        if isinstance(value, name):
            return kind
    return type(value).__name__


def _names(names: list[str]) -> str:
    shown = ", ".join(json.dumps(n, ensure_ascii=False) for n in names)
    return f"propert{'y' if len(names) == 1 else 'ies'} {shown}"


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
