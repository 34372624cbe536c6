"""The body of a chat-completions request, made from the engine's own messages.

The openai SDK's `chat.completions.create` runs its typed transform over the whole request on
every call, walking each message of the history with typing introspection (12 ms at 51
messages, 105 ms at 401 on this project's machine): a run's CPU grew with the square of its
length. The engine's messages are JSON-ready dicts already, so a request here is their JSON,
sent through the client's lower-level `post` (auth, base URL, retries with backoff, timeouts,
error classes and SSE parsing stay the SDK's; `OpenAIModel.generate`).

What a user sets on the model (`temperature`, `response_format`, `extra_body`, ...) does not
change between turns: `prepare_settings` runs it through the SDK's own transform once, as
`create` would send it, and `chat_request_body` adds the turn's messages and tools. The body
is written by orjson (0.1 ms for a 300 KB history, against 1.6 ms for the standard encoder the
SDK uses), each message once per run when the messages are the loop's `Conversation`; what
orjson cannot write is left to the SDK (`None`: send the dict). A NaN, which is not JSON, is
written as null by orjson where the SDK would refuse it.

tests/test_chat_request.py captures at the transport what `create` sends and what this sends,
for every shape of message the engine makes and every setting: equal as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from agentor.engine.conversation import Conversation

CHAT_PATH = "/chat/completions"
# `create`'s parameters the engine sets itself, never taken from a model's settings.
ENGINE_FIELDS = frozenset({"model", "messages", "tools", "stream"})
# `create`'s parameters that are options of the HTTP request rather than fields of the body.
_OPTION_FIELDS = {"extra_headers": "headers", "extra_query": "params", "timeout": "timeout"}


@dataclass(frozen=True)
class PreparedSettings:
    """A model's settings as every request of it sends them: `fields` (as `create` would write
    them), `extra_body` (merged over the whole body, as the SDK merges it) and `options` (the
    SDK's request options: auth, `extra_headers`, `extra_query`, `timeout`)."""

    fields: dict[str, Any]
    extra_body: dict[str, Any]
    options: dict[str, Any]


def prepare_settings(settings: Mapping[str, Any]) -> PreparedSettings:
    """`settings` (keyword arguments of `chat.completions.create`) made ready once, as `create`
    would send them. A name `create` does not take is sent as it is (a provider's own field, a
    `ModelSettings.extra`), as `extra_body` would send it; `model`, `messages`, `tools` and
    `stream` are the engine's (the tools are the agent's): a `TypeError`."""
    from openai._utils import transform
    from openai.types.chat import completion_create_params

    accepted = _create_parameters()
    fields: dict[str, Any] = {}
    options: dict[str, Any] = {"security": {"bearer_auth": True}}  # as `create` asks
    extra_body: dict[str, Any] = {}
    passed: dict[str, Any] = {}
    for name, value in settings.items():
        if name in ENGINE_FIELDS:
            raise TypeError(
                f"model setting {name!r} cannot be sent to chat.completions.create: "
                "the engine sets it"
            )
        if name == "extra_body":
            extra_body = dict(value or {})
        elif name not in accepted:
            # A provider's own field (`ModelSettings(top_k=40)`): sent as it is, as the SDK
            # sends `extra_body`, where `create` would refuse the keyword.
            passed[name] = value
        elif name in _OPTION_FIELDS:
            if value is not None:
                options[_OPTION_FIELDS[name]] = value
        else:
            fields[name] = value
    prepared = transform(fields, completion_create_params.CompletionCreateParamsNonStreaming)
    return PreparedSettings(prepared, {**passed, **extra_body}, options)


def chat_request_body(
    model: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[dict[str, Any]],
    prepared: PreparedSettings,
    stream: bool,
) -> tuple[bytes | None, dict[str, Any]]:
    """The request of one turn: its JSON (None when orjson cannot write it; the SDK then
    writes the dict, as `create` would) and the dict. `messages` and `tools` go in as they
    are, not copied: orjson reads each once, in C; a `Conversation`'s messages are written
    once each over the run (agentor.engine.conversation)."""
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = tools
    body.update(prepared.fields)
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    if prepared.extra_body:
        body = _merged(body, prepared.extra_body)
    try:
        if isinstance(messages, Conversation) and body.get("messages") is messages:
            rest = orjson.dumps({k: v for k, v in body.items() if k != "messages"})
            return b'{"messages":[' + b",".join(messages.encoded()) + b"]," + rest[1:], body
        return orjson.dumps(body), body
    except TypeError:  # orjson.JSONEncodeError: an integer past 64 bits, a key not a str, ...
        return None, body


def _create_parameters() -> frozenset[str]:
    """The keyword arguments `chat.completions.create` takes: its params' fields, and the
    request options every method of the SDK takes. Read from the params' types, not from
    `create`: its module costs ~0.3 s to import, and nothing here needs it."""
    from openai.types.chat import completion_create_params as params

    fields = params.CompletionCreateParamsStreaming.__annotations__
    return frozenset(fields) | {"extra_headers", "extra_query", "extra_body", "timeout"}


def _merged(body: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`extra` over `body`, dropping the SDK's `Omit` markers (its `_merge_mappings`)."""
    from openai import Omit

    merged = {**body, **extra}
    return {k: v for k, v in merged.items() if not isinstance(v, Omit)}
