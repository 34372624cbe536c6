"""log-size: a 100-turn run with 4 KB tool results, compact log vs the same run in full form.

The run goes through the real engine (`Agentor.arun`, FileStore(compact=True)) with an
in-process model that asks for one tool call per turn, so every byte of the log is the
engine's own. The baseline is the same events written by FileStore(compact=False), where each
generation repeats the whole conversation. Both logs are read back and compared before their
sizes are. The ratio is compact / full bytes; no timing here, so no repetitions.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

import harness

from agentor import Agentor, function_tool
from agentor.engine.events import GENERATION, TOOL_RESULT, Usage
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel, tool_call

NAME = "log-size"
GOAL = 0.05
RESULT_BYTES = 4096


def report_model(turns: int) -> ScriptedModel:
    """One tool call per turn until `turns`, then a final answer; OpenAI-shaped calls."""

    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        done = sum(1 for m in messages if m.get("role") == "assistant")
        prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4
        usage = Usage(prompt, 24, prompt + 24)
        if done + 1 >= turns:
            return ModelResponse(text="Here is the report you asked for.", usage=usage)
        call_id = "call_" + hashlib.sha1(str(done).encode()).hexdigest()[:24]
        call = tool_call("fetch_page", {"page": done}, call_id)
        return ModelResponse(text=None, calls=[call], usage=usage)

    return ScriptedModel(reply, name="gpt-4o-mini")


@function_tool
def fetch_page(page: int) -> str:
    """Fetch one page of a long document.

    Args:
        page: The page number.
    """
    # Varied text (not one repeated byte), exactly RESULT_BYTES long.
    words, n = [], 0
    while n < RESULT_BYTES:
        word = hashlib.sha1(f"{page}:{len(words)}".encode()).hexdigest()[: 3 + len(words) % 7]
        words.append(word)
        n += len(word) + 1
    return " ".join(words)[:RESULT_BYTES]


def main() -> None:
    args = harness.parse_args(__doc__)
    turns = 10 if args.quick else 100
    tmp = Path(tempfile.mkdtemp(prefix="bench-logsize-"))
    try:
        compact = FileStore(tmp / "compact")
        agent = Agentor(
            "Report Agent",
            model=report_model(turns),
            instructions="Read every page, then write the report.",
            tools=[fetch_page],
            store=compact,
            max_turns=turns + 1,
        )
        result = asyncio.run(agent.arun("Summarise the document, page by page."))
        assert result.status == "completed", result
        events = compact.load(result.run_id)
        full = FileStore(tmp / "full", compact=False)
        full.append_many(result.run_id, events)
        back = full.load(result.run_id)
        assert [e.to_dict() for e in back] == [e.to_dict() for e in events], "logs differ"

        size_c = compact.path(result.run_id).stat().st_size
        size_f = full.path(result.run_id).stat().st_size
        gens = sum(1 for e in events if e.type == GENERATION)
        results = sum(1 for e in events if e.type == TOOL_RESULT)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"{NAME}: {gens} generations, {results} tool results of {RESULT_BYTES} bytes, "
        f"{len(events)} events, {harness.machine()}"
    )
    harness.table(
        ["log", "bytes", "per turn", "vs full"],
        [
            [
                "compact (FileStore default)",
                size_c,
                harness.fmt_bytes(size_c / gens),
                f"{size_c / size_f:.4f}",
            ],
            ["full (compact=False)", size_f, harness.fmt_bytes(size_f / gens), "1.0000"],
        ],
    )
    floor = results * RESULT_BYTES
    print(f"tool results alone: {floor} bytes ({floor / size_c:.0%} of the compact log)")
    harness.result_line(
        NAME, size_c / size_f, f"<={GOAL}", harness.fmt_bytes(size_c), harness.fmt_bytes(size_f)
    )


if __name__ == "__main__":
    main()
