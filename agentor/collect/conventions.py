"""What a span says about an agent's step, in either convention a framework speaks.

The OpenTelemetry GenAI conventions first (`gen_ai.*`, old and new names: they still move),
then OpenInference (`openinference.span.kind`, `llm.*`, `tool.*`: Phoenix's, which the
OpenInference instrumentors of the Agents SDK, LangChain, CrewAI and smolagents emit).

Content is looked for wherever a framework puts it: span attributes (JSON strings or structured
values), span events and log records named `gen_ai.client.inference.operation.details`, and
OpenInference's flattened `llm.input_messages.N.message.*`. Messages come out in the
chat-completions shape a run log holds (`role`, `content`, `tool_calls`, `tool_call_id`), so
every view, search and replay reads a collected run as it reads one of ours.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentor.collect.spans import STATUS_ERROR, LogRecord, Span
from agentor.engine.events import Usage

AGENT = "agent"
CHAT = "chat"
TOOL = "tool"

_CHAT_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
_OPENINFERENCE_KINDS = {"AGENT": AGENT, "LLM": CHAT, "TOOL": TOOL}
DETAILS_EVENT = "gen_ai.client.inference.operation.details"


def kind_of(span: Span) -> str | None:
    """AGENT, CHAT, TOOL, or None for a span that is not an agent's step."""
    attrs = span.attributes
    operation = attrs.get("gen_ai.operation.name")
    if operation == "invoke_agent":
        return AGENT
    if operation in _CHAT_OPERATIONS:
        return CHAT
    if operation == "execute_tool":
        return TOOL
    kind = _OPENINFERENCE_KINDS.get(str(attrs.get("openinference.span.kind", "")).upper())
    graph = _langgraph(attrs)
    if graph is not None:
        # LangGraph marks each node's span AGENT: the run is the graph's invocation, its root.
        if "langgraph_node" in graph:
            return None if kind == AGENT else kind
        if kind is None or kind == "CHAIN" or attrs.get("openinference.span.kind") == "CHAIN":
            return AGENT if span.parent_id is None or kind == AGENT else kind
    if kind is not None:
        return kind
    # pydantic-ai before the GenAI names settled: "agent run" and "running tool".
    if span.name == "agent run" and "agent_name" in attrs:
        return AGENT
    if span.name == "running tool" and "gen_ai.tool.name" in attrs:
        return TOOL
    return None


def _langgraph(attrs: Mapping[str, Any]) -> dict[str, Any] | None:
    """OpenInference's LangChain `metadata` when it says the span is LangGraph's."""
    metadata = _decoded(attrs.get("metadata"))
    if isinstance(metadata, dict) and (
        metadata.get("ls_integration") == "langgraph" or "langgraph_node" in metadata
    ):
        return metadata
    return None


def content(span: Span, key: str, logs: Sequence[LogRecord] = ()) -> Any:
    """The value of a content attribute (`gen_ai.input.messages`, ...) wherever it was put:
    on the span, on a details event of the span, or on a details log record joined to it;
    a JSON string is decoded. None when nowhere."""
    value = span.attributes.get(key)
    if value is None:
        for event in span.events:
            if event.name == DETAILS_EVENT and key in event.attributes:
                value = event.attributes[key]
                break
    if value is None:
        for record in logs:
            if record.name == DETAILS_EVENT:
                value = record.attributes.get(key)
                if value is None and isinstance(record.body, Mapping):
                    value = record.body.get(key)
                if value is not None:
                    break
    return _decoded(value)


def decoded_json(value: Any) -> Any:
    """A JSON string decoded (other values as they are)."""
    return _decoded(value)


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def agent_name(span: Span) -> str | None:
    attrs = span.attributes
    for key in ("gen_ai.agent.name", "agent_name", "agent.name"):
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    for prefix in ("invoke_agent ", "agent run "):
        if span.name.startswith(prefix):
            return span.name[len(prefix) :]
    return span.name or None


def step_agent_name(span: Span) -> str | None:
    """The agent a chat or tool span says it belongs to (pydantic-ai names it on each)."""
    value = span.attributes.get("gen_ai.agent.name")
    return value if isinstance(value, str) and value else None


def model_of(span: Span) -> str | None:
    attrs = span.attributes
    for key in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "model_name"):
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def usage_of(span: Span) -> Usage | None:
    attrs = span.attributes
    given = _first_int(
        attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"
    )
    taken = _first_int(
        attrs,
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
    )
    total = _first_int(attrs, "gen_ai.usage.total_tokens", "llm.token_count.total")
    if given is None and taken is None and total is None:
        return None
    given, taken = given or 0, taken or 0
    return Usage(given, taken, total if total is not None else given + taken)


def _first_int(attrs: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str) and value.isdigit():
            return int(value)
    return None


def error_of(span: Span) -> str | None:
    """Why the span failed, or None when it did not."""
    if span.status_code != STATUS_ERROR:
        return None
    for event in span.events:
        if event.name == "exception":
            kind = event.attributes.get("exception.type")
            message = event.attributes.get("exception.message")
            if kind or message:
                return ": ".join(str(x) for x in (kind, message) if x)
    return span.status_message or str(span.attributes.get("error.type") or "error")


# Messages ------------------------------------------------------------------------------------


def input_messages(span: Span, logs: Sequence[LogRecord] = ()) -> list[dict[str, Any]] | None:
    """The conversation a chat span sent, as chat-completions messages; None: not recorded."""
    system = system_text(span, logs)
    messages = content(span, "gen_ai.input.messages", logs)
    out: list[dict[str, Any]] | None
    if isinstance(messages, list):
        out = chat_messages(messages)
    else:
        flat = _unflatten(span.attributes, "llm.input_messages.")
        out = [_openinference_message(m) for m in flat] if flat else None
    if out is None:
        return [{"role": "system", "content": system}] if system else None
    if system and not any(m.get("role") == "system" for m in out):
        out.insert(0, {"role": "system", "content": system})
    return out


def system_text(span: Span, logs: Sequence[LogRecord] = ()) -> str | None:
    value = content(span, "gen_ai.system_instructions", logs)
    if isinstance(value, str):
        return value or None
    if isinstance(value, list):
        texts = [_text_of_part(p) for p in value]
        return "\n".join(t for t in texts if t) or None
    return None


def output_message(span: Span, logs: Sequence[LogRecord] = ()) -> dict[str, Any] | None:
    """The answer a chat span got (`content`, `tool_calls`, `finish_reason`); None: unknown."""
    messages = content(span, "gen_ai.output.messages", logs)
    if isinstance(messages, list) and messages:
        out = chat_messages(messages[:1])
        message = next((m for m in out if m.get("role") == "assistant"), None)
        if message is None:
            return None
        reason = messages[0].get("finish_reason") if isinstance(messages[0], dict) else None
        if isinstance(reason, str):
            message["finish_reason"] = reason
        return message
    flat = _unflatten(span.attributes, "llm.output_messages.")
    if flat:
        return _openinference_message(flat[0])
    return None


def finish_reasons(span: Span) -> list[str] | None:
    value = span.attributes.get("gen_ai.response.finish_reasons")
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def chat_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """GenAI messages (`role` and typed `parts`, or an older `content`) as chat-completions
    messages. A tool's answer becomes a `tool` message, whatever role carried it."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role") or "user")
        parts = message.get("parts")
        if not isinstance(parts, list):
            text = message.get("content")
            out.append({"role": role, "content": text if isinstance(text, str) else _json(text)})
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "tool_call":
                calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind == "tool_call_response":
                answer = part.get("response", part.get("result"))
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(part.get("id") or ""),
                        "content": _text(answer),
                    }
                )
            else:
                text = _text_of_part(part)
                if text is not None:
                    texts.append(text)
        if role == "assistant":
            reply: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
            if calls:
                reply["tool_calls"] = calls
            out.append(reply)
        elif texts:
            out.append({"role": role if role != "tool" else "user", "content": "\n".join(texts)})
    return out


def _text_of_part(part: Any) -> str | None:
    if not isinstance(part, dict):
        return part if isinstance(part, str) else None
    kind = part.get("type")
    if kind in (None, "text"):
        value = part.get("content", part.get("text"))
        return value if isinstance(value, str) else None
    return None  # thinking, media, ...: not part of the chat-completions conversation


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else _json(arguments if arguments else {})
    return {
        "id": str(call_id or ""),
        "type": "function",
        "function": {"name": str(name or ""), "arguments": args},
    }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _unflatten(attrs: Mapping[str, Any], prefix: str) -> list[Any]:
    """OpenInference's flattened lists (`llm.input_messages.0.message.role`) as nested lists and
    dicts: [{"message": {"role": ...}}, ...]."""
    root: dict[str, Any] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        node = root
        parts = key[len(prefix) :].split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                break
            node = child
        else:
            node[parts[-1]] = value
    listed = _listify(root)
    return listed if isinstance(listed, list) else []


def _listify(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_listify(node[k]) for k in sorted(node, key=int)]
    return {k: _listify(v) for k, v in node.items()}


def _openinference_message(item: Any) -> dict[str, Any]:
    message = item.get("message", {}) if isinstance(item, dict) else {}
    role = str(message.get("role") or "user")
    text = message.get("content")
    if not isinstance(text, str):
        contents = message.get("contents")
        texts = []
        if isinstance(contents, list):
            for c in contents:
                inner = c.get("message_content", {}) if isinstance(c, dict) else {}
                if isinstance(inner.get("text"), str):
                    texts.append(inner["text"])
        text = "\n".join(texts) or None
    out: dict[str, Any] = {"role": role, "content": text}
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        made = []
        for c in calls:
            call = c.get("tool_call", {}) if isinstance(c, dict) else {}
            function = call.get("function", {}) if isinstance(call, dict) else {}
            made.append(_call(call.get("id"), function.get("name"), function.get("arguments")))
        if made:
            out["tool_calls"] = made
    if role == "tool":
        out["tool_call_id"] = str(message.get("tool_call_id") or "")
        out["content"] = text or ""
    return out


# Tools ---------------------------------------------------------------------------------------


def tool_definitions(span: Span, logs: Sequence[LogRecord] = ()) -> list[dict[str, Any]] | None:
    """The tools a chat span offered, in the chat-completions shape; None: not recorded."""
    value = content(span, "gen_ai.tool.definitions", logs)
    if isinstance(value, list):
        return [t for t in (_definition(d) for d in value) if t is not None]
    flat = _unflatten(span.attributes, "llm.tools.")
    if flat:
        tools = []
        for item in flat:
            schema = (
                _decoded((item.get("tool") or {}).get("json_schema"))
                if isinstance(item, dict)
                else None
            )
            tool = _definition(schema)
            if tool is not None:
                tools.append(tool)
        return tools
    return None


def _definition(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    function = f if isinstance(f := value.get("function"), dict) else value
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return None
    out: dict[str, Any] = {"name": name}
    if isinstance(function.get("description"), str):
        out["description"] = function["description"]
    parameters = _decoded(function.get("parameters"))
    out["parameters"] = parameters if isinstance(parameters, dict) else {"type": "object"}
    return {"type": "function", "function": out}


def tool_step(span: Span) -> dict[str, Any]:
    """A tool span's name, call id, arguments, result and error."""
    attrs = span.attributes
    name = attrs.get("gen_ai.tool.name") or attrs.get("tool.name")
    if not isinstance(name, str) or not name:
        name = span.name.removeprefix("execute_tool ").removeprefix("running tool ")
    call_id = attrs.get("gen_ai.tool.call.id") or attrs.get("tool_call.id")
    args = _first_present(
        attrs, "gen_ai.tool.call.arguments", "tool.parameters_value", "input.value"
    )
    result = _first_present(attrs, "gen_ai.tool.call.result", "output.value")
    result = _decoded(result)
    message = _langchain_message(result)
    if message is not None:  # LangChain's ToolMessage, serialized: its content is the result
        result = message.get("content")
        if not call_id and isinstance(message.get("tool_call_id"), str):
            call_id = message["tool_call_id"]
    return {
        "name": name,
        "call_id": call_id if isinstance(call_id, str) and call_id else None,
        "args": _decoded(args) if args is not None else {},
        "result": result,
        "error": error_of(span),
    }


def _langchain_message(value: Any) -> dict[str, Any] | None:
    """A LangChain message as OpenInference serializes it (`{"type": ..., "data": {...}}`)."""
    if isinstance(value, dict) and isinstance(data := value.get("data"), dict) and "type" in value:
        return data
    return None


def tool_from_span(span: Span) -> dict[str, Any] | None:
    """A tool's definition rebuilt from a tool span (name, description, schema), so a replay
    offers the model the same tools when no chat span listed them."""
    step = tool_step(span)
    attrs = span.attributes
    schema = _decoded(attrs.get("gen_ai.tool.json_schema") or attrs.get("tool.parameters"))
    description = attrs.get("gen_ai.tool.description") or attrs.get("tool.description")
    return _definition(
        {"name": step["name"], "description": description, "parameters": schema}
        if isinstance(description, str)
        else {"name": step["name"], "parameters": schema}
    )


def _first_present(attrs: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        if attrs.get(key) is not None:
            return attrs[key]
    return None


def final_output(span: Span, logs: Sequence[LogRecord] = ()) -> str | None:
    """What an agent span says its run answered (pydantic-ai's `final_result`, OpenInference's
    `output.value`, GenAI output messages)."""
    attrs = span.attributes
    for key in ("final_result", "output.value"):
        value = attrs.get(key)
        if value is None:
            continue
        state = _decoded(value)
        if (
            isinstance(state, dict)
            and isinstance(state.get("messages"), list)
            and state["messages"]
        ):
            last = _langchain_message(state["messages"][-1]) or state["messages"][-1]
            if isinstance(last, dict) and isinstance(said := last.get("content"), str):
                return said  # a LangGraph state: its last message is the answer
        return value if isinstance(value, str) else _json(value)
    message = output_message(span, logs)
    if message is not None and isinstance(said := message.get("content"), str):
        return said
    return None


def agent_prompt(span: Span) -> str | None:
    """The input an agent span names (OpenInference's `input.value`), when no chat said it."""
    value = span.attributes.get("input.value")
    return value if isinstance(value, str) and value else None
