"""`ModelSettings` (upstream Agentor's, field for field) and the one dict of request fields an
agent adds to every request besides the model, messages and tools.

That dict is made once per agent (`request_fields`) and is JSON-ready: the model merges it
into each request body as it is (agentor.engine.models), and the log records it as the segment's
`settings` (agentor.engine.request), so what was sent and what is shown are the same object. It
holds the settings, the structured output's `response_format` (agentor.engine.structured) and any
provider-specific fields (`ModelSettings.extra`, passed through untouched).
"""

from __future__ import annotations

import json
import logging
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union, get_args, get_origin, get_type_hints

log = logging.getLogger("agentor")

# Keys of the settings type upstream exported before 0.1.0 that mean nothing to a
# chat-completions request: dropped with a warning, as upstream drops them (a provider would
# answer them with a 400).
LEGACY_KEYS = frozenset(
    {
        "context_management",
        "include_usage",
        "prompt_cache_options",
        "prompt_cache_retention",
        "response_include",
        "retry",
        "truncation",
    }
)

# Arguments of the openai client's request call that are not fields of the request body: they
# travel beside it (headers, query, timeout), never inside it.
CLIENT_OPTIONS = frozenset({"extra_headers", "extra_query", "timeout"})


@dataclass(init=False)
class ModelSettings:
    """Knobs of the model request; None means "the provider's default" and is not sent.

    Any other keyword is kept in `extra` and sent as it is (a provider-specific field);
    upstream's legacy keys (`LEGACY_KEYS`) are dropped with a warning."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    seed: int | None = None
    stop: str | list[str] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    reasoning_effort: str | None = None
    verbosity: str | None = None
    top_logprobs: int | None = None
    metadata: dict[str, Any] | None = None
    store: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __init__(self, **kwargs: Any) -> None:
        known = [name for name in self.__dataclass_fields__ if name != "extra"]
        extra = dict(kwargs.pop("extra", None) or {})
        for name in list(kwargs):
            if name in known:
                continue
            value = kwargs.pop(name)
            if name in LEGACY_KEYS:
                log.warning(
                    "ModelSettings.%s has no chat-completions equivalent and was ignored.", name
                )
                continue
            extra[name] = value
        for name in known:
            setattr(self, name, kwargs.get(name))
        self.extra = extra

    def to_params(self) -> dict[str, Any]:
        """The fields that are set, `extra` merged in (upstream's name and result)."""
        params = {
            name: getattr(self, name)
            for name in self.__dataclass_fields__
            if name != "extra" and getattr(self, name) is not None
        }
        params.update(self.extra)
        return params


def request_fields(
    model_settings: ModelSettings | Mapping[str, Any] | None,
    loose: Mapping[str, Any],
    response_format: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What an agent adds to every request: `model_settings` (upstream's argument), the
    keyword settings this project's `Agentor` always took (`temperature=0.2`, ...) and the
    structured output's `response_format`. A field given twice is refused, as is a value that
    cannot be sent as JSON (it would fail every request of every run)."""
    if model_settings is None:
        given: dict[str, Any] = {}
    elif isinstance(model_settings, ModelSettings):
        given = model_settings.to_params()
    elif isinstance(model_settings, Mapping):
        given = ModelSettings(**model_settings).to_params()
    else:
        raise TypeError(
            "model_settings= takes a ModelSettings (from agentor import ModelSettings), "
            f"not {type(model_settings).__name__}"
        )
    both = sorted(set(given) & set(loose))
    if both:
        raise ValueError(
            f"{', '.join(both)} given both in model_settings= and as a keyword: give it once"
        )
    fields = {**loose, **given}
    if response_format is not None:
        if "response_format" in fields:
            raise ValueError("response_format is set by output_type=: do not give it as well")
        fields["response_format"] = response_format
    for name, value in fields.items():
        if name in CLIENT_OPTIONS:
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"the model setting {name}= cannot be sent as JSON: {exc}") from None
    return fields


def setting_changes(changes: ModelSettings | Mapping[str, Any]) -> dict[str, Any]:
    """Changes to a model's settings for one run (a replay's `model_settings=`), checked before
    anything is written: each key a field of `ModelSettings` (not a provider-specific one),
    each value of that field's type or None (the setting dropped: the provider's default).
    A `ModelSettings` gives the fields it sets. `ValueError` (one line) or `TypeError`."""
    if isinstance(changes, ModelSettings):
        return changes.to_params()
    if not isinstance(changes, Mapping):
        raise TypeError(
            f"model_settings= takes a dict of model settings, not {type(changes).__name__}"
        )
    hints = get_type_hints(ModelSettings)
    known = [name for name in ModelSettings.__dataclass_fields__ if name != "extra"]
    out: dict[str, Any] = {}
    for name, value in changes.items():
        if name not in known:
            raise ValueError(f"{name!r} is not a model setting (they are {', '.join(known)})")
        if not _fits(value, hints[name]):
            shown = repr(value)
            shown = shown if len(shown) <= 80 else shown[:79] + "…"
            raise ValueError(
                f"the model setting {name} cannot be {shown}: it takes {_type_words(hints[name])}"
            )
        out[name] = value
    return out


def _fits(value: Any, hint: Any) -> bool:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_fits(value, arg) for arg in get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is list:
        (item,) = get_args(hint)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    return isinstance(value, hint) if isinstance(hint, type) else True


def _type_words(hint: Any) -> str:
    """`float | None` as "a number (or null)": what a one-line error says a setting takes."""
    words = {float: "a number", int: "a whole number", str: "a string", bool: "true or false"}
    said = []
    for arg in get_args(hint) or (hint,):
        if arg is type(None):
            continue
        origin = get_origin(arg)
        if origin is list:
            said.append("a list of strings")
        elif origin is dict:
            said.append("an object")
        else:
            said.append(words.get(arg, getattr(arg, "__name__", str(arg))))
    return " or ".join(said) + " (or null: the provider's default)"
