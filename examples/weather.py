"""The weather agent of the durable-runs guide, ready to crash and resume, and to wait for a
person: it can also book hotels, and each booking is approved first (`book_hotel` is gated).

    python examples/weather.py "What is the weather in London?"
    python examples/weather.py "Book a hotel in Rome for 2 nights"   # ends awaiting approval
    agentor approve RUN_ID   # or reject, or approve it in agentor-tui (a, e, n)
    python examples/weather.py --resume RUN_ID
    agentor-tui runs --agent examples/weather.py:agent
    agentor replay RUN_ID --model offline-demo --agent examples/weather.py:agent   # no key

The script saves its runs in the directory named by `AGENTOR_RUNS` (default `runs`).
`agent`, what `--agent examples/weather.py:agent` loads, has no store of its own (agentor-tui
gives it the directory it shows), so importing this file creates nothing. With
`OPENAI_API_KEY` set the agent talks to gpt-4o-mini; without it, it uses the offline
`DemoModel`, so everything here works with no network.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

from agentor import Agentor, function_tool
from agentor.engine.events import TEXT_DELTA, TOOL_CALL, TOOL_RESULT, Event
from agentor.engine.models import Model
from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from agentor.errors import RunLockedError

try:
    from .demo_model import DemoModel
except ImportError:
    # Loaded by path (`python examples/weather.py`, `--agent examples/weather.py:agent`):
    # make the repository importable so the demo model is the same `examples.demo_model`.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from examples.demo_model import DemoModel

INSTRUCTIONS = "You are a helpful weather assistant."


@function_tool
def get_weather(city: str) -> str:
    """Get the current weather for a city.

    Args:
        city: The city to look up.
    """
    return f"The weather in {city} is sunny and 22C."


@function_tool(needs_approval=True)
def book_hotel(city: str, nights: int) -> str:
    """Book a hotel room in a city. A person approves every booking before it is made.

    Args:
        city: The city to stay in.
        nights: How many nights to stay.
    """
    if nights < 1:
        raise ValueError(f"cannot book {nights} nights: at least one")
    return f"Booked a room in {city} for {nights} night{'s' if nights != 1 else ''}."


def default_model() -> str | Model:
    """gpt-4o-mini when an OpenAI key is set, else the offline demo model."""
    return "gpt-4o-mini" if os.environ.get("OPENAI_API_KEY") else DemoModel()


def build_agent(
    store: Store | None = None, model: str | Model | None = None, **options: Any
) -> Agentor:
    """The weather agent; `options` go to `Agentor` (e.g. `max_turns`, `tools`)."""
    options.setdefault("tools", [get_weather, book_hotel])
    return Agentor(
        name="Weather Agent",
        model=model if model is not None else default_model(),
        instructions=INSTRUCTIONS,
        store=store,
        **options,
    )


# No store: a FileStore would make its directory at import, wherever that happens.
agent = build_agent()


def script_agent() -> Agentor:
    """The agent the command line runs, saving to `AGENTOR_RUNS` (default `runs`)."""
    return build_agent(store=FileStore(os.environ.get("AGENTOR_RUNS", "runs")))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Model text as it may go to a terminal: control characters shown, never obeyed."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def event_line(event: Event) -> str:
    if event.type in (TOOL_CALL, TOOL_RESULT) and event.name:
        return f"event: {event.type} {printable(event.name)}"
    return f"event: {event.type}"


def _report(status: str | None, text: str | None, error: str | None) -> int:
    print(f"status: {status}")
    if text is not None:
        print(f"final_output: {printable(text)}")
    if error is not None:
        print(f"error: {printable(error)}")
    return 0 if status == "completed" else 1


async def ask(agent: Agentor, question: str) -> int:
    end: Event | None = None
    run_id = None
    async for event in agent.stream_chat(question):
        if event.type == TEXT_DELTA:
            continue
        if event.type == "run_start":
            run_id = event.run_id
            print(f"RUN_ID {run_id}", flush=True)
        print(event_line(event), flush=True)
        end = event
    assert end is not None
    if end.status == "awaiting_approval":
        print(f"a person decides first: agentor approve {run_id} (or reject), then --resume it")
    return _report(end.status, end.text, end.error)


async def resume(agent: Agentor, run_id: str) -> int:
    end: Event | None = None
    async for event in agent.stream_resume(run_id):
        if event.type != TEXT_DELTA:
            if not event.replayed:  # a finished run is read back from its log: no new events
                print(event_line(event), flush=True)
            end = event
    assert end is not None
    return _report(end.status, end.text, end.error)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Ask the weather agent, or resume a run.")
    parser.add_argument("question", nargs="?", default="What is the weather in London?")
    parser.add_argument("--resume", metavar="RUN_ID", help="finish a saved run")
    args = parser.parse_args(argv)
    agent = script_agent()
    try:
        if args.resume:
            return asyncio.run(resume(agent, args.resume))
        return asyncio.run(ask(agent, args.question))
    except KeyError:
        print(
            f"error: no run {args.resume} in {os.environ.get('AGENTOR_RUNS', 'runs')}",
            file=sys.stderr,
        )
    except (RunLockedError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
