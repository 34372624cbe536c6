"""Edited tool arguments checked against the parameters a run recorded as offered to the model
(the JSON schema in its `run_start`'s `tools`): `check_schema`, and where to find that schema
(`tool_parameters`). Used where the tool itself is not at hand (no agent with it): the TUI's
argument editor and `approve(..., args=...)` (so `agentor approve --args`) alike, one check.
The common JSON-schema rules a tool's parameters use: required and unknown properties, types,
enums.
"""

from __future__ import annotations

import json
from typing import Any

from agentor.engine.events import Event

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


def tool_parameters(run_start: Event, name: str) -> dict[str, Any] | None:
    """The parameters schema of tool `name` as `run_start` records it offered, or None."""
    for schema in run_start.tools or ():
        fn = schema.get("function") if isinstance(schema, dict) else None
        if isinstance(fn, dict) and fn.get("name") == name:
            params = fn.get("parameters")
            return params if isinstance(params, dict) else None
    return None


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
    declared = [o.get("type") for o in options if isinstance(o, dict)] if options else []
    if not options:
        declared = prop["type"] if isinstance(prop.get("type"), list) else [prop.get("type")]
    kinds = [k for k in declared if isinstance(k, str) and k in _JSON_TYPES]
    if not kinds or any(_is(value, k) for k in kinds):
        return None
    wanted = " or ".join("null" if k == "null" else f"{_AN.get(k, 'a')} {k}" for k in kinds)
    return f"must be {wanted}, not {json_kind(value)}"


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False  # JSON true is no number
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES[kind])


def json_kind(value: Any) -> str:
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
