"""What the experiment tests share: baseline runs recorded by the weather agent on the fake
server, and a server script whose answers depend on the model asked.

    gpt-4o-mini   the baselines' model: the weather script (get_weather per city, a summary)
    same-model    asks what the baseline asked: every call served, the same answer
    vague-model   answers at once, "I cannot tell.": output and tools changed
    paris-model   asks get_weather for Paris too (a call no baseline made)
    judge-pass    a judge: PASS; judge-fail: FAIL; judge-mumble: neither
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tests.openai_server import FakeOpenAI, Reply, weather_script

CITIES = ("Oslo", "Rome", "Lisbon", "Tokyo", "Lima")
VAGUE = "I cannot tell."


def prompts(cities: Sequence[str] = CITIES) -> list[str]:
    return [f"What is the weather in {city}?" for city in cities]


def script(request: dict[str, Any]) -> Reply:
    model = request.get("model", "")
    if model.startswith("judge-"):
        verdict = {"judge-pass": "PASS", "judge-fail": "FAIL"}.get(model, "hmm")
        return {"text": f"{verdict}\nthe candidate says what the reference says"}
    if model == "vague-model":
        return {"text": VAGUE}
    if model == "paris-model":
        messages = request.get("messages", [])
        if messages and messages[-1].get("role") == "tool":
            return weather_script(request)
        found = weather_script(request)
        calls = list(found.get("calls", []))
        return {"calls": [*calls, ["get_weather", {"city": "Paris"}]]}
    return weather_script(request)


def requests_of(srv: FakeOpenAI, model: str) -> list[dict[str, Any]]:
    return [r for r in srv.requests if r.get("model") == model]


def prompt_of(request: dict[str, Any]) -> str:
    """The user message a request was asked for (which baseline's candidate asked it)."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    return str(users[0]["content"]) if users else ""
