"""`RunResult`: what a run, a resume or a settled log gives back."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agentor.engine.approval.pending import PendingCall, gated_turn
from agentor.engine.events import Event, Usage
from agentor.engine.history import (
    assistant_message,
    last_run_end,
    resume_point,
    segments,
    status,
    total_usage,
)
from agentor.engine.loop import Listener
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED, DIVERGED
from agentor.engine.structured import OutputSpec, failed_on_output
from agentor.errors import OutputValidationError


@dataclass
class RunResult:
    run_id: str | None
    # The answer's text; the parsed model when the agent has an `output_type`.
    final_output: Any
    status: str
    events: list[Event] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    messages: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    # Writes to the store that failed during this call (each logged on the `agentor` logger):
    # when non-zero the log may be missing steps and the run may not resume from it.
    save_failures: int = 0
    # With status "awaiting_approval": the calls waiting for a person's decision.
    pending: list[PendingCall] = field(default_factory=list)

    def __repr__(self) -> str:
        # Short on purpose: `asyncio.run()` reprs the value its task returned (restoring the
        # SIGINT handler), and a full repr grows with every message of every generation.
        return (
            f"RunResult(run_id={self.run_id!r}, status={self.status!r}, "
            f"final_output={_clip(self.final_output)!r}, events=<{len(self.events)}>, "
            f"messages=<{len(self.messages)}>, usage={self.usage!r}, error={self.error!r}, "
            f"save_failures={self.save_failures}, pending=<{len(self.pending)}>)"
        )


def _clip(text: Any, limit: int = 80) -> Any:
    if not isinstance(text, str) or len(text) <= limit:
        return text  # None, short, or a structured output (shown by its own repr)
    return text[:limit] + "…"


def settled(events: list[Event]) -> bool:
    """Whether a resume has nothing to do now: the run is completed, or is a replay that
    diverged (it stopped at a call its recording has no answer for), or it awaits approval
    and a call is still undecided."""
    state = status(events)
    if state in (COMPLETED, DIVERGED):
        return True
    return state == AWAITING_APPROVAL and bool(pending_now(events))


def pending_now(events: list[Event]) -> list[PendingCall]:
    turn = gated_turn(events)
    return [] if turn is None else turn.pending(time.time())


def from_log(run_id: str, events: list[Event], listener: Listener | None) -> RunResult:
    """A settled run (`settled`) as its log records it, nothing written: the listener (a
    stream) is handed the last segment's events again, marked `replayed`, so it shows the
    answer, or the calls waiting for a decision."""
    if listener is not None:
        for event in segments(events)[-1]:
            listener(event.replayed_copy())
    end = last_run_end(events)
    assert end is not None
    pending = pending_now(events) if end.status == AWAITING_APPROVAL else []
    turn = gated_turn(events) if pending else None
    if turn is not None:
        assert turn.generation.messages is not None
        messages = [*turn.generation.messages, assistant_message(turn.generation)]
    else:
        messages = resume_point(events).messages
    if end.text is not None:
        messages = [*messages, {"role": "assistant", "content": end.text}]
    return RunResult(
        run_id=run_id,
        final_output=end.text,
        status=end.status or COMPLETED,
        events=events,
        usage=total_usage(events),
        messages=messages,
        error=end.error,
        pending=pending,
    )


def structured_result(result: RunResult, output: OutputSpec | None) -> RunResult:
    """`result` as an agent with `output` (an `output_type`) gives it: a completed run's answer
    parsed; a run that failed on an invalid answer raised as `OutputValidationError` (a
    ValueError, as upstream's run raises)."""
    if output is None:
        return result
    if result.status == COMPLETED:
        result.final_output = output.parse(result.final_output, result.run_id)
        return result
    invalid = failed_on_output(result.events)
    if invalid is not None:
        raw = invalid.text or ""
        raise OutputValidationError(
            f"Model output did not match {output.name} (run {result.run_id}; resume it to ask "
            f"again): {invalid.error}\nRaw output: {raw[:500]}",
            result.run_id,
            raw,
        )
    return result
