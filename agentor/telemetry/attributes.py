"""The attributes of each span (agentor.telemetry.spans makes the spans): the OpenTelemetry
GenAI semantic conventions, and beside them what Phoenix (OpenInference:
`openinference.span.kind`, `llm.*`, `session.id`) and Langfuse (`langfuse.observation.type`,
`langfuse.session.id`, usage and cost details) read, so that each shows a run well. Ours are
under `agentor.`.

Content (the messages of a request, a tool's arguments and result, a final answer, a note of a
decision) is only written when asked for (`content=True`): the conventions keep it off by
default, and it is what a trace should not carry by accident. Costs are priced from the
TUI's table (agentor.ops.pricing), in US dollars.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from agentor.engine.events import Event, Usage
from agentor.engine.history import call_parts, first_user_text
from agentor.engine.statuses import DIVERGED, MAX_TURNS
from agentor.telemetry.ids import span_id_of


class RunSpans(Protocol):
    """What the attributes read of the run being made into spans (spans.RunSpans)."""

    run_id: str
    session: str
    content: bool


class Segment(Protocol):
    """What they read of a segment (spans.Segment)."""

    line: int
    start_event: Event
    number: int
    usage: Usage
    cost: float | None
    links: tuple[tuple[str, int], ...]


# OpenInference span kinds (Phoenix) and Langfuse observation types, by our operation.
_KINDS = {
    "invoke_agent": ("AGENT", "agent"),
    "chat": ("LLM", "generation"),
    "execute_tool": ("TOOL", "tool"),
    "await_approval": ("GUARDRAIL", "guardrail"),
}
_ERROR_TYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def _common(spans: RunSpans, operation: str) -> dict[str, Any]:
    kind, observation = _KINDS[operation]
    return {
        "gen_ai.operation.name": operation,
        "gen_ai.conversation.id": spans.run_id,
        "openinference.span.kind": kind,
        "langfuse.observation.type": observation,
        "session.id": spans.session,
        "langfuse.session.id": spans.session,
        "agentor.run_id": spans.run_id,
    }


def agent(spans: RunSpans, seg: Segment, end: Event | None) -> dict[str, Any]:
    """invoke_agent {agent}: one segment of the run."""
    start = seg.start_event
    out = _common(spans, "invoke_agent")
    out["gen_ai.agent.name"] = start.agent or "agent"
    out["langfuse.trace.name"] = start.agent or "agent"
    out["agentor.segment"] = seg.number
    out["agentor.line"] = seg.line
    out["agentor.status"] = (end.status or "failed") if end is not None else "interrupted"
    _model(out, start.model)
    _usage(out, seg.usage, seg.cost)
    for key, value in (("agentor.host", start.host), ("agentor.pid", start.pid)):
        if value is not None:
            out[key] = value
    if spans.session != spans.run_id:
        out["agentor.lineage_root"] = spans.session
    if seg.links and seg.number == 1 and seg.links[0][0] != spans.run_id:
        # Also as attributes: the link says it to OpenTelemetry, and not every backend keeps
        # links (Phoenix does not).
        parent, line = seg.links[0]
        out["agentor.forked_from"], out["agentor.fork_line"] = parent, line
        out["agentor.forked_from_span"] = format(span_id_of(parent, line), "016x")
    if spans.content:
        prompt = first_user_text(start.messages)
        if prompt is not None:
            out["input.value"] = prompt
        if end is not None and end.text is not None:
            out["output.value"] = end.text
    return out


def chat(
    spans: RunSpans, e: Event, segment_model: str | None, cost: float | None
) -> dict[str, Any]:
    """chat {model}: one generation."""
    out = _common(spans, "chat")
    requested = segment_model or e.model
    answered = e.model or segment_model
    _model(out, requested)
    if answered:
        out["gen_ai.response.model"] = answered
    out["gen_ai.response.finish_reasons"] = ["tool_calls" if e.calls else "stop"]
    if e.turn is not None:
        out["agentor.turn"] = e.turn
    if e.usage is not None:
        _usage(out, e.usage, cost)
    if spans.content:
        if e.messages is not None:
            out["gen_ai.input.messages"] = _dumps([_message(m) for m in e.messages])
            out["input.value"] = _dumps(e.messages)
            out["input.mime_type"] = "application/json"
        output = _output_message(e)
        out["gen_ai.output.messages"] = _dumps([output])
        out["output.value"] = e.text if e.text is not None and not e.calls else _dumps(e.calls)
    return out


def tool(spans: RunSpans, result: Event | None, call: Event | None) -> dict[str, Any]:
    """execute_tool {tool}: one call, with its result (None: it got none)."""
    e = result or call
    assert e is not None
    out = _common(spans, "execute_tool")
    out["gen_ai.tool.name"] = e.name or "unknown"
    out["tool.name"] = e.name or "unknown"
    # The conventions' types: "function", a tool the agent's side runs itself (our function
    # tools, in the process); "extension", one it runs by calling an external API; "datastore",
    # retrieval. An MCP tool is run by its server, which the agent calls (over stdio or HTTP):
    # an extension. The MCP conventions (gen-ai/mcp.md) take such a call's span to be an
    # execute_tool span and name no other type for it.
    out["gen_ai.tool.type"] = "extension" if e.server else "function"
    if e.server:
        out["agentor.mcp.server"] = e.server
    if e.call_id:
        out["gen_ai.tool.call.id"] = e.call_id
    if e.turn is not None:
        out["agentor.turn"] = e.turn
    if result is not None and result.replayed_from:
        out["agentor.replayed_from"] = result.replayed_from
    if result is not None and result.by:
        # A person gave the result of a call a crash interrupted (`g`, `approve --result`):
        # the tool did not run for it.
        out["agentor.tool.result_given_by"] = result.by
    if spans.content:
        if e.args is not None:
            out["gen_ai.tool.call.arguments"] = _text(e.args)
            out["input.value"] = _text(e.args)
        if result is not None:
            answer = result.result if result.error is None else f"Error: {result.error}"
            out["gen_ai.tool.call.result"] = _text(answer)
            out["output.value"] = _text(answer)
    return out


def approval(spans: RunSpans, request: Event, decision: Event) -> dict[str, Any]:
    """await_approval {tool}: from the request to the person's decision."""
    out = _common(spans, "await_approval")
    out["gen_ai.tool.name"] = request.name or decision.name or "unknown"
    if request.call_id:
        out["gen_ai.tool.call.id"] = request.call_id
    out["agentor.approval.decision"] = decision.decision or "unknown"
    if decision.by:
        out["agentor.approval.by"] = decision.by
    decided = decision.ts or decision.ended_at
    if decided is not None:
        out["agentor.approval.decided_at"] = decided
    if request.deadline is not None:
        out["agentor.approval.deadline"] = request.deadline
    if "args" in decision.to_dict():
        out["agentor.approval.edited"] = True
    if spans.content and decision.note:
        out["agentor.approval.note"] = decision.note
    return out


def segment_error(end: Event | None) -> tuple[str | None, str | None]:
    """error.type and message of a segment that ended so (None: its writer died)."""
    if end is None:
        return "interrupted", "the process running the segment stopped before its end"
    status = end.status or "failed"
    if status == "failed":
        return error_type(end.error or "failed"), end.error or "failed"
    if status == MAX_TURNS:
        return MAX_TURNS, end.error or "stopped by max_turns"
    if status == DIVERGED:  # a replay stopped at a call its recording has no answer for
        return DIVERGED, end.error or "diverged from its recording"
    return None, None


def tool_error_message(text: str, content: bool) -> str:
    """A tool's error as its span's status says it. A person's rejection ("rejected by bob:
    REASON") without its reason unless content was asked for: the reason is a note, as the
    approval's is."""
    if content or error_type(text) != "rejected":
        return text
    return text.split(":", 1)[0]


def error_type(text: str) -> str:
    """The class of an error as the log words it ("APIConnectionError: ..." ->
    "APIConnectionError"), else "error": error.type is a low-cardinality name."""
    head = text.split(":", 1)[0].strip()
    if head.startswith("rejected by"):
        return "rejected"
    return head if _ERROR_TYPE.fullmatch(head) and len(head) <= 64 else "error"


def generation_cost(e: Event, model: str | None) -> float | None:
    """What the generation cost, from the TUI's price table (None: unknown, never 0)."""
    from agentor.ops.pricing import cost_of

    cost = cost_of(e.usage, model, at=e.started_at or e.ts)
    return None if cost is None else float(cost)


def _model(out: dict[str, Any], model: str | None) -> None:
    if not model:
        return
    from agentor.ops.pricing import provider_of

    out["gen_ai.request.model"] = model
    out["llm.model_name"] = model
    out["langfuse.observation.model.name"] = model
    provider = provider_of(model)
    if provider is not None:
        out["gen_ai.provider.name"] = provider
        out["llm.provider"] = provider


def _usage(out: dict[str, Any], usage: Usage, cost: float | None) -> None:
    out["gen_ai.usage.input_tokens"] = usage.input_tokens
    out["gen_ai.usage.output_tokens"] = usage.output_tokens
    out["llm.token_count.prompt"] = usage.input_tokens
    out["llm.token_count.completion"] = usage.output_tokens
    out["llm.token_count.total"] = usage.input_tokens + usage.output_tokens
    out["langfuse.observation.usage_details"] = _dumps(
        {"input": usage.input_tokens, "output": usage.output_tokens}
    )
    if cost is not None:
        out["gen_ai.usage.cost"] = cost
        out["llm.cost.total"] = cost
        out["langfuse.observation.cost_details"] = _dumps({"total": cost})


def _message(m: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-shaped message as the conventions' `gen_ai.input.messages` item."""
    role = m.get("role") if isinstance(m.get("role"), str) else "user"
    parts: list[dict[str, Any]] = []
    content = m.get("content")
    if role == "tool":
        parts.append(
            {"type": "tool_call_response", "id": m.get("tool_call_id"), "response": content}
        )
    elif isinstance(content, str):
        parts.append({"type": "text", "content": content})
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append({"type": "text", "content": part["text"]})
    for call in m.get("tool_calls") or ():
        if isinstance(call, dict):
            parts.append(_call_part(call))
    return {"role": role, "parts": parts}


def _output_message(e: Event) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if e.text is not None:
        parts.append({"type": "text", "content": e.text})
    parts += [_call_part(c) for c in e.calls or ()]
    reason = "tool_call" if e.calls else "stop"
    return {"role": "assistant", "parts": parts, "finish_reason": reason}


def _call_part(call: dict[str, Any]) -> dict[str, Any]:
    call_id, name, raw = call_parts(call)
    try:
        arguments: Any = json.loads(raw) if raw else None
    except ValueError:
        arguments = raw
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else _dumps(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
