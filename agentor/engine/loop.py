"""The async agent loop: ask the model, run the tools it asks for, record every step.

Every event is saved (off the event loop) before listeners see it, so what a stream shows
is what a resume will find. A cancelled loop writes nothing more: the run is left
interrupted and resumable.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from .events import (
    GENERATION,
    MESSAGE,
    RUN_END,
    TEXT_DELTA,
    TOOL_CALL,
    TOOL_RESULT,
    TOOL_WAIT,
    Event,
    Usage,
)
from .models import Model, ModelError
from .replay import (
    Recorded,
    ResumePoint,
    assistant_message,
    call_parts,
    canonical_args,
    tool_message,
)
from .statuses import COMPLETED, FAILED, MAX_TURNS
from .store import BatchStore, Store
from .tools import Tool, ToolArgumentsError

log = logging.getLogger("agentor")

Listener = Callable[[Event], None]


@dataclass
class Recorder:
    """Saves a run's events to its store (if any) and hands them to listeners."""

    run_id: str | None
    store: Store | None
    events: list[Event] = field(default_factory=list)
    listeners: list[Listener] = field(default_factory=list)
    save_failures: int = 0
    _saving: set[asyncio.Future[None]] = field(default_factory=set)
    _held: Event | None = None

    def hold(self, event: Event) -> None:
        """Save `event` (a resume's run_start) with the next durable event, not before: a
        resume stopped before it has anything to record leaves the log as it found it (no
        empty segment). It is announced after that save, like any other event."""
        if event.ts is None:
            event.ts = time.time()
        self._held = event

    async def emit(self, *events: Event) -> None:
        now = time.time()
        for e in events:
            if e.ts is None:
                e.ts = now
        durable = [e for e in events if not e.transient]
        if durable and self._held is not None:
            events = (self._held, *events)
            durable.insert(0, self._held)
            self._held = None
        if durable and self.store is not None and self.run_id is not None:
            # Shielded: a cancelled run still finishes the save it started (`drain`).
            saving = asyncio.get_running_loop().run_in_executor(None, self._save, durable)
            self._saving.add(saving)
            saving.add_done_callback(self._saving.discard)
            await asyncio.shield(saving)
        self.events.extend(durable)
        for e in events:
            for listener in self.listeners:
                listener(e)

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait for saves still under way. Called before the run's lock is let go: a cancelled
        `emit` leaves its save running, and that write must land while the run is still
        held (never after another process may have taken it); the event is kept, too."""
        if self._saving:
            await asyncio.wait(set(self._saving), timeout=timeout)

    def _save(self, events: list[Event]) -> None:
        assert self.store is not None and self.run_id is not None
        try:
            if isinstance(self.store, BatchStore):
                self.store.append_many(self.run_id, events)
            else:
                for e in events:
                    self.store.append(self.run_id, e)
        except Exception as exc:
            # Best effort: the run carries on; it may not be resumable from this point.
            self.save_failures += 1
            log.error(
                "run %s: could not save %s event: %s",
                self.run_id,
                "/".join(e.type for e in events),
                exc,
                exc_info=True,
            )


@dataclass
class LoopOutcome:
    status: str
    final_output: str | None
    messages: list[dict[str, Any]]
    error: str | None = None


async def run_loop(
    *,
    model: Model,
    tools: Sequence[Tool],
    recorder: Recorder,
    point: ResumePoint,
    max_turns: int,
    stream_text: bool = False,
    config: str | None = None,
) -> LoopOutcome:
    """Run turns from `point` until a final answer, an error or `max_turns` new turns.

    `config` names the tools and settings recorded on the segment's run_start
    (engine/request.py); each generation carries it."""
    by_name = {t.name: t for t in tools}
    schemas = [t.schema for t in tools]
    recorded = list(point.recorded)
    messages = list(point.messages)
    turn = point.turn
    usage = Usage()

    async def finish(status: str, text: str | None, error: str | None = None) -> LoopOutcome:
        if status == COMPLETED:
            await recorder.emit(Event(MESSAGE, text=text or "", turn=turn, usage=usage))
            messages.append({"role": "assistant", "content": text})
        await recorder.emit(
            Event(
                RUN_END,
                status=status,
                text=text,
                error=error,
                turn=turn,
                usage=usage,
                ended_at=time.time(),
            )
        )
        return LoopOutcome(status, text, messages, error)

    if point.final_text is not None:
        return await finish(COMPLETED, point.final_text)

    on_text = None
    if stream_text:

        def on_text(delta: str) -> None:
            for listener in recorder.listeners:
                listener(Event(TEXT_DELTA, text=delta, turn=turn, ts=time.time()))

    for _ in range(max_turns):
        turn += 1
        started = time.time()
        try:
            response = await model.generate(messages, schemas, on_text)
        except ModelError as exc:
            return await finish(FAILED, None, str(exc))
        except Exception as exc:  # a custom model's bug fails the run, it does not crash it
            return await finish(FAILED, None, f"{type(exc).__name__}: {exc}")
        usage = usage + response.usage
        gen = Event(
            GENERATION,
            turn=turn,
            usage=response.usage,
            model=model.name,
            config=config,
            messages=list(messages),
            calls=response.calls or None,
            text=response.text,
            started_at=started,
            ended_at=time.time(),
        )
        if not response.calls:
            await recorder.emit(gen)
            return await finish(COMPLETED, response.text or "")
        calls = [call_parts(c) for c in response.calls]
        await recorder.emit(
            gen,
            *(
                Event(TOOL_CALL, name=name, args=_args_for_log(raw), call_id=cid, turn=turn)
                for cid, name, raw in calls
            ),
        )
        results = await _all_answered(
            [_answer(cid, name, raw, by_name, recorded, recorder, turn) for cid, name, raw in calls]
        )
        messages.append(assistant_message(gen))
        messages.extend(tool_message(cid, r) for (cid, _, _), r in zip(calls, results, strict=True))
    return await finish(MAX_TURNS, None, f"Reached max_turns ({max_turns}) without a final answer.")


async def _all_answered(answers: list[Coroutine[Any, Any, Event]]) -> list[Event]:
    """One generation's calls, run concurrently. When one stops (the run is cancelled) the
    others are stopped too, and waited for: `gather` alone would return as soon as an async
    call is cancelled, while a sync call's thread is still running unrecorded."""
    tasks = [asyncio.ensure_future(a) for a in answers]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        while not all(task.done() for task in tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait(tasks)
        raise


def _args_for_log(raw: str) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except (ValueError, RecursionError):  # a hostile model may nest arguments 100,000 deep
        return raw


async def _answer(
    call_id: str,
    name: str,
    raw: str,
    by_name: dict[str, Tool],
    recorded: list[Recorded],
    recorder: Recorder,
    turn: int,
) -> Event:
    """Answer one call: from a recorded result if an equal call has one, else run the tool."""
    started = time.time()
    args_log = _args_for_log(raw)
    result = Event(
        TOOL_RESULT, name=name, args=args_log, call_id=call_id, turn=turn, started_at=started
    )
    key = canonical_args(raw)
    match = next((r for r in recorded if r.name == name and r.args_key == key), None)
    if match is not None:
        recorded.remove(match)
        result.result = match.event.result
        result.replayed_from = match.event.call_id
    else:
        tool = by_name.get(name)
        if tool is None:
            result.error = f"unknown tool {name!r}; available: {', '.join(by_name) or 'none'}"
        else:
            try:
                args = tool.parse_args(raw)
            except ToolArgumentsError as exc:
                result.error = str(exc)
            else:
                stopped = await _invoke(tool, args, result, recorder)
                if stopped:
                    # Cancelled while its thread ran: the result is recorded first, so the
                    # next resume replays it; then the run stops as it was asked to.
                    result.ended_at = time.time()
                    await recorder.emit(result)
                    raise asyncio.CancelledError
    result.ended_at = time.time()
    await recorder.emit(result)
    return result


async def _invoke(tool: Tool, args: dict[str, Any], result: Event, recorder: Recorder) -> bool:
    """Run the tool into `result` (its value, or its error). True when the run was cancelled
    while a sync tool's thread ran.

    An async tool is cancelled with the run. A thread cannot be interrupted, and the run must
    not be let go while it runs (a resume would run the same call again beside it): a cancelled
    run waits for the thread, however often it is cancelled meanwhile, telling its listeners
    what it waits for (a transient `tool_wait` event)."""
    if tool.is_async:
        try:
            result.result = _loggable(await tool.fn(**args))
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"
        return False
    call = functools.partial(contextvars.copy_context().run, tool.fn, **args)
    thread = asyncio.get_running_loop().run_in_executor(None, call)
    stopped = False
    while not thread.done():
        try:
            await asyncio.shield(thread)
        except asyncio.CancelledError:
            if not stopped and not thread.done():
                wait = Event(TOOL_WAIT, name=result.name, call_id=result.call_id, turn=result.turn)
                await recorder.emit(wait)
            stopped = True
        except Exception:
            break
    exc = thread.exception()
    if exc is None:
        result.result = _loggable(thread.result())
    else:
        result.error = f"{type(exc).__name__}: {exc}"
    return stopped


def _loggable(value: Any) -> Any:
    """A tool's return value as it is logged and shown to the model."""
    if isinstance(value, str):
        return value
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return str(value)
