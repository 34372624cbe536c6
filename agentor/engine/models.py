"""The `Model` protocol and the openai-SDK chat-completions model.

Any object with an async `generate` works as a model, so tests, the offline demo and other
providers plug in. `openai` is imported only when an `OpenAIModel` first makes a request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agentor.engine.chat_request import (
    CHAT_PATH,
    PreparedSettings,
    chat_request_body,
    prepare_settings,
)
from agentor.engine.events import Usage
from agentor.errors import ModelError

TextCallback = Callable[[str], None]


@dataclass
class ModelResponse:
    text: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)  # OpenAI `tool_calls` shape
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class Model(Protocol):
    name: str

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        """One chat turn. When `on_text` is given, stream and call it with each text delta."""
        ...


class OpenAIModel:
    """Chat completions through the `openai` SDK: OpenAI, vLLM, Ollama, llama.cpp, ...

    `base_url`/`api_key` default to `OPENAI_BASE_URL`/`OPENAI_API_KEY`, as the SDK does.
    """

    def __init__(
        self,
        name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        **settings: Any,
    ) -> None:
        self.name = name
        self._base_url = base_url
        self._api_key = api_key
        self._client_options = {
            k: settings.pop(k) for k in ("max_retries", "timeout") if k in settings
        }
        self.settings = settings
        self._prepared: tuple[dict[str, Any], PreparedSettings] | None = None
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._checked: Any = None  # the client whose endpoint answered `check`

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIModel({self.name!r}, base_url={self._base_url!r})"

    def renamed(self, name: str) -> OpenAIModel:
        """Another model on the same endpoint, with the same key, settings and client options
        (a client of its own)."""
        return OpenAIModel(
            name,
            base_url=self._base_url,
            api_key=self._api_key,
            **self._client_options,
            **self.settings,
        )

    def with_settings(
        self, changes: Mapping[str, Any], *, name: str | None = None, merge: bool = True
    ) -> OpenAIModel:
        """Another model on the same endpoint, with the same key and client options (a client
        of its own), named `name` (default this one's), sending this model's settings with
        `changes` made (a None drops that setting), or `changes` alone (`merge=False`): a
        replay's `model_settings=`, an experiment's, a judge's model."""
        fields = dict(self.settings) if merge else {}
        for key, value in changes.items():
            if value is None:
                fields.pop(key, None)
            else:
                fields[key] = value
        return OpenAIModel(
            name or self.name,
            base_url=self._base_url,
            api_key=self._api_key,
            **self._client_options,
            **fields,
        )

    def _get_client(self) -> Any:
        # An async client's connections belong to one event loop; `run()` makes a new loop
        # each call, so keep one client per loop.
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            import openai  # lazy: ~0.3 s, only when a request is made

            self._client = openai.AsyncOpenAI(
                base_url=self._base_url, api_key=self._api_key, **self._client_options
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the client's connections (they belong to the running event loop)."""
        client, loop = self._client, self._client_loop
        self._client, self._client_loop = None, None
        # A client made in an event loop that has ended (an earlier `asyncio.run`) has its
        # connections with it: closing it here would touch that dead loop.
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

    async def check(self) -> None:
        """Whether this model can be asked at all, before a run writes what it would leave
        failed (a replay, a fork on another model): the client can be built (a key is
        there) and the endpoint answers. Any HTTP answer but a refused key will do (not every
        server lists its models); asked once, without retries. `ModelError` (no key in it).

        A client whose endpoint answered is not asked again: an experiment checks its model
        once, then replays its candidates (each checking it) on the same client."""
        client: Any = None
        try:
            client = self._get_client()
            if client is self._checked:
                return
            await client.with_options(max_retries=0).models.list()
        except Exception as exc:
            import openai

            refused = getattr(exc, "status_code", None) in (401, 403)
            if not isinstance(exc, openai.APIStatusError) or refused:
                text = redact(f"{type(exc).__name__}: {exc}", self._secret())
                raise ModelError(f"model {self.name} cannot be used: {text}") from None
        self._checked = client  # it answered

    def _secret(self) -> str | None:
        client = self._client
        return getattr(client, "api_key", None) or self._api_key

    def _prepared_settings(self) -> PreparedSettings:
        # Made once, not per turn; again only if someone changed `settings` since.
        if self._prepared is None or self._prepared[0] != self.settings:
            self._prepared = (dict(self.settings), prepare_settings(self.settings))
        return self._prepared[1]

    async def generate(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        try:
            client = self._get_client()
            prepared = self._prepared_settings()
            content, body = chat_request_body(
                self.name, messages, tools, prepared, stream=on_text is not None
            )
            # Without the SDK's per-call transform (agentor.engine.chat_request): the client's
            # `post`, as `create` calls it, with the body already written.
            request: dict[str, Any] = {"options": prepared.options}
            if content is None:
                request["body"] = body
            else:
                request["content"] = content
            from openai import AsyncStream
            from openai.types.chat import ChatCompletion, ChatCompletionChunk

            if on_text is None:
                completion = await client.post(CHAT_PATH, cast_to=ChatCompletion, **request)
                return _from_completion(completion)
            stream = await client.post(
                CHAT_PATH,
                cast_to=ChatCompletion,
                stream=True,
                stream_cls=AsyncStream[ChatCompletionChunk],
                **request,
            )
            return await _from_stream(stream, on_text)
        except Exception as exc:
            text, secret = f"{type(exc).__name__}: {exc}", self._secret()
            # The SDK's own errors, and any other that quotes the key, leave here redacted.
            if type(exc).__module__.startswith(("openai", "httpx")) or (secret and secret in text):
                raise ModelError(redact(text, secret)) from None
            raise


def redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return text


def _usage(raw: Any) -> Usage:
    if raw is None:
        return Usage()
    prompt = getattr(raw, "prompt_tokens", 0) or 0
    completion = getattr(raw, "completion_tokens", 0) or 0
    total = getattr(raw, "total_tokens", 0) or prompt + completion
    return Usage(prompt, completion, total)


def _from_completion(completion: Any) -> ModelResponse:
    if not completion.choices:
        raise ModelError("the model returned no choices")
    msg = completion.choices[0].message
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.function.name, "arguments": c.function.arguments or ""},
        }
        for c in msg.tool_calls or []
        if getattr(c, "function", None) is not None
    ]
    return ModelResponse(text=msg.content, calls=calls, usage=_usage(completion.usage))


async def _from_stream(stream: Any, on_text: TextCallback) -> ModelResponse:
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    usage = Usage()
    async for chunk in stream:
        if getattr(chunk, "usage", None) is not None:
            usage = _usage(chunk.usage)
        for choice in chunk.choices or []:
            delta = choice.delta
            if delta is None:
                continue
            if delta.content:
                text.append(delta.content)
                on_text(delta.content)
            for tc in delta.tool_calls or []:
                # Some servers leave out `index`: a delta with a new id starts the next call,
                # one without continues the last.
                index = tc.index
                if index is None:
                    index = len(calls) if tc.id or not calls else max(calls)
                slot = calls.setdefault(
                    index,
                    {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if tc.id:
                    slot["id"] = tc.id
                if tc.function is not None:
                    if tc.function.name:
                        slot["function"]["name"] += tc.function.name
                    if tc.function.arguments:
                        slot["function"]["arguments"] += tc.function.arguments
    return ModelResponse(
        text="".join(text) if text else None,
        calls=[calls[i] for i in sorted(calls)],
        usage=usage,
    )
