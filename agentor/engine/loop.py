"""The async agent loop: ask the model, run the tools it asks for, record every step.

A call that needs a person's approval (agentor.engine.approval.gating) is not run: its
`approval_request` is saved with the generation, the turn's other calls run, and the segment
ends awaiting approval. A resume finishes that turn as decided, then goes on.

Every event is saved (off the event loop) before listeners see it, so what a stream shows
is what a resume will find. A cancelled loop writes nothing more: the run is left
interrupted and resumable.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentor.engine import fallback
from agentor.engine.approval.gating import Gate
from agentor.engine.approval.pending import Decision, GatedTurn, timeout_event
from agentor.engine.conversation import Conversation
from agentor.engine.events import (
    APPROVAL_REQUEST,
    GENERATION,
    MESSAGE,
    RUN_END,
    TEXT_DELTA,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Usage,
)
from agentor.engine.fork.recording import NOVEL_FIELD, Recording, drift_of
from agentor.engine.history import (
    Recorded,
    ResumePoint,
    assistant_message,
    call_parts,
    canonical_args,
    tool_message,
)
from agentor.engine.interrupted import asks_after_crash, interrupted_request, start_event
from agentor.engine.invoke import all_answered, invoke_tool
from agentor.engine.models import Model
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED, DIVERGED, FAILED, MAX_TURNS
from agentor.engine.store.api import BatchStore, Store, saves_in_memory
from agentor.engine.structured import OutputSpec, invalid_output_event, re_asks_left
from agentor.engine.toolfailures import DEFAULT_LIMIT, ToolFailures
from agentor.engine.tools import Tool
from agentor.errors import ModelError, RunLostError, ToolArgumentsError

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
    inline: bool = field(init=False)  # saved on the event loop: the store does no I/O
    # The store, when it saves several events in one write (None: one append an event).
    batches: BatchStore | None = field(init=False)

    def __post_init__(self) -> None:
        self.inline = saves_in_memory(self.store)
        # Asked once: a runtime-checkable protocol's isinstance costs ~10 us, at every save.
        self.batches = self.store if isinstance(self.store, BatchStore) else None

    def hold(self, event: Event) -> None:
        """Save `event` (a resume's run_start) with the next durable event, not before: a
        resume stopped before it has anything to record leaves the log as it found it (no
        empty segment). It is announced after that save, like any other event."""
        if event.ts is None:
            event.ts = time.time()
        self._held = event

    async def emit(self, *events: Event, stamp: bool = True) -> None:
        """Save `events` (with what is held), then announce them. Each is given the time now
        unless it has one, or unless `stamp` is False: copies (a fork's) keep what they had."""
        now = time.time()
        for e in events if stamp else ():
            if e.ts is None:
                e.ts = now
        durable = [e for e in events if not e.transient]
        if durable and self._held is not None:
            events = (self._held, *events)
            durable.insert(0, self._held)
            self._held = None
        if durable and self.store is not None and self.run_id is not None:
            if self.inline:  # no I/O to wait for: a thread's round trip would cost more
                self._save(durable)
            else:
                await self._save_in_thread(durable)
        self.events.extend(durable)
        for e in events:
            for listener in self.listeners:
                listener(e)

    async def _save_in_thread(self, durable: list[Event]) -> None:
        # Shielded: a cancelled run still finishes the save it started (`drain`).
        saving = asyncio.get_running_loop().run_in_executor(None, self._save, durable)
        self._saving.add(saving)
        saving.add_done_callback(self._saving.discard)
        await asyncio.shield(saving)

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait for saves still under way. Called before the run's lock is let go: a cancelled
        `emit` leaves its save running, and that write must land while the run is still
        held (never after another process may have taken it); the event is kept, too."""
        if self._saving:
            await asyncio.wait(set(self._saving), timeout=timeout)

    def _save(self, events: list[Event]) -> None:
        assert self.store is not None and self.run_id is not None
        try:
            if self.batches is not None:
                self.batches.append_many(self.run_id, events)
            else:
                for e in events:
                    self.store.append(self.run_id, e)
        except RunLostError:
            # Not a failed write to carry on past: another process owns the run now, and
            # whatever this one did next would be done twice. The run stops here.
            raise
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


@dataclass
class _Call:
    """One tool call of a turn, and how it is to be answered."""

    call_id: str
    name: str
    raw: str  # the arguments it runs with: the model's, or an approver's edit
    record: Recorded | None = None  # an equal call's recorded result answers it
    result: Event | None = None  # its result is in the log already
    rejection: str | None = None  # rejected (or novel in a replay): this error answers it
    awaiting: bool = False  # it waits for a person's decision: not answered in this segment
    approved: Decision | None = None  # a person approved it (or gave the result it had)
    novel: bool = False  # a replay's call its recording has no answer for
    diverged: bool = False  # ... which ends the replay (novel="stop"): nothing is answered


@dataclass(frozen=True)
class LoopSpec:
    """All a segment's loop runs with, known before its first turn.

    `model` is asked first and `fallbacks` in turn when its endpoint fails
    (agentor.engine.fallback);
    `tools` are the segment's (agentor.engine.toolset); `config` names the tools and settings
    recorded on the segment's run_start (agentor.engine.request), and each generation carries it.
    `point` is where the segment starts; `gated`, a turn that asked for approval, to finish
    (from `point`, the request of that turn) before any new one. `gate` says which calls wait
    for a person; `recording`: a replay's, which answers equal calls; `output`: the structured
    answer asked for (agentor.engine.structured); `max_tool_failures`: failed calls that withdraw a
    tool (agentor.engine.toolfailures); `stream_text`: the model's text is handed to the listeners
    as it comes, as transient `text_delta` events."""

    model: Model
    tools: Sequence[Tool]
    point: ResumePoint
    max_turns: int
    config: str | None = None
    fallbacks: Sequence[Model] = ()
    gate: Gate = field(default_factory=Gate)
    gated: GatedTurn | None = None
    recording: Recording | None = None
    output: OutputSpec | None = None
    max_tool_failures: int = DEFAULT_LIMIT
    stream_text: bool = False


async def run_loop(spec: LoopSpec, recorder: Recorder) -> LoopOutcome:
    """Run turns from `spec.point` until a final answer, an error, a call waiting for approval
    or `spec.max_turns` new turns, recording each step with `recorder`."""
    loop = _Loop(spec, recorder)
    if spec.point.final_text is not None:
        outcome = await loop.final_answer(spec.point.final_text)
        if outcome is not None:
            return outcome
    if spec.gated is not None:
        outcome = await loop.finish_gated_turn(spec.gated)
        if outcome is not None:
            return outcome
    for _ in range(spec.max_turns):
        outcome = await loop.next_turn()
        if outcome is not None:
            return outcome
    return await loop.finish(
        MAX_TURNS, None, f"Reached max_turns ({spec.max_turns}) without a final answer."
    )


class _Loop:
    """The state of a run's turns: the conversation so far, the turn, the usage."""

    def __init__(self, spec: LoopSpec, recorder: Recorder) -> None:
        self.models = [spec.model, *spec.fallbacks]
        self.by_name = {t.name: t for t in spec.tools}
        self.schemas = [t.schema for t in spec.tools]
        self.recorder = recorder
        self.recorded = list(spec.point.recorded)
        self.messages = Conversation(spec.point.messages)
        self.turn = spec.point.turn
        self.usage = Usage()
        self.config = spec.config
        self.gate = spec.gate
        self.on_text = self._streamed if spec.stream_text else None
        self.recording = spec.recording
        self.output = spec.output
        self.failures = ToolFailures.of(recorder.events, spec.max_tool_failures)

    def _streamed(self, delta: str) -> None:
        for listener in self.recorder.listeners:
            listener(Event(TEXT_DELTA, text=delta, turn=self.turn, ts=time.time()))

    async def finish(
        self, status: str, text: str | None, error: str | None = None, **fields: Any
    ) -> LoopOutcome:
        if status == COMPLETED:
            await self.recorder.emit(
                Event(MESSAGE, text=text or "", turn=self.turn, usage=self.usage)
            )
            self.messages.append({"role": "assistant", "content": text})
        end = Event(
            RUN_END,
            status=status,
            text=text,
            error=error,
            turn=self.turn,
            usage=self.usage,
            ended_at=time.time(),
            **fields,
        )
        await self.recorder.emit(end)
        return LoopOutcome(status, text, list(self.messages), error)

    async def final_answer(self, text: str) -> LoopOutcome | None:
        """The run's answer: it ends the run, unless it is not the structured output asked for
        (agentor.engine.structured): then it is recorded as invalid and, while retries are left, the
        model is asked again with what was wrong (None: the run goes on)."""
        invalid = self.output.check(text) if self.output is not None else None
        if invalid is None:
            return await self.finish(COMPLETED, text)
        assert self.output is not None
        await self.recorder.emit(invalid_output_event(self.turn, text, invalid))
        if not re_asks_left(self.recorder.events, self.output.retries):
            return await self.finish(FAILED, None, invalid.error)
        self.messages += [{"role": "assistant", "content": text}, invalid.correction]
        return None

    async def next_turn(self) -> LoopOutcome | None:
        """Ask the model, answer the calls it makes; an outcome when the run stops here."""
        self.turn += 1
        notices = self.failures.due(self.turn)
        if notices:  # tools withdrawn since the last request: the model is told, as upstream
            await self.recorder.emit(*notices)
            self.messages += [m for e in notices for m in e.messages or ()]
        started = time.time()
        try:
            response, answered_by, note = await fallback.generate(
                self.models, self.messages, self.failures.offered(self.schemas), self.on_text
            )
        except ModelError as exc:
            return await self.finish(FAILED, None, str(exc))
        except Exception as exc:  # a custom model's bug fails the run, it does not crash it
            return await self.finish(FAILED, None, f"{type(exc).__name__}: {exc}")
        self.usage = self.usage + response.usage
        gen = Event(
            GENERATION,
            turn=self.turn,
            usage=response.usage,
            model=answered_by.name,
            note=note,
            config=self.config,
            # The request as it was sent: a plain copy of the list (the conversation goes on),
            # its messages shared. A step of a turn that grows with the history besides
            # sending it, in C: ~2 us at 1,000 messages (bench/README.md, "long-run").
            messages=list(self.messages),
            calls=response.calls or None,
            text=response.text,
            started_at=started,
            ended_at=time.time(),
        )
        if self.failures.disabled:  # the tools not offered, beside the segment's record of them
            gen.extra["withdrawn"] = sorted(self.failures.disabled)
        if not response.calls:
            await self.recorder.emit(gen)
            return await self.final_answer(response.text or "")
        calls = [self._plan(*call_parts(c)) for c in response.calls]
        asked = [
            Event(
                TOOL_CALL,
                name=c.name,
                args=_args_for_log(c.raw),
                call_id=c.call_id,
                turn=self.turn,
                server=self._server(c.name),
            )
            for c in calls
        ]
        # One write: a generation is never on disk without its calls and their requests.
        await self.recorder.emit(gen, *asked, *self._requests(calls))
        return await self._answer_turn(gen, calls)

    async def finish_gated_turn(self, turn: GatedTurn) -> LoopOutcome | None:
        """Answer the calls of a turn that asked for approval, as decided (a deadline passed
        counts as rejected, and is recorded so); an outcome when some still wait."""
        now = time.time()
        timeouts = [timeout_event(call) for call in turn.expired(now)]
        if timeouts:
            await self.recorder.emit(*timeouts)
        decisions: dict[str, Decision | None] = dict(turn.decisions)
        decisions.update((e.call_id or "", Decision.of(e)) for e in timeouts)
        calls, interrupted = [], []
        for call_id, name, raw in map(call_parts, turn.generation.calls or []):
            call = _Call(call_id, name, raw, result=turn.results.get(call_id))
            call.novel = self.recording is not None  # a replay's gated call had no answer
            decided = decisions.get(call_id)
            request = turn.requests.get(call_id)
            if call.result is not None:
                pass
            elif call_id in turn.started:  # ran, and a crash hid what it did: ask a person
                call.awaiting = True
                interrupted.append(interrupted_request(turn.started[call_id], self.turn))
            elif decided is not None and decided.approved:
                call.approved = decided
                if decided.edited:
                    call.raw = json.dumps(decided.args, ensure_ascii=False)
                elif request is not None and request.started_at is not None:
                    call.raw = json.dumps(request.args, ensure_ascii=False)  # as it ran
            elif decided is not None:
                call.rejection = decided.rejection()
            elif call_id in turn.requests:
                call.awaiting = True
            else:  # killed before its request was saved: gated (or not) as a new call is
                call = self._plan(call_id, name, raw)
                new_requests = self._requests([call])
                if new_requests:
                    await self.recorder.emit(*new_requests)
            calls.append(call)
        if interrupted:
            await self.recorder.emit(*interrupted)
        return await self._answer_turn(turn.generation, calls)

    def _plan(self, call_id: str, name: str, raw: str) -> _Call:
        """How to answer a new call: from an equal recorded one, after approval, or now."""
        call = _Call(call_id, name, raw)
        call.rejection = self.failures.refusal(name)
        if call.rejection is not None:  # a withdrawn tool: refused, never run nor gated
            return call
        key = canonical_args(raw)
        match = next((r for r in self.recorded if r.name == name and r.args_key == key), None)
        served = None if match or not self.recording else self.recording.answer(name, key)
        if match is not None:
            self.recorded.remove(match)
            call.record = match  # nothing runs: no approval to ask for
        elif served is not None:
            call.record = Recorded(name, key, served)  # a replay's: nothing runs either
        elif self.recording is not None and not self.recording.runs_novel:
            call.novel = True
            if self.recording.stops_at_novel:
                call.diverged = True
            else:
                call.rejection = self.recording.refusal(name)
        else:
            call.novel = self.recording is not None
            call.awaiting = self.gate.needs(self.by_name.get(name), name, raw)
        return call

    def _requests(self, calls: Sequence[_Call]) -> list[Event]:
        """An `approval_request` for each call that waits, its deadline from now."""
        awaiting = [c for c in calls if c.awaiting]
        # The clock is read only when a call waits: demos and snapshots step a fake clock a
        # read at a time, and a turn with no gated call reads it as it always did.
        now = time.time() if awaiting else 0.0
        return [
            Event(
                APPROVAL_REQUEST,
                name=c.name,
                call_id=c.call_id,
                args=_args_for_log(c.raw),
                turn=self.turn,
                deadline=self.gate.deadline(self.by_name.get(c.name), now),
            )
            for c in awaiting
        ]

    async def _answer_turn(self, gen: Event, calls: list[_Call]) -> LoopOutcome | None:
        """Answer every call not waiting for a decision; stop the segment if one is (or, in a
        replay that stops at a novel call, at the first such call: nothing is answered)."""
        diverged = next((c for c in calls if c.diverged), None)
        if diverged is not None:
            assert self.recording is not None
            args = _args_for_log(diverged.raw)
            error = self.recording.divergence(diverged.name, args)
            fields = {"name": diverged.name, "args": args, "call_id": diverged.call_id}
            return await self.finish(DIVERGED, None, error, **fields)
        ready = [c for c in calls if not c.awaiting]
        results = await all_answered([self._answer(c) for c in ready])
        self.messages.append(assistant_message(gen))
        if len(ready) < len(calls):
            return await self.finish(AWAITING_APPROVAL, None)
        self.messages.extend(
            tool_message(c.call_id, r) for c, r in zip(calls, results, strict=True)
        )
        return None

    async def _answer(self, call: _Call) -> Event:
        """One call's result: as recorded, rejected, or by running the tool; saved."""
        if call.result is not None:
            return call.result
        result = Event(
            TOOL_RESULT,
            name=call.name,
            args=_args_for_log(call.raw),
            call_id=call.call_id,
            turn=self.turn,
            started_at=time.time(),
            server=self._server(call.name),
        )
        if call.novel:
            result.extra[NOVEL_FIELD] = True
        if call.approved is not None and call.approved.given:
            result.result = call.approved.result  # what it did, as a person said: not run
            result.by = call.approved.by
        elif call.record is not None:
            result.result = call.record.event.result
            result.error = call.record.event.error  # a replay serves recorded errors too
            result.replayed_from = call.record.event.call_id
            result.extra.update(drift_of(call.record.event, call.record.args_key))
        elif call.rejection is not None:
            result.error = call.rejection
        else:
            await self._run_tool(call, result)
        result.ended_at = time.time()
        await self.recorder.emit(result)
        self.failures.add(result)
        return result

    async def _run_tool(self, call: _Call, result: Event) -> None:
        tool = self.by_name.get(call.name)
        if tool is None:
            result.error = (
                f"unknown tool {call.name!r}; available: {', '.join(self.by_name) or 'none'}"
            )
            return
        try:
            args = tool.parse_args(call.raw)
        except ToolArgumentsError as exc:
            result.error = str(exc)
            return
        if asks_after_crash(tool, call.approved is not None):
            await self.recorder.emit(start_event(result))  # saved before it runs
        if await invoke_tool(tool, args, result, self.recorder.emit):
            # Cancelled while its thread ran: the result is recorded first, so the next
            # resume replays it; then the run stops as it was asked to.
            result.ended_at = time.time()
            await self.recorder.emit(result)
            raise asyncio.CancelledError

    def _server(self, name: str) -> str | None:
        """The MCP server a tool of this name comes from (None: the agent's own tool)."""
        return getattr(self.by_name.get(name), "server", None)


def _args_for_log(raw: str) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except (ValueError, RecursionError):  # a hostile model may nest arguments 100,000 deep
        return raw
