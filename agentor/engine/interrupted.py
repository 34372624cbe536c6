"""Tool calls whose outcome a crash hid: what a tool says a crash during its call means, the
`tool_start` record that lets a resume tell, and the pause that follows.

A tool's `on_interrupt` is "rerun" (a call without a recorded result is simply run again: the
default for function tools, as upstream Agentor does) or "ask" (the default for MCP tools and
for every call a person approved: they approved one side effect, not two). Before an "ask"
call runs, the engine saves a `tool_start` event:

    tool_start  {name, call_id, args, turn, server?, pid, host, ts}

A resume that finds a `tool_start` with no `tool_result` after it does not run the call: it
records an `approval_request` for it, with `reason` OUTCOME_UNKNOWN and the start's time,
host and process (`started_at`, `host`, `pid`), and the run pauses `awaiting_approval`. A
person then runs it again (`approve`), gives the result it had (`approve(result=...)`: recorded
as the tool's result, never executed) or tells the model it failed (`reject`).
"""

from __future__ import annotations

import os
import socket
from typing import Any

from agentor.engine.events import APPROVAL_REQUEST, TOOL_START, Event

RERUN = "rerun"
ASK = "ask"
ON_INTERRUPT = (RERUN, ASK)
OUTCOME_UNKNOWN = "interrupted while running: outcome unknown"


def check_on_interrupt(value: object) -> str | None:
    """A tool's `on_interrupt`: "rerun", "ask", or None (its kind's default)."""
    if value is None or value in ON_INTERRUPT:
        return value
    raise ValueError(f"on_interrupt takes 'rerun' or 'ask'; got {value!r}")


def asks_after_crash(tool: Any, approved: bool) -> bool:
    """Whether a crash during this call waits for a person: the tool's own `on_interrupt`,
    else "ask" for a call a person approved."""
    policy: str | None = getattr(tool, "on_interrupt", None)
    if policy is None:
        return approved
    return policy == ASK


def start_event(result: Event) -> Event:
    """The `tool_start` saved before an "ask" call runs (`result` is its result to be)."""
    return Event(
        TOOL_START,
        name=result.name,
        call_id=result.call_id,
        args=result.args,
        turn=result.turn,
        server=result.server,
        pid=os.getpid(),
        host=socket.gethostname(),
    )


def interrupted_request(start: Event, turn: int | None) -> Event:
    """The `approval_request` a resume records for a call started and never answered."""
    return Event(
        APPROVAL_REQUEST,
        name=start.name,
        call_id=start.call_id,
        args=start.args,
        turn=turn,
        server=start.server,
        reason=OUTCOME_UNKNOWN,
        started_at=start.ts,
        pid=start.pid,
        host=start.host,
    )
