"""Spans of any framework as runs: which spans make one run, and the events of each.

One run per agent invocation: an agent span (`invoke_agent`, OpenInference `AGENT`) owns the
chat and tool spans under it, found by walking up the tree through whatever spans a framework
puts between them (loop spans, chains). An agent span that owns no step and only holds other
agents' spans (the Agents SDK's "Agent workflow") is not a run of its own; an agent under
another agent's run is a run too, linked to its parent as a fork is (`run_start.forked_from`).
Steps with no agent span above them form one run of their trace.

While a run is still going its agent span has not arrived (a span is sent when it ends): its
steps' walk up stops at a span not received yet, and that span's id keys the run, as the agent
span will when it comes. So the run id, derived from the trace id and that key, is the same
before and after, and the same spans sent twice give the same run with the same events.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.collect import conventions as c
from agentor.collect.spans import LogRecord, Span
from agentor.engine.events import (
    GENERATION,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Usage,
)
from agentor.engine.history import canonical_args
from agentor.engine.statuses import COMPLETED, FAILED

# The note a run gets when its spans carry no content, by what emitted them.
_CONTENT_HINTS = (
    ("pydantic", "pydantic-ai sends content unless InstrumentationSettings(include_content=False)"),
    ("openinference", "unset OPENINFERENCE_HIDE_INPUTS and OPENINFERENCE_HIDE_OUTPUTS"),
    ("", "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true in the agent's process"),
)


@dataclass
class CollectedRun:
    """One agent run read from spans: its id and its events, in log order."""

    run_id: str
    events: list[Event]
    finished: bool
    parent: str | None = None


@dataclass
class _Group:
    key: str  # the agent span's id, a missing ancestor's id, or "" for the trace's own run
    agent: Span | None = None
    steps: list[Span] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    owner: str | None = None  # the key of the agent group above this agent, if any


def run_id_for(trace_id: str, key: str) -> str:
    """The run id of the run keyed `key` in trace `trace_id`: the same wherever it is derived."""
    return hashlib.sha256(f"otlp:{trace_id}:{key}".encode()).hexdigest()[:32]


def runs_from_spans(
    spans: Iterable[Span], logs: Iterable[LogRecord] = ()
) -> tuple[list[CollectedRun], int]:
    """The runs the spans make, and how many spans were not an agent's (dropped)."""
    traces: dict[str, dict[str, Span]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, {})[span.span_id] = span
    by_span: dict[tuple[str, str], list[LogRecord]] = {}
    for record in logs:
        by_span.setdefault((record.trace_id, record.span_id), []).append(record)
    runs: list[CollectedRun] = []
    dropped = 0
    for trace_id, index in traces.items():
        trace_runs, trace_dropped = _trace_runs(trace_id, index, by_span)
        runs.extend(trace_runs)
        dropped += trace_dropped
    return runs, dropped


def _trace_runs(
    trace_id: str, index: dict[str, Span], logs: dict[tuple[str, str], list[LogRecord]]
) -> tuple[list[CollectedRun], int]:
    kinds = {sid: c.kind_of(span) for sid, span in index.items()}
    groups: dict[str, _Group] = {}
    dropped = 0
    for sid, span in index.items():
        kind = kinds[sid]
        if kind is None:
            dropped += 1
            continue
        owner = _owner(span, index, kinds)
        if kind == c.AGENT:
            group = groups.setdefault(sid, _Group(sid))
            group.agent, group.owner = span, owner
            if owner is not None:
                groups.setdefault(owner, _Group(owner)).children.append(sid)
        else:
            key = owner if owner is not None else ""
            groups.setdefault(key, _Group(key)).steps.append(span)
    runs = []
    for group in groups.values():
        if group.agent is not None and not group.steps and group.children:
            continue  # a wrapper around other agents: not a run of its own
        parent = _parent_run(group, groups)
        runs.append(_run(trace_id, group, parent, logs))
    return runs, dropped


def _owner(span: Span, index: dict[str, Span], kinds: dict[str, str | None]) -> str | None:
    """The key of the run a span belongs to: its nearest agent ancestor, else the first
    ancestor not received yet (an agent span still running), else None (the trace's run)."""
    seen = {span.span_id}
    parent = span.parent_id
    while parent is not None and parent not in seen:
        above = index.get(parent)
        if above is None or kinds.get(parent) == c.AGENT:
            return parent
        seen.add(parent)
        parent = above.parent_id
    return None


def _parent_run(group: _Group, groups: dict[str, _Group]) -> str | None:
    """The key of the run an agent's run hangs under: its owner, skipping wrappers."""
    owner = group.owner
    while owner is not None:
        above = groups.get(owner)
        if above is None or above.steps or above.agent is None or not above.children:
            return owner
        owner = above.owner
    return None


def _run(
    trace_id: str,
    group: _Group,
    parent_key: str | None,
    logs: dict[tuple[str, str], list[LogRecord]],
) -> CollectedRun:
    steps = sorted(group.steps, key=lambda s: (s.start_ns, s.end_ns, s.span_id))
    chats = [s for s in steps if c.kind_of(s) == c.CHAT]
    run_id = run_id_for(trace_id, group.key)
    parent = run_id_for(trace_id, parent_key) if parent_key is not None else None
    events = [_run_start(trace_id, group, chats, steps, parent, logs)]
    turn = 0
    usage = Usage()
    last_text: str | None = None
    asked: list[dict[str, Any]] = []  # the last generation's calls no tool span answered yet
    for step in steps:
        step_logs = logs.get(step.key, [])
        if c.kind_of(step) == c.CHAT:
            turn += 1
            generation = _generation(step, turn, step_logs)
            if generation.usage is not None:
                usage = usage + generation.usage
            last_text = generation.text if generation.text is not None else last_text
            asked = list(generation.calls or [])
            events.append(generation)
        else:
            events.extend(_tool_events(step, turn, asked))
    finished = group.agent is not None or group.key == ""
    if finished:
        events.append(_run_end(group, steps, turn, usage, last_text, logs))
    return CollectedRun(run_id, events, finished, parent)


def _run_start(
    trace_id: str,
    group: _Group,
    chats: Sequence[Span],
    steps: Sequence[Span],
    parent: str | None,
    logs: dict[tuple[str, str], list[LogRecord]],
) -> Event:
    agent = group.agent
    # What a run's first event says is read from its steps first: they come before the agent
    # span (a span is sent when it ends), and the run's opening must not change when it comes.
    first = steps[0] if steps else agent
    assert first is not None, "a group has an agent span or a step"
    started = first.start
    messages = _opening_messages(agent, chats, logs)
    tools = _tools(chats, steps, logs)
    source: dict[str, Any] = {"kind": "otlp", "trace_id": trace_id}
    if group.key:
        source["span_id"] = group.key
    framework = first.scope or str(first.resource.get("telemetry.sdk.name") or "")
    if framework:
        source["framework"] = framework
    if first.scope_version:
        source["framework_version"] = first.scope_version
    service = first.resource.get("service.name")
    if isinstance(service, str) and service:
        source["service"] = service
    extra: dict[str, Any] = {"source": source}
    note = None
    if chats and all(c.input_messages(s, logs.get(s.key, [])) is None for s in chats):
        note = "the spans carry no content: " + _content_hint(framework)
    name = next((n for n in (c.step_agent_name(s) for s in steps) if n), None)
    if name is None and agent is not None:
        name = c.agent_name(agent)
    model = next((m for m in (c.model_of(s) for s in chats) if m), None)
    if model is None and agent is not None:
        model = c.model_of(agent)
    return Event(
        RUN_START,
        run_id=run_id_for(trace_id, group.key),
        agent=name or "(no agent span)",
        model=model,
        started_at=started,
        ts=started,
        v=1,
        forked_from=parent,
        tools=tools,
        messages=messages,
        note=note,
        extra=extra,
    )


def _content_hint(framework: str) -> str:
    lowered = framework.lower()
    return next(hint for marker, hint in _CONTENT_HINTS if marker in lowered)


def _opening_messages(
    agent: Span | None, chats: Sequence[Span], logs: dict[tuple[str, str], list[LogRecord]]
) -> list[dict[str, Any]] | None:
    """The instructions and the first prompt: what the first chat was sent, up to and with the
    first user message."""
    if chats:
        sent = c.input_messages(chats[0], logs.get(chats[0].key, []))
        if sent:
            cut = next((i for i, m in enumerate(sent) if m.get("role") == "user"), len(sent) - 1)
            return sent[: cut + 1]
    if agent is not None:
        prompt = c.agent_prompt(agent)
        if prompt is not None:
            return [{"role": "user", "content": prompt}]
    return None


def _tools(
    chats: Sequence[Span], steps: Sequence[Span], logs: dict[tuple[str, str], list[LogRecord]]
) -> list[dict[str, Any]] | None:
    for chat in chats:
        tools = c.tool_definitions(chat, logs.get(chat.key, []))
        if tools:
            return tools
    rebuilt: dict[str, dict[str, Any]] = {}
    for step in steps:
        if c.kind_of(step) == c.TOOL:
            tool = c.tool_from_span(step)
            if tool is not None:
                rebuilt.setdefault(tool["function"]["name"], tool)
    return list(rebuilt.values()) or None


def _generation(span: Span, turn: int, logs: Sequence[LogRecord]) -> Event:
    answer = c.output_message(span, logs) or {}
    text = answer.get("content")
    extra: dict[str, Any] = {}
    reasons = c.finish_reasons(span) or (
        [answer["finish_reason"]] if isinstance(answer.get("finish_reason"), str) else None
    )
    if reasons:
        extra["finish_reasons"] = reasons
    error = c.error_of(span)
    return Event(
        GENERATION,
        model=c.model_of(span),
        turn=turn,
        text=text if isinstance(text, str) else None,
        calls=answer.get("tool_calls") or None,
        usage=c.usage_of(span),
        error=error,
        started_at=span.start,
        ended_at=span.end,
        ts=span.end,
        messages=c.input_messages(span, logs),
        extra=extra,
    )


def _tool_events(span: Span, turn: int, asked: list[dict[str, Any]]) -> list[Event]:
    """A tool span's call and result. A span that names no call id (OpenInference's tool
    spans) answers the first call of its tool that the generation before it asked."""
    step = c.tool_step(span)
    answered = _answered_call(step, asked)
    call_id = step["call_id"] or (answered or {}).get("id") or f"span-{span.span_id}"
    if answered is not None and not isinstance(step["args"], dict):
        # A framework that records a tool's input as text (LangChain's single argument): the
        # arguments are the ones the model asked with.
        asked_args = c.decoded_json(answered.get("function", {}).get("arguments"))
        if isinstance(asked_args, dict):
            step["args"] = asked_args
    call = Event(
        TOOL_CALL,
        turn=turn,
        name=step["name"],
        call_id=call_id,
        args=step["args"],
        ts=span.start,
    )
    result = Event(
        TOOL_RESULT,
        turn=turn,
        name=step["name"],
        call_id=call_id,
        args=step["args"],
        result=step["result"],
        error=step["error"],
        started_at=span.start,
        ended_at=span.end,
        ts=span.end,
    )
    return [call, result]


def _answered_call(step: dict[str, Any], asked: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The asked call a tool span answers (taken off `asked`): the one it names, else the first
    of its tool with equal arguments, else the first of its tool."""
    wanted = step["call_id"]

    def same_tool(call: dict[str, Any]) -> bool:
        return bool(call.get("function", {}).get("name") == step["name"])

    def same_args(call: dict[str, Any]) -> bool:
        given = call.get("function", {}).get("arguments")
        return same_tool(call) and canonical_args(given) == canonical_args(step["args"])

    tests = [lambda call: call.get("id") == wanted] if wanted else [same_args, same_tool]
    for test in tests:
        for i, call in enumerate(asked):
            if test(call):
                return asked.pop(i)
    return None


def _run_end(
    group: _Group,
    steps: Sequence[Span],
    turn: int,
    usage: Usage,
    last_text: str | None,
    logs: dict[tuple[str, str], list[LogRecord]],
) -> Event:
    agent = group.agent
    if agent is not None:
        error = c.error_of(agent)
        output = c.final_output(agent, logs.get(agent.key, [])) or last_text
        ended = agent.end
    else:
        error = next((e for e in (c.error_of(s) for s in steps) if e), None)
        output = last_text
        ended = max(s.end for s in steps)
    return Event(
        RUN_END,
        turn=turn,
        status=FAILED if error else COMPLETED,
        error=error,
        text=output if not error else None,
        usage=usage,
        ended_at=ended,
        ts=ended,
    )
