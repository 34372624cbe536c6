"""The agents, tools and misbehaving models that `make_samples.py` records runs of."""

from __future__ import annotations

import asyncio
import socket
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from agentor import Agentor, Tool, function_tool
from agentor.engine.models import ModelResponse, OpenAIModel
from agentor.engine.store.file import FileStore
from examples.demo_model import DemoModel
from examples.weather import get_weather

# The model the samples are recorded under: the weather example's own with an OpenAI key, and
# one the bundled price table prices, so the cost column shows what such runs cost. The
# answers come from the offline demo model all the same; a run resumed or forked in
# `make demo` records that model's own name (offline-demo) for the segment it writes.
SAMPLE_MODEL = "gpt-4o-mini"


def sample_model() -> DemoModel:
    """The offline demo model, named as the samples record it."""
    return DemoModel(name=SAMPLE_MODEL, word_delay=0)


def _pick(city: str, options: Sequence[Any], salt: str = "") -> Any:
    return options[zlib.crc32((salt + city).encode()) % len(options)]


@function_tool
def get_forecast(city: str, days: int = 3) -> str:
    """The weather forecast for the next days in a city.

    Args:
        city: The city to look up.
        days: How many days ahead.
    """
    skies = ["sunny", "cloudy", "light rain", "showers", "clear", "windy"]
    return f"{city}, next {days} days: " + ", ".join(
        _pick(city, skies, str(day)) for day in range(days)
    )


@function_tool
def find_hotel(city: str) -> dict[str, Any]:
    """Find a well-rated hotel near the station of a city.

    Args:
        city: The city to stay in.
    """
    return {
        "city": city,
        "hotel": f"Hotel {_pick(city, ['Central', 'Bahnhof', 'Europa', 'Astoria', 'Riverside'])}",
        "stars": _pick(city, [3, 4, 4, 5], "stars"),
        "price_eur": 80 + zlib.crc32(city.encode()) % 90,
    }


def trip_planner(store: FileStore) -> Agentor:
    return Agentor(
        name="Trip Planner",
        model=sample_model(),
        instructions="You plan rail trips: check the weather, the forecast and a hotel per stop.",
        tools=[get_weather, get_forecast, find_hotel],
        store=store,
        max_turns=40,
    )


# -- a model endpoint that goes away ----------------------------------------------------------


class DemoThen:
    """Answers like the demo model `answers` times, then does what `after` says."""

    def __init__(self, answers: int) -> None:
        self.name = SAMPLE_MODEL
        self._demo = sample_model()
        self._answers = answers

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelResponse:
        if self._answers > 0:
            self._answers -= 1
            return await self._demo.generate(messages, tools, on_text)
        return await self.after(messages, tools, on_text)

    async def after(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: Callable[[str], None] | None,
    ) -> ModelResponse:
        raise NotImplementedError


class EndpointOutage(DemoThen):
    """Answers like the demo model `answers` times, then its endpoint is gone.

    Later requests go through the openai SDK to a local port where nothing listens, so the
    run fails with the SDK's own connection error, as it would in production.
    """

    def __init__(self, answers: int) -> None:
        super().__init__(answers)
        # Bound but never listening: connections are refused, and no one else gets the port.
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        port = self._socket.getsockname()[1]
        self._gone = OpenAIModel(
            self.name, base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-offline", max_retries=0
        )

    async def after(self, messages, tools, on_text) -> ModelResponse:
        return await self._gone.generate(messages, tools, on_text)

    def close(self) -> None:
        self._socket.close()


# -- crashes: a child process runs the agent, the parent kills it -----------------------------


class HangAfter(DemoThen):
    """The demo model, except that request number `answers + 1` never comes back."""

    async def after(self, messages, tools, on_text) -> ModelResponse:
        print("WAITING for the model", flush=True)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def slow_weather(slow: set[str]) -> Tool:
    """`get_weather` with the same schema, that sleeps (for good) on the cities in `slow`."""

    def weather(city: str) -> str:
        if city in slow:
            print(f"SLEEPING in get_weather({city})", flush=True)
            time.sleep(3600)
        return get_weather(city)

    weather.__doc__ = get_weather.fn.__doc__
    return Tool(weather, name="get_weather")
