"""`DemoModel`: an offline, deterministic stand-in for a chat model.

It implements the engine's `Model` protocol, so the weather example, `make demo` and the sample
runs work with no network and no API key. It keeps no state between calls and decides from
the conversation alone, so a run resumed in a fresh process goes on exactly as it would have.

What it does with the latest user message:
- it finds city names in it (capitalised words that are not common sentence words);
- it calls every offered tool that takes a `city` for each of them: one tool per turn with all
  cities in parallel, or, when asked to go "one at a time" (also "one by one", "step by step"),
  a single call per turn. A tool that acts rather than looks up (its name starts with a verb
  such as `book_` or `send_`) is called only when the message uses that verb ("Book a hotel
  in Rome"); a required whole-number argument is read from the message ("for 2 nights" gives
  `nights=2`), else it is 1;
- once every planned call has a result, it answers from the results, streaming the text word
  by word through `on_text` (with a small delay, so a live viewer sees it arrive).

Token usage is estimated from text length (about four characters a token). Call ids are random,
as real ones are, so a request that is asked again after a crash gets fresh ids.
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from agentor.engine.events import Usage
from agentor.engine.models import ModelResponse

Call = tuple[str, dict[str, Any]]

# Capitalised words that start sentences or questions rather than name places.
_SENTENCE_WORDS = """
    a after also an and any are at be before book but can check compare could day days did do does
    each every find first for forecast from get give good great hello hey hi how i i'd i'll i'm
    if in is it it's its let let's lets look me monday tuesday wednesday thursday friday
    saturday sunday my next no now of ok okay on one or our please plan rail road should show
    so stop stops tell thank thanks that the then these this those time to today tomorrow
    tonight trip us visit was we weather what what's whats when where which who why will with
    would yes you your
"""
_NOT_PLACES = frozenset(_SENTENCE_WORDS.split())
_CAPITALISED_RUN = re.compile(r"[A-ZÀ-ÖØ-Þ][\w'’.-]*(?: [A-ZÀ-ÖØ-Þ][\w'’.-]*)*")
_ONE_AT_A_TIME = re.compile(
    r"\bone (?:\w+ )?at a time\b|\bone by one\b|\bstep by step\b", re.IGNORECASE
)
_SEED_WEATHER = re.compile(r"^The weather in (.+) is (.+) and (-?\d+)C\.$")
# Verbs of tools that act: such a tool is only called when the message uses its verb.
_ACTIONS = frozenset({"book", "buy", "cancel", "delete", "order", "pay", "reserve", "send"})
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_NUMBERS = {word: n for n, word in enumerate(_NUMBER_WORDS, 1)}


def find_cities(text: str) -> list[str]:
    """Place names in `text`, in order, without repeats ("New York" stays one name)."""
    found: list[str] = []
    for run in _CAPITALISED_RUN.findall(text):
        name: list[str] = []
        for word in [*run.split(" "), ""]:  # "" ends the last name
            word = re.sub(r"(?:'s|’s|[.'’-])+$", "", word)
            if word and word.lower() not in _NOT_PLACES:
                name.append(word)
            elif name:
                city = " ".join(name)
                if city not in found:
                    found.append(city)
                name = []
    return found


def plan_calls(prompt: str, tools: Sequence[dict[str, Any]]) -> list[list[Call]]:
    """The tool calls the model will make for `prompt`, one list per turn."""
    cities = find_cities(prompt)
    words = set(re.findall(r"[a-z]+", prompt.lower()))
    city_tools = [t["function"] for t in tools if "city" in _properties(t) and _wanted(t, words)]
    if not cities or not city_tools:
        return []
    if _ONE_AT_A_TIME.search(prompt):
        return [[(t["name"], _arguments(t, city, prompt))] for city in cities for t in city_tools]
    return [[(t["name"], _arguments(t, city, prompt)) for city in cities] for t in city_tools]


def _wanted(tool: dict[str, Any], words: set[str]) -> bool:
    """A tool that acts (`book_hotel`) is wanted only when the message uses its verb."""
    verb = str(tool.get("function", {}).get("name", "")).split("_")[0].lower()
    return verb not in _ACTIONS or verb in words


def _properties(tool: dict[str, Any]) -> dict[str, Any]:
    return tool.get("function", {}).get("parameters", {}).get("properties", {})


def _arguments(fn: dict[str, Any], city: str, prompt: str = "") -> dict[str, Any]:
    args: dict[str, Any] = {"city": city}
    params = fn.get("parameters", {})
    placeholders = {"integer": 1, "number": 1, "boolean": False, "string": ""}
    for name in params.get("required", []):
        if name not in args:
            kind = params.get("properties", {}).get(name, {}).get("type")
            args[name] = placeholders.get(kind, "")
            if kind == "integer" and (n := _count_of(name, prompt)) is not None:
                args[name] = n
    return args


def _count_of(name: str, prompt: str) -> int | None:
    """`2` for "nights" in "... for 2 nights" (or "two nights")."""
    found = re.search(rf"\b(\d+|{'|'.join(_NUMBERS)})\s+{re.escape(name)}\b", prompt, re.I)
    if found is None:
        return None
    word = found.group(1).lower()
    return int(word) if word.isdigit() else _NUMBERS[word]


def describe_result(name: str, args: dict[str, Any], content: str) -> str:
    """One sentence of the final answer for one tool result."""
    if content.startswith("Error: "):
        what = args.get("city", "that")
        return f"I could not run {name} for {what}: {content.removeprefix('Error: ')}"
    seed = _SEED_WEATHER.match(content)
    if seed:  # the seed page's tool: reply as its worked example does
        city, sky, degrees = seed.groups()
        return f"The weather in {city} is {sky} with a temperature of {degrees}°C."
    return content


class DemoModel:
    """A scripted model: plans tool calls from the latest user message, then answers."""

    def __init__(self, name: str = "offline-demo", word_delay: float = 0.04) -> None:
        self.name = name
        self.word_delay = word_delay

    def __repr__(self) -> str:
        return f"DemoModel({self.name!r})"

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: Callable[[str], None] | None = None,
    ) -> ModelResponse:
        asked = _since_last_user(messages)
        prompt = _text(asked[0]) if asked else ""
        steps = plan_calls(prompt, tools)
        done = sum(1 for m in asked if m.get("role") == "assistant" and m.get("tool_calls"))
        prompt_tokens = _tokens(json.dumps(list(messages))) + _tokens(json.dumps(list(tools)))
        if done < len(steps):
            calls = [_openai_call(name, args) for name, args in steps[done]]
            out_tokens = sum(8 + _tokens(c["function"]["arguments"]) for c in calls)
            return ModelResponse(calls=calls, usage=_usage(prompt_tokens, out_tokens))
        text = _answer(prompt, asked)
        if on_text is not None:
            for piece in re.findall(r"\s*\S+", text):
                on_text(piece)
                if self.word_delay:
                    await asyncio.sleep(self.word_delay)
        return ModelResponse(text=text, usage=_usage(prompt_tokens, _tokens(text)))


def _since_last_user(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return list(messages[i:])
    return []


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _answer(prompt: str, asked: list[dict[str, Any]]) -> str:
    requested: dict[str, Call] = {}
    for m in asked:
        for call in m.get("tool_calls") or []:
            fn = call.get("function", {})
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {}
            requested[call.get("id", "")] = (fn.get("name", "tool"), args)
    lines = []
    for m in asked:
        if m.get("role") == "tool":
            name, args = requested.get(m.get("tool_call_id", ""), ("tool", {}))
            lines.append(describe_result(name, args, _text(m)))
    if not lines:
        if find_cities(prompt):
            return "I have no tool that can look that up, sorry."
        return "Which city should I look up? Try: What is the weather in London?"
    if len(lines) == 1:
        return lines[0]
    return "Here is what I found:\n" + "\n".join(f"- {line}" for line in lines)


def _openai_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{uuid.uuid4().hex[:24]}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
    }


def _tokens(text: str) -> int:
    return max(1, (len(text) + 3) // 4)


def _usage(prompt_tokens: int, completion_tokens: int) -> Usage:
    return Usage(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens)
