"""A big completed run log (what FileStore(compact=True) writes), built fast for big_run.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import synthetic

from agentor.engine.events import (
    GENERATION,
    LOG_VERSION,
    MESSAGE,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Usage,
)
from agentor.engine.log.format import DELTA_FIELD, LogEncoder


def line_of(data: dict[str, Any]) -> bytes:
    """One log line as LogEncoder writes it (orjson, compact), for data orjson writes as json
    would (the bench's: no NaN, no huge integers); the first lines are checked against it."""
    return orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE)


CALLS = 4  # parallel tool calls per turn: 1 generation + 4 calls + 4 results = 9 events


def write_big_run(path: Path, events_wanted: int, started: float) -> int:
    """A completed run of about `events_wanted` events; returns how many lines it has.

    Lines are what FileStore(compact=True) writes. Encoding each generation with LogEncoder
    would compare the whole conversation every turn (quadratic at this size), so generation
    deltas are built here from what is known (every request extends the previous one) and
    the first turns are checked against LogEncoder.
    """
    turns = max(1, (events_wanted - 4) // (1 + 2 * CALLS))
    run_id = path.name.removesuffix(".jsonl")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful research assistant."},
        {"role": "user", "content": "Check the weather of every city, every day, for a year."},
    ]
    reference = LogEncoder(compact=True)
    lines = 0
    t = started
    generations = 0
    prev_len = 0

    def gen_line(event: Event) -> bytes:
        nonlocal generations, prev_len
        # As LogEncoder: the first generation in full, the others as a delta at the end.
        data = event.to_dict()  # `messages` is the last field: the delta takes its place
        if generations:
            data.pop("messages", None)
            data[DELTA_FIELD] = {
                "base": generations - 1,
                "keep": prev_len,
                "tail": messages[prev_len:],
            }
        generations += 1
        prev_len = len(messages)
        return line_of(data)

    def emit(event: Event) -> bytes:
        nonlocal lines
        lines += 1
        if event.type == GENERATION:
            checked = generations < 3  # the shortcut must write what the engine writes
            if checked:
                event.messages = list(messages)
            line = gen_line(event)
            if checked:
                assert line == reference.encode(event), "big-run lines differ from LogEncoder"
            return line
        line = reference.encode(event) if generations <= 3 else None
        return line if line is not None else line_of(event.to_dict())

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        buf: list[bytes] = []
        start = Event(
            RUN_START,
            run_id=run_id,
            agent="Research Agent",
            model="gpt-4.1",
            messages=list(messages),
            v=LOG_VERSION,
            pid=4242,
            host="bench",
            started_at=t,
            ts=t,
        )
        buf.append(emit(start))
        for turn in range(1, turns + 1):
            calls = [
                {
                    "id": f"call_{turn:07d}_{c}_abcdefghijkl",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": f'{{"city": "{synthetic.CITIES[c]}", "day": {turn}}}',
                    },
                }
                for c in range(CALLS)
            ]
            prompt = 30 * len(messages)
            gen = Event(
                GENERATION,
                turn=turn,
                usage=Usage(prompt, 40, prompt + 40),
                model="gpt-4.1",
                messages=None,
                calls=calls,
                started_at=t,
                ended_at=t + 0.9,
                ts=t + 0.9,
            )
            t += 1.0
            buf.append(emit(gen))
            results = []
            for c, call in enumerate(calls):
                args = {"city": synthetic.CITIES[c], "day": turn}
                buf.append(
                    emit(
                        Event(
                            TOOL_CALL,
                            name="get_weather",
                            args=args,
                            call_id=call["id"],
                            turn=turn,
                            ts=t,
                        )
                    )
                )
            for c, call in enumerate(calls):
                args = {"city": synthetic.CITIES[c], "day": turn}
                result = f"Day {turn} in {synthetic.CITIES[c]}: sunny, {10 + turn % 20}C."
                results.append(result)
                buf.append(
                    emit(
                        Event(
                            TOOL_RESULT,
                            name="get_weather",
                            args=args,
                            call_id=call["id"],
                            turn=turn,
                            result=result,
                            started_at=t,
                            ended_at=t + 0.02,
                            ts=t + 0.02,
                        )
                    )
                )
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            for call, result in zip(calls, results, strict=True):
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
            t += 0.1
            if len(buf) > 4096:
                os.write(fd, b"".join(buf))
                buf.clear()
        answer = "Every city was sunny, every day."
        usage = Usage(30 * len(messages), 12, 30 * len(messages) + 12)
        final = Event(
            GENERATION,
            turn=turns + 1,
            usage=usage,
            model="gpt-4.1",
            text=answer,
            started_at=t,
            ended_at=t + 1,
            ts=t + 1,
        )
        buf.append(emit(final))
        buf.append(emit(Event(MESSAGE, text=answer, turn=turns + 1, usage=usage, ts=t + 1)))
        buf.append(
            emit(
                Event(
                    RUN_END,
                    status="completed",
                    text=answer,
                    turn=turns + 1,
                    ended_at=t + 1,
                    ts=t + 1,
                )
            )
        )
        os.write(fd, b"".join(buf))
    finally:
        os.close(fd)
    return lines
