"""What spans say of people and of content: an approval's note and a rejection's reason only
with content asked for (by the spans, and by `agentor trace` without `--content`, a real
process sending to a local OTLP receiver); a result a person gave is marked as such (the tool
never ran); an MCP tool is an "extension", a function tool a "function"."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, approve, function_tool
from agentor.engine.events import TOOL_CALL, TOOL_RESULT, Event
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.telemetry.ids import trace_id_of
from agentor.telemetry.spans import SpanRecord, spans_of
from agentor.testing import ScriptedModel
from tests import mcpkit
from tests.conftest import ROOT
from tests.otlp_receiver import OTLPReceiver, ReceivedSpan, otlp_receiver_fixture  # noqa: F401 (fixture)
from tests.test_interrupted import RUN, paused

NOTE = "fine, the NOTE-7f3a budget allows it"
REASON = "the REASON-91c2 hotel is closed"
PROMPT = "Book PROMPT-55d0 hotels in Rome and Oslo."
# What a span carries only with content: messages, arguments, results, answers, notes.
CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "input.value",
    "output.value",
    "agentor.approval.note",
}
CLI = "from agentor.cli import main; raise SystemExit(main())"


@function_tool
def book(city: str) -> str:
    """Book a hotel."""
    return f"booked BOOKED-0c4e in {city}"


def decided_run(store: FileStore) -> str:
    """A run whose two gated calls were decided: one approved with a note, one rejected with a
    reason; then resumed to its end."""
    model = ScriptedModel([])
    model = ScriptedModel(
        [
            model.calls(("book", {"city": "Rome"}), ("book", {"city": "Oslo"})),
            ScriptedModel.text("done"),
        ]
    )
    agent = Agentor("Booker", model=model, tools=[book], store=store, needs_approval=["book"])
    run = agent.run(PROMPT)
    rome, oslo = (p.call_id for p in run.pending)
    agent.approve(run.run_id, rome, by="alice", note=NOTE)
    agent.reject(run.run_id, oslo, by="bob", reason=REASON)
    assert agent.resume(run.run_id).status == COMPLETED
    return run.run_id


def said(spans: list[SpanRecord] | list[ReceivedSpan]) -> str:
    """Everything the spans say: names, attributes, status messages."""
    return json.dumps(
        [
            (s.name, s.attributes, s.message if isinstance(s, SpanRecord) else s.status_message)
            for s in spans
        ],
        ensure_ascii=False,
    )


def test_a_note_and_a_reason_are_only_in_spans_when_content_is_asked_for(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    run_id = decided_run(store)
    plain, _ = spans_of(run_id, load_lines(store, run_id))
    waits = [s for s in plain if s.name == "await_approval book"]
    assert sorted(s.attributes["agentor.approval.decision"] for s in waits) == [
        "approved",
        "rejected",
    ]
    assert "NOTE-7f3a" not in said(plain) and "REASON-91c2" not in said(plain)
    # The rejected call's span says who rejected it, not why.
    rejected = next(s for s in plain if s.name == "execute_tool book" and s.error)
    assert (rejected.error, rejected.message) == ("rejected", "rejected by bob")

    full, _ = spans_of(run_id, load_lines(store, run_id), content=True)
    notes = {s.attributes["agentor.approval.note"] for s in full if s.name.startswith("await")}
    assert notes == {NOTE, REASON}
    assert f"rejected by bob: {REASON}" in said(full)


def agentor_trace(runs: Path, endpoint: str, *more: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLI, "trace", str(runs), "--once", "--endpoint", endpoint, *more],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_agentor_trace_sends_no_content_unless_asked(
    tmp_path: Path, otlp_receiver: OTLPReceiver
) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(ROOT / "runs", runs)
    run_id = decided_run(FileStore(runs))
    agentor_trace(runs, otlp_receiver.url)
    decided = otlp_receiver.of_trace(format(trace_id_of(run_id), "032x"))
    assert len(decided) == 8  # two segments, two generations, two calls, two waits
    assert len({s.trace_id for s in otlp_receiver.spans}) == 10  # the samples too
    for span in otlp_receiver.spans:
        assert not CONTENT_KEYS & set(span.attributes), span
    text = said(otlp_receiver.spans)
    for word in ("NOTE-7f3a", "REASON-91c2", "PROMPT-55d0", "BOOKED-0c4e", "Lisbon"):
        assert word not in text

    # With --content (and a state of its own: these runs were sent), they are there.
    otlp_receiver.spans.clear()
    agentor_trace(runs, otlp_receiver.url, "--content", "--state", str(tmp_path / "again"))
    text = said(otlp_receiver.spans)
    for word in ("NOTE-7f3a", "REASON-91c2", "PROMPT-55d0", "BOOKED-0c4e", "Lisbon"):
        assert word in text


def tool_spans(store: FileStore, run_id: str) -> dict[str, dict[str, Any]]:
    """The attributes of each execute_tool span, by the call's id."""
    spans, _ = spans_of(run_id, load_lines(store, run_id))
    return {
        s.attributes["gen_ai.tool.call.id"]: s.attributes
        for s in spans
        if s.operation == "execute_tool"
    }


@pytest.mark.parametrize("decision", ["result", "approve"])
async def test_a_result_a_person_gave_is_marked_as_not_run(tmp_path: Path, decision: str) -> None:
    letters, store = await paused(tmp_path)
    [call] = [e for e in store.load(RUN) if e.type == TOOL_CALL]
    if decision == "result":
        approve(store, RUN, call.call_id, by="alice", result="it went, by hand")
    else:
        approve(store, RUN, call.call_id, by="alice")
    letters.release.set()
    assert (await letters.agent.aresume(RUN)).status == COMPLETED
    span = tool_spans(store, RUN)[call.call_id]
    if decision == "result":
        assert span["agentor.tool.result_given_by"] == "alice"
        assert letters.ran == ["ann"]  # it ran once: before the crash, not for this result
    else:
        assert "agentor.tool.result_given_by" not in span
        assert letters.ran == ["ann", "ann"]


def test_an_mcp_tool_is_an_extension_and_a_function_tool_a_function(tmp_path: Path) -> None:
    cfg = mcpkit.server_config(tmp_path, "local")
    server = mcpkit.stdio_server(cfg, name="local")
    model = ScriptedModel([])
    model = ScriptedModel(
        [model.calls(("add", {"a": 2, "b": 3}), ("book", {"city": "Rome"})), model.text("ok")]
    )
    store = FileStore(tmp_path / "runs")
    run = Agentor("Both", model=model, tools=[server, book], store=store).run("Add and book.")
    assert run.status == COMPLETED
    results = {e.name: e for e in store.load(run.run_id) if e.type == TOOL_RESULT}
    assert isinstance(results["add"], Event) and results["add"].server == "local"
    spans = tool_spans(store, run.run_id)
    mcp, function = spans[results["add"].call_id], spans[results["book"].call_id]
    assert (mcp["gen_ai.tool.type"], mcp["agentor.mcp.server"]) == ("extension", "local")
    assert function["gen_ai.tool.type"] == "function" and "agentor.mcp.server" not in function
