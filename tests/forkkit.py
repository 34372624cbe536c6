"""A weather agent on a scripted model for the fork tests: the model decides from the request
alone (so a fork, a resume and a replay ask it what they like), every tool execution is
counted, and runs are made in a FileStore whose log bytes a test can compare."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from agentor import Agentor, function_tool
from agentor.engine.events import Event
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel, tool_call

INSTRUCTIONS = "You are a helpful weather assistant."
_NOT_CITIES = {"What", "The", "And", "How", "Weather", "Also", "Tell", "Is", "In"}


def cities(text: str) -> list[str]:
    return [w for w in re.findall(r"\b[A-Z][a-z]+\b", text) if w not in _NOT_CITIES]


def weather_model(name: str = "weather-model", prefix: str = "w") -> ScriptedModel:
    """A model deciding from the request: get_weather for each city of the last user message;
    after results, an answer quoting the tool messages since it ("heard: a | b"). Its calls
    are numbered w1_0, w1_1, w2_0... by the model (`prefix`: another letter than w)."""
    ids = itertools.count(1)

    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        told = [m["content"] for m in messages[last_user:] if m["role"] == "tool"]
        if told:
            return ScriptedModel.text("heard: " + " | ".join(told))
        named = cities(str(messages[last_user]["content"]))
        if not named:
            return ScriptedModel.text("said: " + str(messages[last_user]["content"]))
        n = next(ids)
        calls = [
            tool_call("get_weather", {"city": c}, f"{prefix}{n}_{i}") for i, c in enumerate(named)
        ]
        return ModelResponse(calls=calls)

    return ScriptedModel(reply, name=name)


class Weather:
    """`agent` on `store`; `ran` lists the cities get_weather really ran for, in order."""

    def __init__(self, store: Any, model: Any = None, **kwargs: Any) -> None:
        self.ran: list[str] = []
        ran = self.ran

        @function_tool
        def get_weather(city: str) -> str:
            """Get the current weather for a city.

            Args:
                city: The city to look up.
            """
            ran.append(city)
            return f"Sunny in {city}."

        kwargs.setdefault("instructions", INSTRUCTIONS)
        self.agent = Agentor(
            "Weather Agent",
            model=model or weather_model(),
            tools=[get_weather],
            store=store,
            **kwargs,
        )


def log_bytes(store: FileStore, run_id: str) -> bytes:
    return Path(store.path(run_id)).read_bytes()


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


def tool_messages(request: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in request if m["role"] == "tool"]


def result_line(store: Any, run_id: str, city: str) -> int:
    """The line of the tool result for `city` (one generation's results land in any order)."""
    events = store.load(run_id)
    return next(
        n
        for n, e in enumerate(events, 1)
        if e.type == "tool_result" and isinstance(e.args, dict) and e.args.get("city") == city
    )
