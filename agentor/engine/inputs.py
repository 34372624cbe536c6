"""What `Agentor` takes from its caller, checked where it is given: a run's input, the store.

A mistake here must be refused at once with a message saying what is expected, before anything
is written: a bad input would otherwise fail deep in the model client, a bad store every save.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from agentor.engine.events import Event
from agentor.engine.history import resume_point
from agentor.engine.mcp import ToolServer
from agentor.engine.models import Model, OpenAIModel
from agentor.engine.settings import ModelSettings, request_fields
from agentor.engine.store.api import Store, is_store, missing_lock_methods
from agentor.engine.store.file import FileStore
from agentor.engine.structured import response_format
from agentor.engine.tools import Tool, function_tool
from agentor.errors import RunIdTakenError

Input = str | Sequence[dict[str, Any]]

_INPUT_SHAPE = (
    "input must be a str (the user's message) or a sequence of message dicts, each with a "
    "'role' (such as [{'role': 'user', 'content': 'Hi'}])"
)

_BATCH = "a list of prompts is a batch: await agent.arun(prompts)"


def check_input(input: object) -> None:
    """Refuse, before anything is written, an input that cannot be sent to the model."""
    if isinstance(input, str):
        return
    if isinstance(input, Mapping):
        raise TypeError(f"{_INPUT_SHAPE}; got one dict: put it in a list")
    if not isinstance(input, Sequence) or isinstance(input, bytes | bytearray):
        raise TypeError(f"{_INPUT_SHAPE}; got {type(input).__name__}")
    if not input:
        raise ValueError(f"{_INPUT_SHAPE}; got an empty {type(input).__name__}")
    for i, message in enumerate(input):
        if isinstance(message, str):
            raise TypeError(f"{_INPUT_SHAPE}; input[{i}] is str ({_BATCH})")
        if not isinstance(message, Mapping):
            raise TypeError(f"{_INPUT_SHAPE}; input[{i}] is {type(message).__name__}")
        if not isinstance(message.get("role"), str):
            raise ValueError(f"{_INPUT_SHAPE}; input[{i}] has no 'role'")


def store_from(store: object) -> Store | None:
    """`store` itself, or a `FileStore` for a directory path; anything else is a TypeError that
    says what a store is (a mistake here would otherwise fail every save of every run)."""
    if store is None:
        return None
    if isinstance(store, str | os.PathLike):
        if not os.fspath(store):
            raise ValueError("store='' names no directory: give one, such as store='runs'")
        return FileStore(store)
    if isinstance(store, type):
        got = f"the class {store.__name__} itself: make one, such as {store.__name__}(...)"
    elif is_store(store):
        _check_locking(store)
        return store
    else:
        got = f"{type(store).__name__} {_clip(repr(store))}"
    raise TypeError(
        "store= takes a store: an object with append(run_id, event), load(run_id) and "
        "list_runs() methods, such as FileStore('runs') or MemoryStore(), or a directory path "
        f"(str or os.PathLike) for a FileStore there; got {got}"
    )


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _check_locking(store: object) -> None:
    """A store with a `lock` is only used as one if it is a whole `LockingStore`: refuse a
    partial one rather than run its runs unlocked."""
    missing = missing_lock_methods(store)
    if missing:
        raise TypeError(
            f"{type(store).__name__} has lock() but not {' or '.join(missing)}: a store that "
            "locks runs implements LockingStore (lock, is_locked, lock_holder), so that others "
            "can tell a held run from a free one"
        )


def tools_from(tools: Iterable[Tool | Callable[..., Any]]) -> list[Tool]:
    """The agent's tools: `Tool`s, or functions made into tools; names must be unique."""
    made = [t if isinstance(t, Tool) else function_tool(t) for t in tools]
    names = [t.name for t in made]
    if len(set(names)) != len(names):
        raise ValueError(f"tool names must be unique: {names}")
    return made


def tools_and_servers(
    items: Iterable[Tool | ToolServer | Callable[..., Any]],
) -> tuple[list[Tool], list[ToolServer]]:
    """An agent's `tools=`: its own tools (as `tools_from`) and its MCP servers, whose tools
    each segment lists; server names must be unique (the log names a tool's server by it)."""
    given = list(items)
    servers = [t for t in given if isinstance(t, ToolServer)]
    names = [s.name for s in servers]
    if len(set(names)) != len(names):
        raise ValueError(f"MCP server names must be unique (give name=...): {names}")
    return tools_from(t for t in given if not isinstance(t, ToolServer)), servers


def model_from(
    model: str | Model,
    base_url: str | None,
    api_key: str | None,
    model_settings: ModelSettings | None,
    settings: Mapping[str, Any],
    output_type: Any,
) -> Model:
    """The agent's model: a name is an `OpenAIModel` sending, in every request, the fields of
    `request_fields` (the settings, the structured output's response_format). A model object
    is asked as it was built (settings given with it are not its own, as upstream ignores
    them), and an `output_type` is checked on its answers but not sent (a custom model reads
    `response_format(output_type)` itself)."""
    fmt = None if output_type is None else response_format(output_type)
    if not isinstance(model, str):
        return model
    check_model_name(model, base_url)
    fields = request_fields(model_settings, settings, fmt)
    return OpenAIModel(model, base_url=base_url, api_key=api_key, **fields)


def check_model_name(model: str, base_url: str | None) -> None:
    """A `provider/name` string with no endpoint is a litellm model upstream: not offered."""
    if "/" in model and base_url is None and not os.environ.get("OPENAI_BASE_URL"):
        raise ValueError(
            f"model={model!r} is a litellm model string (provider/name), which agentor-tui does "
            "not offer: give base_url= of an OpenAI-compatible endpoint for it"
        )


def check_max_turns(max_turns: int) -> int:
    """At least one turn, or the run could never answer."""
    if max_turns < 1:
        raise ValueError("max_turns must be at least 1")
    return max_turns


def check_same_input(run_id: str, events: list[Event], messages: list[dict[str, Any]]) -> None:
    """A named run already in the store is continued only with the input it started with."""
    recorded = resume_point(events).input_messages
    if recorded and recorded != messages:
        raise RunIdTakenError(run_id)
