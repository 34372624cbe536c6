"""A model for tests, benches and offline demos: `ScriptedModel` answers from a script, in
process, with no network. (As the OpenAI Agents SDK ships a fake model: one scripted model
serves every test.)

    model = ScriptedModel([])
    model.replies = [
        model.calls(("get_weather", {"city": "Oslo"})),   # turn 1 asks for a tool
        ScriptedModel.text("Sunny in Oslo."),             # turn 2 answers
    ]
    agent = Agentor("Weather Agent", model=model, tools=[get_weather], store=MemoryStore())

A reply may also be a function of the request's messages, or the whole script one function
answering every request. Each request is kept (`requests`, deep copies; `tools_seen`).
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

from agentor.engine.events import Usage
from agentor.engine.models import ModelResponse, TextCallback

Reply = ModelResponse | Callable[[list[dict[str, Any]]], ModelResponse]


def tool_call(name: str, args: Any, call_id: str) -> dict[str, Any]:
    """An OpenAI-shaped tool call (`args` a dict, or its JSON text as a model sent it)."""
    raw = args if isinstance(args, str) else json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


class ScriptedModel:
    """A `Model` answering from `replies` in order (or from one function of the request).

    Streaming (an `on_text` callback) is fed the reply's text word by word. Running out of
    replies is an `AssertionError`: a test asked the model once more than it meant to.
    """

    def __init__(
        self,
        replies: Sequence[Reply] | Callable[[list[dict[str, Any]]], ModelResponse],
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.replies = replies if callable(replies) else list(replies)
        self.requests: list[list[dict[str, Any]]] = []
        self.tools_seen: list[list[dict[str, Any]]] = []
        self._turn_ids = itertools.count(1)

    @staticmethod
    def text(text: str, tokens: int = 5) -> ModelResponse:
        """A final answer (`tokens` input tokens, one output token)."""
        return ModelResponse(text=text, usage=Usage(tokens, 1, tokens + 1))

    def calls(self, *calls: tuple[str, Any], usage: Usage | None = None) -> ModelResponse:
        """A reply asking for tools: `("name", {args})` each, ids `c<n>_<i>` (n counts the
        replies this model made with `calls`)."""
        n = next(self._turn_ids)
        made = [tool_call(name, args, f"c{n}_{i}") for i, (name, args) in enumerate(calls)]
        return ModelResponse(calls=made, usage=usage or Usage(5, 1, 6))

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        self.requests.append(copy.deepcopy(list(messages)))
        self.tools_seen.append(list(tools))
        reply = self._next(list(messages))
        if on_text is not None and reply.text:
            for word in reply.text.split(" "):
                on_text(word + " ")
        return reply

    def _next(self, messages: list[dict[str, Any]]) -> ModelResponse:
        if callable(self.replies):
            return self.replies(messages)
        if not self.replies:
            raise AssertionError(f"ScriptedModel: script exhausted at request {len(self.requests)}")
        reply = self.replies.pop(0)
        return reply(messages) if callable(reply) else reply
