"""Model requests without the SDK's per-call transform (agentor.engine.chat_request), still through
the openai client: what reaches the server is what `chat.completions.create` sends, for every
shape of message the engine makes and every setting; and the client's behaviours stay
(retries, timeouts, errors without the key, streaming)."""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable
from typing import Any

import openai
import pytest
from openai.resources.chat.completions import AsyncCompletions

from agentor import Agentor, function_tool
from agentor.engine.chat_request import ENGINE_FIELDS, _create_parameters
from agentor.engine.conversation import Conversation
from agentor.engine.events import Usage
from agentor.engine.models import ModelResponse, OpenAIModel
from agentor.engine.store.memory import MemoryStore
from agentor.errors import ModelError
from agentor.testing import ScriptedModel, tool_call
from tests.openai_server import FakeOpenAI

KEY = "sk-test-key-4f9c2e"
# A value for every parameter of `create` a model's settings may hold (the engine sets model,
# messages, tools and stream); test_the_settings_corpus_covers_every_parameter_of_create
# keeps it so.
EVERY_SETTING: dict[str, Any] = {
    "audio": {"voice": "alloy", "format": "wav"},
    "frequency_penalty": 0.5,
    "function_call": "auto",
    "functions": [{"name": "legacy", "parameters": {"type": "object", "properties": {}}}],
    "logit_bias": {"50256": -100},
    "logprobs": True,
    "max_completion_tokens": 512,
    "max_tokens": 256,
    "metadata": {"team": "search", "ticket": "T-1"},
    "modalities": ["text"],
    "moderation": {"model": "omni-moderation-latest", "policy": {"input": {"mode": "score"}}},
    "n": 1,
    "parallel_tool_calls": False,
    "prediction": {"type": "content", "content": "The weather in"},
    "presence_penalty": -0.25,
    "prompt_cache_key": "weather-v1",
    "prompt_cache_options": {"mode": "implicit"},
    "prompt_cache_retention": "24h",
    "reasoning_effort": "low",
    "response_format": {
        "type": "json_schema",
        "json_schema": {
            "name": "forecast",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
                "required": ["city", "celsius"],
                "additionalProperties": False,
            },
        },
    },
    "safety_identifier": "user-42",
    "seed": 7,
    "service_tier": "auto",
    "stop": ["\n\nEND", "STOP"],
    "store": False,
    "stream_options": {"include_obfuscation": False},
    "temperature": 0.2,
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    "top_logprobs": 2,
    "top_p": 0.9,
    "user": "tester",
    "verbosity": "low",
    "web_search_options": {"search_context_size": "low"},
    "extra_headers": {"X-Team": "weather", "X-Trace": "t-7"},
    "extra_query": {"api-version": "2026-01-01"},
    "extra_body": {"top_k": 5, "temperature": 0.3},
    "timeout": 30.0,
}
UNICODE = 'Ærøskøbing 🌤 東京 שלום e\u0301 \u2028 "quoted" \\ back\tslash'


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city.
    """
    return f"The weather in {city} is sunny and 22C. {UNICODE}"


@function_tool
def read_page(n: int) -> str:
    """A large result.

    Args:
        n: Which page.
    """
    return f"page {n}: " + "lorem ipsum dolor sit amet " * 4000


@function_tool
def lookup(key: str) -> dict[str, Any]:
    """A structured result.

    Args:
        key: What to look up.
    """
    return {"key": key, "values": [1, 2.5, None, True], "note": UNICODE}


async def engine_requests() -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The requests a real run of the engine makes: a system prompt, a user message of content
    parts, an answer with text and calls, several calls in a turn (unicode arguments, a large
    result, a structured one, an unknown tool's error), and the final answer."""
    model = ScriptedModel(
        [
            ModelResponse(
                text="Let me look that up.",
                calls=[tool_call("get_weather", {"city": UNICODE}, "c1")],
            ),
            ModelResponse(
                calls=[
                    tool_call("read_page", {"n": 3}, "c2"),
                    tool_call("lookup", '{"key": "k\\u00e9y"}', "c3"),
                    tool_call("no_such_tool", {}, "c4"),
                    tool_call("get_weather", {"city": "Oslo"}, "c5"),
                ]
            ),
            ScriptedModel.text("Done: sunny."),
        ]
    )
    agent = Agentor(
        "Corpus",
        model=model,
        instructions=f"You are a weather assistant. {UNICODE}",
        tools=[get_weather, read_page, lookup],
        store=MemoryStore(),
    )
    prompt = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"What is the weather here? {UNICODE}"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
            ],
        }
    ]
    result = await agent.arun(prompt)
    assert result.status == "completed", result.error
    requests = list(zip(model.requests, model.tools_seen, strict=True))
    # Shapes a conversation passed as input may hold, beyond the engine's own.
    requests.append(
        (
            [
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": "Earlier question", "name": "ann"},
                {"role": "assistant", "content": [{"type": "text", "text": "Earlier answer"}]},
                {"role": "user", "content": UNICODE},
            ],
            [],
        )
    )
    return requests


def body_sent(srv: FakeOpenAI) -> dict[str, Any]:
    return srv.requests[-1]


def headers_sent(srv: FakeOpenAI) -> dict[str, str]:
    # The SDK's own per-request headers name the package and the platform: equal on both
    # sides; only the connection's own may differ.
    return {k: v for k, v in srv.headers[-1].items() if k not in ("content-length", "host")}


async def sent_by_create(
    srv: FakeOpenAI, messages: Any, tools: Any, settings: dict[str, Any], stream: bool
) -> tuple[dict[str, Any], dict[str, str]]:
    client = openai.AsyncOpenAI(base_url=srv.url, api_key=KEY, max_retries=0)
    try:
        kwargs: dict[str, Any] = {"model": "gpt-4o-mini", "messages": messages, **settings}
        if tools:
            kwargs["tools"] = tools
        if stream:
            kwargs.update(stream=True, stream_options={"include_usage": True})
            async for _ in await client.chat.completions.create(**kwargs):
                pass
        else:
            await client.chat.completions.create(**kwargs)
    finally:
        await client.close()
    return body_sent(srv), headers_sent(srv)


async def sent_by_us(
    srv: FakeOpenAI, messages: Any, tools: Any, settings: dict[str, Any], stream: bool
) -> tuple[dict[str, Any], dict[str, str]]:
    model = OpenAIModel("gpt-4o-mini", base_url=srv.url, api_key=KEY, max_retries=0, **settings)
    try:
        await model.generate(messages, tools, (lambda text: None) if stream else None)
    finally:
        await model.aclose()
    return body_sent(srv), headers_sent(srv)


def test_the_settings_corpus_covers_every_parameter_of_create() -> None:
    accepted = set(inspect.signature(AsyncCompletions.create).parameters) - {"self"}
    assert set(EVERY_SETTING) == accepted - ENGINE_FIELDS
    assert _create_parameters() == accepted  # what a model's settings are checked against


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("settings", ["none", "every"])
async def test_what_we_send_is_what_create_sends_for_every_request_the_engine_makes(
    fake_openai: FakeOpenAI, settings: str, stream: bool
) -> None:
    fake_openai.script = lambda request: {"text": "ok"}
    chosen = EVERY_SETTING if settings == "every" else {}
    if stream:  # a streamed request's stream_options are the engine's (it reads the usage)
        chosen = {k: v for k, v in chosen.items() if k != "stream_options"}
    corpus = await engine_requests()
    assert len(corpus) == 4 and max(len(json.dumps(m)) for m, _ in corpus) > 100_000
    for messages, tools in corpus:
        theirs = await sent_by_create(fake_openai, messages, tools, chosen, stream)
        ours = await sent_by_us(fake_openai, messages, tools, chosen, stream)
        assert ours[0] == theirs[0]  # the bodies, equal as JSON
        assert ours[1] == theirs[1]  # and the headers: auth, extra headers, query, timeout
    sent = body_sent(fake_openai)
    assert sent["messages"][-1]["content"] == UNICODE
    if settings == "every":
        headers = headers_sent(fake_openai)
        assert headers["authorization"] == f"Bearer {KEY}" and headers["x-team"] == "weather"
        assert headers[":path"].endswith("/chat/completions?api-version=2026-01-01")
        assert (sent["top_k"], sent["temperature"]) == (5, 0.3)  # extra_body wins, as in the SDK


async def test_a_conversation_the_loop_appends_to_is_sent_as_create_sends_it_turn_after_turn(
    fake_openai: FakeOpenAI,
) -> None:
    # The loop's own list keeps each message's JSON from turn to turn (agentor.engine.conversation).
    fake_openai.script = lambda request: {"text": "ok"}
    messages, tools = (await engine_requests())[2]
    conversation = Conversation(messages[:2])
    for end in (2, 4, 7, len(messages)):
        conversation.extend(messages[len(conversation) : end])
        theirs = await sent_by_create(fake_openai, list(conversation), tools, EVERY_SETTING, False)
        ours = await sent_by_us(fake_openai, conversation, tools, EVERY_SETTING, False)
        assert ours == theirs and len(ours[0]["messages"]) == end


async def test_a_conversation_changed_other_than_by_appending_sends_what_it_holds_now(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.script = lambda request: {"text": "ok"}
    conversation = Conversation(
        [{"role": "user", "content": "first"}, {"role": "user", "content": "second"}]
    )
    await sent_by_us(fake_openai, conversation, [], {}, False)
    conversation[1] = {"role": "user", "content": "replaced"}
    conversation.insert(0, {"role": "system", "content": "inserted"})
    assert (await sent_by_us(fake_openai, conversation, [], {}, False))[0]["messages"] == [
        {"role": "system", "content": "inserted"},
        {"role": "user", "content": "first"},
        {"role": "user", "content": "replaced"},
    ]
    conversation.pop()
    sent = await sent_by_us(fake_openai, conversation, [], {}, True)
    assert [m["content"] for m in sent[0]["messages"]] == ["inserted", "first"]
    twin = copy.copy(conversation)  # a copy writes its own messages, never into the original's
    twin.append({"role": "user", "content": "the twin's"})
    conversation.append({"role": "user", "content": "the original's"})
    for held in (twin, conversation):
        sent = await sent_by_us(fake_openai, held, [], {}, False)
        assert [m["content"] for m in sent[0]["messages"]] == [m["content"] for m in held]


def said(*contents: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": c} for c in contents]


# Every way a list can be changed, each alone, with what it leaves: appending keeps the JSON
# already written, every other change drops it.
CHANGES: dict[str, tuple[Callable[[Conversation], Any], list[str]]] = {
    "setitem": (lambda c: c.__setitem__(1, said("B")[0]), ["c", "B", "a"]),
    "slice set": (lambda c: c.__setitem__(slice(0, 2), said("X", "Y")), ["X", "Y", "a"]),
    "delitem": (lambda c: c.__delitem__(0), ["b", "a"]),
    "slice del": (lambda c: c.__delitem__(slice(1, None)), ["c"]),
    "insert": (lambda c: c.insert(1, said("I")[0]), ["c", "I", "b", "a"]),
    "pop": (lambda c: c.pop(0), ["b", "a"]),
    "remove": (lambda c: c.remove(said("b")[0]), ["c", "a"]),
    "sort": (lambda c: c.sort(key=lambda m: m["content"]), ["a", "b", "c"]),
    "reverse": (lambda c: c.reverse(), ["a", "b", "c"]),
    "imul": (lambda c: c.__imul__(0), []),
    "clear": (lambda c: c.clear(), []),
    "append": (lambda c: c.append(said("d")[0]), ["c", "b", "a", "d"]),
    "extend": (lambda c: c.extend(said("d")), ["c", "b", "a", "d"]),
    "iadd": (lambda c: c.__iadd__(said("d")), ["c", "b", "a", "d"]),
}


@pytest.mark.parametrize("change", CHANGES)
async def test_each_change_to_a_conversation_is_sent_as_create_sends_the_list_it_leaves(
    fake_openai: FakeOpenAI, change: str
) -> None:
    """A conversation already sent once (each message's JSON kept), changed once, then
    appended to until it is as long as it was (so no length tells the change): what reaches
    the server is what `create` sends for the list it holds now."""
    fake_openai.script = lambda request: {"text": "ok"}
    conversation = Conversation(said("c", "b", "a"))
    await sent_by_us(fake_openai, conversation, [], {}, False)
    mutate, left = CHANGES[change]
    mutate(conversation)
    assert [m["content"] for m in conversation] == left
    conversation.extend(said("new", "newer", "newest")[: max(0, 3 - len(left))])
    theirs = await sent_by_create(fake_openai, list(conversation), [], {}, False)
    ours = await sent_by_us(fake_openai, conversation, [], {}, False)
    assert ours == theirs
    assert ours[0]["messages"] == list(conversation)


async def test_a_setting_create_does_not_take_is_sent_as_it_is(fake_openai: FakeOpenAI) -> None:
    """A provider's own field (`ModelSettings(top_k=40)`) reaches the server as given."""
    model = OpenAIModel("m", base_url=fake_openai.url, api_key=KEY, max_retries=0, top_k=40)
    await model.generate([{"role": "user", "content": "hi"}], [])
    assert fake_openai.requests[-1]["top_k"] == 40


async def test_a_setting_the_engine_sets_is_refused_with_its_name() -> None:
    model = OpenAIModel("m", base_url="http://127.0.0.1:9/v1", api_key=KEY, stream=True)
    with pytest.raises(TypeError, match="'stream'"):
        await model.generate([{"role": "user", "content": "hi"}], [])


async def test_a_429_and_a_500_are_retried_with_backoff_then_the_answer_is_taken(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.script = [
        {"status": 429, "message": "slow down", "retry_after_ms": 5},
        {"status": 500, "message": "hiccup", "retry_after_ms": 5},
        {"text": "third time lucky"},
    ]
    model = OpenAIModel("m", base_url=fake_openai.url, api_key=KEY, max_retries=2)
    response = await model.generate([{"role": "user", "content": "hi"}], [])
    await model.aclose()
    assert response.text == "third time lucky"
    assert [h["x-stainless-retry-count"] for h in fake_openai.headers] == ["0", "1", "2"]
    assert fake_openai.requests[0] == fake_openai.requests[2]  # the same body sent again


async def test_a_request_that_times_out_is_a_model_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script = [{"hang": True}]
    model = OpenAIModel("m", base_url=fake_openai.url, api_key=KEY, max_retries=0, timeout=0.3)
    with pytest.raises(ModelError, match="APITimeoutError"):
        await model.generate([{"role": "user", "content": "hi"}], [])
    await model.aclose()


@pytest.mark.parametrize(
    "reply",
    [
        {"status": 401, "message": f"Incorrect API key provided: {KEY}"},
        {"status": 400, "message": f"bad request from {KEY}"},
        {"status": 500, "message": f"upstream broke for {KEY}"},
        {"hang": True},
        None,  # nobody listening
    ],
    ids=["401", "400", "500", "timeout", "refused"],
)
async def test_the_key_is_redacted_from_every_error(
    fake_openai: FakeOpenAI, reply: dict[str, Any] | None
) -> None:
    fake_openai.script = [reply] if reply is not None else []
    url = fake_openai.url if reply is not None else "http://127.0.0.1:9/v1"
    model = OpenAIModel("m", base_url=url, api_key=KEY, max_retries=0, timeout=0.3)
    with pytest.raises(ModelError) as caught:
        await model.generate([{"role": "user", "content": "hi"}], [])
    await model.aclose()
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    if reply is not None and "status" in reply:
        assert str(reply["status"]) in str(caught.value) and "***" in str(caught.value)


def expected_usage(srv: FakeOpenAI) -> Usage:
    """What tests/openai_server.py counts for the last request (prompt ~ its JSON / 4)."""
    prompt = sum(len(json.dumps(m)) for m in srv.requests[-1]["messages"]) // 4
    return Usage(prompt, 12, prompt + 12)


async def test_streamed_text_arrives_in_deltas_with_the_usage_chunk_last(
    fake_openai: FakeOpenAI,
) -> None:
    text = f"Sunny and warm in Oslo today. {UNICODE}"
    fake_openai.script = [{"text": text}]
    model = OpenAIModel("m", base_url=fake_openai.url, api_key=KEY, max_retries=0)
    deltas: list[str] = []
    response = await model.generate([{"role": "user", "content": "hi"}], [], deltas.append)
    await model.aclose()
    assert len(deltas) > 5 and "".join(deltas) == text == response.text
    assert response.usage == expected_usage(fake_openai) and response.usage.input_tokens > 0
    assert fake_openai.requests[-1]["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize("omit_index", [False, True], ids=["indexed", "no-index"])
async def test_streamed_tool_call_deltas_are_assembled_in_order(
    fake_openai: FakeOpenAI, omit_index: bool
) -> None:
    calls = [["get_weather", {"city": "Oslo"}], ["get_time", {"tz": UNICODE}]]
    fake_openai.script = [{"calls": calls, "omit_index": omit_index}]
    model = OpenAIModel("m", base_url=fake_openai.url, api_key=KEY, max_retries=0)
    response = await model.generate([{"role": "user", "content": "hi"}], [], lambda t: None)
    await model.aclose()
    got = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in response.calls
    ]
    assert got == [
        ("call_1_0", "get_weather", {"city": "Oslo"}),
        ("call_1_1", "get_time", {"tz": UNICODE}),
    ]
    assert response.text is None and response.usage == expected_usage(fake_openai)
