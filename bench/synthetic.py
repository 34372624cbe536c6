"""Run logs for the TUI benches, in the engine's own format (LogEncoder, compact deltas).

Writing thousands of runs through `Agentor` would fsync every event; these are encoded by the
engine's encoder and written in one go, so they are byte-for-byte what the engine would write
for the same events, only faster to make.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

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
from agentor.engine.log.format import LogEncoder

AGENTS = [("Weather Agent", "gpt-4o-mini"), ("Research Agent", "gpt-4.1"), ("Coder", "qwen3")]
CITIES = ["London", "Paris", "Oslo", "Lima", "Tokyo", "Cairo", "Quito", "Perth", "Dakar"]


def _word_pool(size: int = 1 << 17) -> str:
    out, n, i = [], 0, 0
    while n < size:
        word = hashlib.blake2s(str(i).encode(), digest_size=8).hexdigest()[: 3 + i % 7]
        out.append(word)
        n += len(word) + 1
        i += 1
    return " ".join(out)


_POOL = _word_pool()


def text_of(seed: str, size: int) -> str:
    """Varied words, exactly `size` characters (a tool result or a long answer)."""
    assert size < len(_POOL) // 2
    h = int.from_bytes(hashlib.blake2s(seed.encode(), digest_size=4).digest(), "big")
    start = h % (len(_POOL) - size)
    return _POOL[start : start + size]


def run_events(
    run_id: str,
    turns: int,
    started: float,
    ending: str = "completed",
    result_bytes: int = 120,
    agent: int = 0,
    step: float = 0.8,
) -> list[Event]:
    """One run: `turns` tool turns, then (unless `ending` is "interrupted") the end.

    `ending`: "completed" (a final answer), "failed" (a model error) or "interrupted" (the
    process died after the last tool result: no run_end).
    """
    name, model = AGENTS[agent % len(AGENTS)]
    city = CITIES[int(run_id[:6], 16) % len(CITIES)] if _is_hex(run_id[:6]) else CITIES[0]
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful weather assistant."},
        {"role": "user", "content": f"What is the weather in {city} this week, day by day?"},
    ]
    t = started
    events = [
        Event(
            RUN_START,
            run_id=run_id,
            agent=name,
            model=model,
            messages=list(messages),
            v=LOG_VERSION,
            pid=4242,
            host="bench",
            started_at=t,
            ts=t,
        )
    ]
    for turn in range(1, turns + 1):
        call_id = f"call_{run_id[:8]}{turn:06d}abcdefghij"
        args = {"city": city, "day": turn}
        calls = [
            {
                "id": call_id,
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": f'{{"city": "{city}", "day": {turn}}}',
                },
            }
        ]
        prompt = 40 * len(messages)
        usage = Usage(prompt, 18, prompt + 18)
        events.append(
            Event(
                GENERATION,
                turn=turn,
                usage=usage,
                model=model,
                messages=list(messages),
                calls=calls,
                started_at=t,
                ended_at=t + step * 0.8,
                ts=t + step * 0.8,
            )
        )
        t += step
        events.append(
            Event(TOOL_CALL, name="get_weather", args=args, call_id=call_id, turn=turn, ts=t)
        )
        result = f"Day {turn} in {city}: sunny, 22C. " + text_of(f"{run_id}{turn}", result_bytes)
        events.append(
            Event(
                TOOL_RESULT,
                name="get_weather",
                args=args,
                call_id=call_id,
                turn=turn,
                result=result,
                started_at=t,
                ended_at=t + 0.05,
                ts=t + 0.05,
            )
        )
        messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
        t += 0.1
    if ending == "interrupted":
        return events
    final_turn = turns + 1
    if ending == "failed":
        events.append(
            Event(
                RUN_END,
                status="failed",
                error="APIConnectionError: Connection error.",
                turn=final_turn - 1,
                ended_at=t + 5,
                ts=t + 5,
            )
        )
        return events
    answer = f"The week in {city} looks sunny, around 22C every day."
    usage = Usage(40 * len(messages), 30, 40 * len(messages) + 30)
    events.append(
        Event(
            GENERATION,
            turn=final_turn,
            usage=usage,
            model=model,
            messages=list(messages),
            text=answer,
            started_at=t,
            ended_at=t + step,
            ts=t + step,
        )
    )
    t += step
    events.append(Event(MESSAGE, text=answer, turn=final_turn, usage=usage, ts=t))
    events.append(
        Event(RUN_END, status="completed", text=answer, turn=final_turn, ended_at=t, ts=t)
    )
    return events


def encode(events: list[Event]) -> bytes:
    encoder = LogEncoder(compact=True)
    return b"".join(encoder.encode(e) for e in events)


def write_run(directory: Path, run_id: str, events: list[Event]) -> int:
    data = encode(events)
    fd = os.open(directory / f"{run_id}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    return len(data)


def run_id_for(i: int) -> str:
    return hashlib.blake2s(str(i).encode(), digest_size=16).hexdigest()


def _is_hex(s: str) -> bool:
    try:
        int(s, 16)
    except ValueError:
        return False
    return True


def directory_of_runs(directory: Path, count: int, now: float, big_every: int = 100) -> int:
    """`count` runs of every kind; every `big_every`-th one is long (well over 64 KiB).

    Returns the bytes written.
    """
    directory.mkdir(parents=True, exist_ok=True)
    total = 0
    endings = ["completed"] * 7 + ["failed", "interrupted", "completed"]
    for i in range(count):
        run_id = run_id_for(i)
        big = big_every and i % big_every == big_every - 1
        events = run_events(
            run_id,
            turns=20 if big else 1 + i % 6,
            started=now - 60 * (count - i),
            ending=endings[i % len(endings)],
            result_bytes=4096 if big else 120,
            agent=i,
        )
        total += write_run(directory, run_id, events)
    return total
