"""The spans a log makes (agentor.telemetry.spans), without a collector: upstream Agentor's logs,
a person's decision between segments, a resume that changes no span of the segment before,
content only when asked for, and the commands' usage errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentor import Agentor, function_tool
from agentor.cli import main
from agentor.engine.events import Event
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.telemetry.spans import spans_of
from agentor.testing import ScriptedModel
from tests.conftest import FIXTURES

MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())


def test_every_upstream_log_makes_spans_that_hold_together() -> None:
    store = FileStore(FIXTURES)
    for name, entry in MANIFEST.items():
        run_id = entry["run_id"] if isinstance(entry, dict) else entry
        spans, still_open = spans_of(run_id, load_lines(store, run_id))
        assert still_open == 0, name
        lines = {s.line for s in spans}
        assert len(lines) == len(spans), name  # one span a line that opens one
        for s in spans:
            assert s.end >= s.start > 0, (name, s.name)
            assert s.parent_line is None or s.parent_line in lines, (name, s.name)
    crashed, _ = spans_of(
        "b9ba499c543548d886efde61e1f1c8e3", load_lines(store, "b9ba499c543548d886efde61e1f1c8e3")
    )
    assert {(s.name, s.error) for s in crashed} == {
        ("invoke_agent Travel Agent", "interrupted"),
        ("chat gpt-4o-mini", None),
        ("execute_tool get_weather", "interrupted"),
    }


@function_tool
def book(city: str) -> str:
    """Book a hotel."""
    return f"booked in {city}"


def gated_run(tmp_path: Path) -> tuple[FileStore, str]:
    """A run whose call waited for alice's approval, then was resumed."""
    store = FileStore(tmp_path)
    model = ScriptedModel([])
    model = ScriptedModel([model.calls(("book", {"city": "Rome"})), ScriptedModel.text("done")])
    agent = Agentor("Booker", model=model, tools=[book], store=store, needs_approval=["book"])
    run = agent.run("book Rome")
    assert run.status == "awaiting_approval"
    agent.approve(run.run_id, by="alice")
    assert agent.resume(run.run_id).status == "completed"
    return store, run.run_id


def test_a_wait_for_approval_is_a_span_saying_who_decided_and_when(tmp_path: Path) -> None:
    store, run_id = gated_run(tmp_path)
    lines = load_lines(store, run_id)
    events = {e.type: (i, e) for i, e in enumerate(lines, 1) if isinstance(e, Event)}
    spans = {s.name: s for s in spans_of(run_id, lines)[0]}

    wait = spans["await_approval book"]
    request_line, request = events["approval_request"]
    _, decision = events["approval"]
    assert (wait.line, wait.start, wait.end) == (request_line, request.ts, decision.ts)
    assert wait.attributes["agentor.approval.by"] == "alice"
    assert wait.attributes["agentor.approval.decision"] == "approved"
    assert wait.attributes["agentor.approval.decided_at"] == decision.ts
    # The call ran in the resume: its span is under the second segment, opened by its call.
    tool = spans["execute_tool book"]
    assert tool.line == events["tool_call"][0]
    assert tool.parent_line == max(i for i, e in enumerate(lines, 1) if e.type == "run_start")


def test_a_resume_adds_spans_and_changes_none_of_the_segment_before(tmp_path: Path) -> None:
    store, run_id = gated_run(tmp_path)
    lines = load_lines(store, run_id)
    second = max(i for i, e in enumerate(lines, 1) if e.type == "run_start")
    before, waiting = spans_of(run_id, lines[: second - 2])  # as it was, awaiting the decision
    after, _ = spans_of(run_id, lines)
    assert waiting == 2  # the call and its wait: not sent until they close
    assert before == [
        s
        for s in after
        if s.line < second
        and s.name != "execute_tool book"
        and not s.name.startswith("await_approval")
    ]
    resumed = next(s for s in after if s.line == second)
    assert resumed.links == ((run_id, 1),) and resumed.attributes["agentor.segment"] == 2


def test_content_is_only_in_spans_when_asked_for(tmp_path: Path) -> None:
    store, run_id = gated_run(tmp_path)
    words = ("book Rome", "booked in Rome", '{"city": "Rome"}')
    plain, _ = spans_of(run_id, load_lines(store, run_id))
    assert not [w for s in plain for w in words if w in json.dumps(s.attributes)]
    full, _ = spans_of(run_id, load_lines(store, run_id), content=True)
    text = json.dumps([s.attributes for s in full])
    assert all(w.replace('"', '\\"') in text or w in text for w in words)


@pytest.mark.parametrize(
    "args, says",
    [
        (["c0f1", "--format", "otlp", "-o", "x.json"], "-o is not for --format otlp"),
        (["c0f1", "--format", "otlp", "--all"], "give RUN... or --all, not both"),
        (["c0f1", "--format", "otlp", "--status", "completed"], "choose among --all"),
        (["c0f1", "--format", "otlp", "--header", "nokey"], "--header: not a header K=V"),
        (["c0f1", "--format", "otlp", "--endpoint", "ftp://x"], "--endpoint: not an http(s) URL"),
        (["c0f1", "--content"], "--content is for --format otlp"),
        (["c0f1", "8a5d", "--format", "md"], "name one RUN"),
    ],
)
def test_export_usage_errors_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(Path(__file__).parent.parent / "runs", runs)
    try:
        code = main(["export", "--dir", str(runs), *args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2, err
    assert says in err and err.count("\n") == 1
    assert not list(tmp_path.glob("x.json"))


def test_tracing_takes_true_false_or_an_sdk_tracer() -> None:
    with pytest.raises(TypeError, match="tracing= takes True, False, None or an opentelemetry"):
        Agentor("A", model=ScriptedModel([]), tracing="yes")


def test_the_state_of_a_follower_survives_a_torn_write_and_names_its_collector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentor.telemetry.sent import SentFile, _StateError

    path = tmp_path / "sent.json"
    state = SentFile(path, "http://a/v1/traces")
    state.sent("run1", [2, 3])
    state.settle("run2", 7)
    state.close()
    with path.open("ab") as f:
        f.write(b'{"run":"run1","sent":[9')  # killed in the middle of an append
    again = SentFile(path, "http://a/v1/traces")
    assert [again.run("run1").has(n) for n in (1, 2, 3, 9)] == [False, True, True, False]
    assert again.run("run2").has(7) and not again.run("run2").has(8)
    again.close()
    assert path.read_bytes().count(b"\n") == 3  # rewritten: the header and a line a run
    with pytest.raises(_StateError, match="records spans sent to http://a/v1/traces, not http://b"):
        SentFile(path, "http://b/v1/traces")
    code = main(["trace", str(tmp_path), "--state", str(path), "--endpoint", "http://b", "--once"])
    err = capsys.readouterr().err
    assert code == 1 and "give each collector its own --state FILE" in err
    assert err.count("\n") == 1


def test_a_run_traced_in_process_gives_the_spans_its_log_gives(tmp_path: Path) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentor.telemetry import inprocess
    from agentor.telemetry.ids import span_id_of

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    store = FileStore(tmp_path)
    model = ScriptedModel([])
    model = ScriptedModel([model.calls(("book", {"city": "Rome"})), ScriptedModel.text("done")])
    agent = Agentor("Booker", model=model, tools=[book], store=store, needs_approval=["book"])
    run = agent.run("book Rome", tracing=provider.get_tracer("t"))  # paused: awaiting
    agent.approve(run.run_id, by="alice")  # another hand, untraced
    agent.resume(run.run_id, tracing=provider.get_tracer("t"))  # a new segment, traced
    assert inprocess.flush(30)

    got = sorted(
        (s.context.span_id, s.start_time, s.end_time) for s in exporter.get_finished_spans()
    )
    logged, _ = spans_of(run.run_id, load_lines(store, run.run_id))
    want = sorted(
        (span_id_of(run.run_id, s.line), round(s.start * 1e9), round(s.end * 1e9)) for s in logged
    )
    assert got == want and len(got) == 6  # the wait the decision closed included, once each
