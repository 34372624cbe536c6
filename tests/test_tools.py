"""`function_tool`: schemas from signatures; every way a call can go wrong, shown to the model."""

from __future__ import annotations

import asyncio
import threading
from typing import Literal

import pytest

from agentor import Agentor, Tool, function_tool
from agentor.errors import ToolArgumentsError
from agentor.testing import ScriptedModel
from tests.conftest import WeatherAgents
from tests.openai_server import FakeOpenAI


@function_tool
def get_weather(city: str, days: int = 1, units: Literal["C", "F"] = "C") -> str:
    """Get the weather for a city.

    Looks it up somewhere.

    Args:
        city: The city to look up.
        days (int): How many days
            to forecast.
        units: Celsius or Fahrenheit.

    Returns:
        A sentence about the weather.
    """
    return f"{city} {days} {units}"


def test_bare_decorator_builds_a_tool_with_schema_from_hints_and_docstring() -> None:
    assert isinstance(get_weather, Tool)
    fn = get_weather.schema["function"]
    assert get_weather.schema["type"] == "function"
    assert fn["name"] == "get_weather"
    assert fn["description"] == "Get the weather for a city.\n\nLooks it up somewhere."
    params = fn["parameters"]
    assert params["type"] == "object"
    assert params["required"] == ["city"]
    props = params["properties"]
    assert props["city"] == {"type": "string", "description": "The city to look up."}
    assert props["days"] == {
        "type": "integer",
        "default": 1,
        "description": "How many days to forecast.",
    }
    assert props["units"]["enum"] == ["C", "F"]
    assert props["units"]["description"] == "Celsius or Fahrenheit."
    assert params.get("additionalProperties") is False
    # Still callable as the plain function.
    assert get_weather("Oslo", days=2) == "Oslo 2 C"


def test_decorator_with_name_and_description() -> None:
    @function_tool(name="lookup", description="Find things.")
    def find(query: str, limit: int | None = None) -> list[str]:
        """Ignored summary."""
        return [query]

    assert find.name == "lookup"
    assert find.schema["function"]["name"] == "lookup"
    assert find.schema["function"]["description"] == "Find things."
    props = find.schema["function"]["parameters"]["properties"]
    assert props["query"]["type"] == "string"
    assert {"type": "integer"} in props["limit"]["anyOf"]

    @function_tool(name="renamed")
    def other() -> str:
        """Own summary."""
        return ""

    assert (other.name, other.description) == ("renamed", "Own summary.")


def test_plain_functions_become_tools_and_names_must_be_unique() -> None:
    def shout(text: str) -> str:
        return text.upper()

    agent = Agentor("A", model=ScriptedModel([]), tools=[shout])
    assert agent.tools[0].name == "shout"
    with pytest.raises(ValueError, match="unique"):
        Agentor("A", model=ScriptedModel([]), tools=[shout, function_tool(shout)])


def test_parse_args_validates_and_explains() -> None:
    assert get_weather.parse_args('{"city": "Oslo"}') == {"city": "Oslo", "days": 1, "units": "C"}
    assert get_weather.parse_args({"city": "Oslo", "days": "3"})["days"] == 3
    with pytest.raises(ToolArgumentsError, match="not valid JSON"):
        get_weather.parse_args('{"city": ')
    with pytest.raises(ToolArgumentsError, match="JSON object"):
        get_weather.parse_args("[1, 2]")
    with pytest.raises(ToolArgumentsError, match="city"):
        get_weather.parse_args("{}")
    with pytest.raises(ToolArgumentsError, match="units"):
        get_weather.parse_args('{"city": "Oslo", "units": "K"}')
    with pytest.raises(ToolArgumentsError, match="town"):
        get_weather.parse_args('{"city": "Oslo", "town": "x"}')


async def test_sync_tools_run_in_a_thread_async_tools_are_awaited() -> None:
    seen: dict[str, object] = {}

    @function_tool
    def sync_tool() -> str:
        seen["sync"] = threading.current_thread()
        return "s"

    @function_tool
    async def async_tool() -> str:
        seen["async"] = asyncio.current_task()
        return "a"

    assert not sync_tool.is_async and async_tool.is_async
    assert await sync_tool.invoke({}) == "s"
    assert await async_tool.invoke({}) == "a"
    assert seen["sync"] is not threading.main_thread()
    assert seen["async"] is asyncio.current_task()


async def test_tool_errors_become_results_shown_to_the_model(
    fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    @function_tool
    def boom() -> str:
        raise RuntimeError("kaboom")

    fake_openai.script = [
        {
            "calls": [
                ["boom", {}],
                ["no_such_tool", {}],
                ["get_weather", "{not json"],
                ["get_weather", {"town": 3}],
                ["get_weather", {"city": "Oslo"}],
            ]
        },
        {"text": "I did what I could."},
    ]
    result = await weather_agent(tools=[boom]).arun("go")

    assert result.status == "completed" and result.final_output == "I did what I could."
    results = [e for e in result.events if e.type == "tool_result"]
    by_id = {e.call_id: e for e in results}
    assert len(by_id) == 5
    errors = [by_id[f"call_1_{i}"].error for i in range(4)]
    assert errors[0] == "RuntimeError: kaboom"
    assert "unknown tool 'no_such_tool'" in errors[1] and "get_weather" in errors[1]
    assert "not valid JSON" in errors[2]
    assert "city" in errors[3] and "town" in errors[3]
    assert by_id["call_1_4"].error is None and by_id["call_1_4"].result.endswith("22C.")
    assert weather_agent.executed == ["Oslo"]
    # The unparseable arguments are logged as they came.
    assert by_id["call_1_2"].args == "{not json"
    # The model sees every error in the next request, in call order.
    tool_msgs = [m for m in fake_openai.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_msgs] == [f"call_1_{i}" for i in range(5)]
    assert [m["content"] for m in tool_msgs[:4]] == [f"Error: {e}" for e in errors]
    # Tools are offered to the model with their schemas.
    offered = [t["function"]["name"] for t in fake_openai.requests[0]["tools"]]
    assert offered == ["get_weather", "boom"]


async def test_non_string_results_are_logged_as_json_or_text() -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    @function_tool
    def data() -> dict[str, int]:
        return {"n": 1}

    @function_tool
    def thing() -> object:
        return Thing()

    model = ScriptedModel([])
    model.replies = [model.calls(("data", {}), ("thing", {})), ScriptedModel.text("ok")]
    result = await Agentor("A", model=model, tools=[data, thing]).arun("go")
    results = {e.name: e.result for e in result.events if e.type == "tool_result"}
    assert results == {"data": {"n": 1}, "thing": "a thing"}
    tool_msgs = [m["content"] for m in model.requests[1] if m["role"] == "tool"]
    assert tool_msgs == ['{"n": 1}', "a thing"]


def test_a_tools_schema_is_built_once_and_each_caller_gets_its_own_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @function_tool
    def get_weather(city: str) -> str:
        """Get the weather.

        Args:
            city: The city.
        """
        return city

    built = []
    real = get_weather._model.model_json_schema
    monkeypatch.setattr(get_weather._model, "model_json_schema", lambda: built.append(1) or real())
    first = get_weather.schema
    first["function"]["parameters"]["properties"]["city"]["description"] = "changed"
    second = get_weather.schema
    assert len(built) == 1, "pydantic builds it once per tool, not once per segment"
    assert second["function"]["parameters"]["properties"]["city"]["description"] == "The city."
    get_weather.name = "weather"
    assert get_weather.schema["function"]["name"] == "weather"
