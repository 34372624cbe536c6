"""Kit for the upstream-surface crash tests: agents on the real openai client against
`tests.openai_server.FakeOpenAI`, run in children forked from a zygote that can be SIGKILLed
after any event they write (`crashkit.KillingStore`).

Two scenarios, both served by `script` (stateless, so any process can resume):

- "structured": `lookup(n=1)`, then an answer that does not match `Answer`, then (asked again
  with the correction) a valid one. Events: run_start, generation, tool_call, tool_result,
  generation (invalid), invalid_output, generation, message, run_end (9).
- "flaky": `flaky(city=A)`, `flaky(city=B)` (both fail: the tool is withdrawn), `flaky(city=C)`
  (refused without running), then "done". Events: run_start, (generation, tool_call,
  tool_result) x2, tool_disabled, generation, tool_call, tool_result, generation, message,
  run_end (14).

Every tool execution appends one line ("lookup 1", "flaky A") to cfg["tool_log"].

Run as `python -m tests.structuredkit zygote`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentor import Agentor, function_tool
from tests import crashkit

PROMPTS = {"structured": "What is six times seven?", "flaky": "Check the cities."}
INVALID = '{"answer": "not-an-int"}'
VALID = '{"answer": 42, "note": null}'
CORRECTION_START = "Your answer did not match"
EVENTS = {"structured": 9, "flaky": 14}


class Answer(BaseModel):
    answer: int
    note: str | None = None


def script(request: dict[str, Any]) -> dict[str, Any]:
    messages = request.get("messages", [])
    offered = [t["function"]["name"] for t in request.get("tools") or []]
    if "lookup" in offered:
        last = messages[-1]
        if last.get("role") == "user" and str(last.get("content")).startswith(CORRECTION_START):
            return {"text": VALID}
        if last.get("role") == "tool":
            return {"text": INVALID}
        return {"calls": [["lookup", {"n": 1}]]}
    results = [m for m in messages if m.get("role") == "tool"]
    if len(results) < 3:
        return {"calls": [["flaky", {"city": "ABC"[len(results)]}]]}
    return {"text": "done"}


def make_agent(
    scenario: str, store: Any, url: str, tool_log: str | None = None, **options: Any
) -> Agentor:
    @function_tool
    def lookup(n: int) -> str:
        """Look a number up.

        Args:
            n: Which one.
        """
        crashkit._note(tool_log, f"lookup {n}")
        return f"six times seven is {6 * 7}"

    @function_tool
    def flaky(city: str) -> str:
        """A tool whose service is down.

        Args:
            city: The city.
        """
        crashkit._note(tool_log, f"flaky {city}")
        raise RuntimeError("down")

    if scenario == "structured":
        options.setdefault("output_type", Answer)
    options.setdefault("tools", [lookup] if scenario == "structured" else [flaky])
    return Agentor(
        name=f"{scenario} agent",
        model="gpt-4o-mini",
        store=store,
        base_url=url,
        api_key="sk-test",
        max_retries=0,
        **options,
    )


def run_child(cfg: dict[str, Any]) -> None:
    """Start (or resume, cfg["run_id"]) the scenario; SIGKILLed after cfg["kill_after"]
    events when it is set; the outcome to cfg["out"]."""
    store = crashkit.KillingStore(cfg["dir"], cfg.get("kill_after"))
    agent = make_agent(cfg["scenario"], store, cfg["url"], cfg.get("tool_log"))
    outcome: dict[str, Any] = {}
    try:
        if cfg.get("run_id"):
            result = agent.resume(cfg["run_id"])
        else:
            result = agent.run(PROMPTS[cfg["scenario"]])
        output = result.final_output
        outcome.update(
            status=result.status,
            run_id=result.run_id,
            final_output=output.model_dump() if isinstance(output, BaseModel) else output,
        )
    except Exception as exc:
        outcome.update(error=type(exc).__name__, message=str(exc))
    if cfg.get("out"):
        Path(cfg["out"]).write_text(json.dumps(outcome))


if __name__ == "__main__":
    if sys.argv[1] == "zygote":
        crashkit.zygote_main(run_child)
    else:
        raise SystemExit(f"unknown command {sys.argv[1]!r}")
