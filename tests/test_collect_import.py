"""`agentor import FILE... --store S`: OTLP files of a real framework's spans become the runs
`agentor collect` makes of the same spans; bad files are refused before anything is written;
and no body, however broken, makes a decoder do anything but refuse it in one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentor.cli import main as agentor_main
from agentor.collect import otlp_json, otlp_proto
from agentor.collect.files import read_otlp_file
from agentor.collect.mapping import runs_from_spans
from agentor.errors import SpanDecodeError
from tests.collectkit import CaptureServer, collecting, post, proto_to_json, run_emitter, run_logs
from tests.conftest import log_lines
from tests.openai_server import FakeOpenAI


@pytest.fixture(scope="module")
def bodies() -> list[bytes]:
    """The requests pydantic-ai's exporter sent for two runs, as it sent them."""
    with FakeOpenAI() as model, CaptureServer() as capture:
        run_emitter("pydantic_ai_agent.py", model.url, capture.endpoint, "Weather in Oslo?")
        run_emitter("pydantic_ai_agent.py", model.url, capture.endpoint, "And in Lima?")
    return capture.trace_bodies()


def _import(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = agentor_main(["import", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _collected(tmp_path: Path, bodies: list[bytes]) -> dict[str, list[dict[str, Any]]]:
    store = tmp_path / "collected"
    with collecting(store) as collector:
        for body in bodies:
            assert post(collector.endpoint, body)[0] == 200
    return {log.name: log_lines(log) for log in run_logs(store)}


def test_every_file_shape_imports_the_runs_the_receiver_makes(
    tmp_path: Path, bodies: list[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _collected(tmp_path, bodies)
    assert len(expected) == 2
    prefixed = tmp_path / "spans.binpb"
    prefixed.write_bytes(b"".join(len(b).to_bytes(4, "big") + b for b in bodies))
    lines = tmp_path / "spans.jsonl"  # as the Collector's file exporter writes
    lines.write_bytes(b"\n".join(proto_to_json(b) for b in bodies) + b"\n")
    document = tmp_path / "spans.json"
    document.write_text(json.dumps([json.loads(proto_to_json(b)) for b in bodies]))
    for number, path in enumerate((prefixed, lines, document)):
        store = tmp_path / f"imported-{number}"
        status, out, err = _import(capsys, str(path), "--store", str(store))
        assert status == 0, err
        assert out.startswith("2 runs from ") and "(2 new," in out
        assert {log.name: log_lines(log) for log in run_logs(store)} == expected


def test_importing_a_file_again_changes_nothing(
    tmp_path: Path, bodies: list[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join(proto_to_json(b) for b in bodies) + b"\n")
    store = tmp_path / "runs"
    assert _import(capsys, str(path), "--store", str(store))[0] == 0
    before = {log: log.read_bytes() for log in run_logs(store)}
    status, out, _ = _import(capsys, str(path), "--store", str(store))
    assert status == 0 and "2 already there" in out
    assert {log: log.read_bytes() for log in run_logs(store)} == before


def test_a_bad_file_among_good_ones_is_refused_in_one_line_and_nothing_is_written(
    tmp_path: Path, bodies: list[bytes], capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(proto_to_json(bodies[0]) + b"\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(proto_to_json(bodies[0]) + b"\n" + b'{"resourceSpans": 7}\n')
    store = tmp_path / "runs"
    status, out, err = _import(capsys, str(good), str(bad), "--store", str(store))
    assert status == 1 and out == ""
    assert err.count("\n") == 1 and "bad.jsonl: line 2: resourceSpans" in err
    assert run_logs(store) == []
    for missing, says in (
        (tmp_path / "nope.jsonl", "no such file"),
        (tmp_path, "is a directory"),
    ):
        status, _, err = _import(capsys, str(missing), "--store", str(store))
        assert status == 1 and says in err and err.count("\n") == 1


def test_hostile_text_in_spans_is_kept_as_it_is_and_shown_literally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = "\x1b]52;c;cm0gLXJmIH4=\x07[red]boom[/red]\r"
    span = {
        "traceId": "5b8aa5a2d2c872e8321cf37308d69df2",
        "spanId": "051581bf3cb55c13",
        "name": "chat m",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.agent.name", "value": {"stringValue": hostile}},
            {
                "key": "gen_ai.input.messages",
                "value": {
                    "stringValue": json.dumps(
                        [{"role": "user", "parts": [{"type": "text", "content": hostile}]}]
                    )
                },
            },
        ],
    }
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    store = tmp_path / "runs"
    assert _import(capsys, str(path), "--store", str(store))[0] == 0
    (log,) = run_logs(store)
    assert log_lines(log)[0]["agent"] == hostile  # stored as it came
    capsys.readouterr()
    assert agentor_main(["ls", str(store)]) == 0
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_never_crash_the_protobuf_decoder(data: bytes) -> None:
    try:
        spans = otlp_proto.decode_traces(data)
    except SpanDecodeError:
        return
    runs_from_spans(spans)  # what decodes also maps without an error


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_truncated_and_flipped_real_bodies_never_crash_a_decoder(
    bodies: list[bytes], data: st.DataObject
) -> None:
    body = bodies[0]
    cut = data.draw(st.integers(0, len(body)))
    flip = data.draw(st.integers(0, max(len(body) - 1, 0)))
    broken = bytearray(body[:cut])
    if flip < len(broken):
        broken[flip] ^= data.draw(st.integers(1, 255))
    for decode in (otlp_proto.decode_traces, _json_decode):
        try:
            spans = decode(bytes(broken))
        except SpanDecodeError:
            continue
        runs_from_spans(spans)
    text = proto_to_json(body)
    try:
        _json_decode(text[: data.draw(st.integers(0, len(text)))])
    except SpanDecodeError:
        pass


def _json_decode(data: bytes) -> Any:
    return otlp_json.decode_traces(otlp_json.load_document(data))


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_any_json_document_is_read_or_refused_in_one_line(doc: Any) -> None:
    for wrapped in (doc, {"resourceSpans": doc}, {"resourceSpans": [{"scopeSpans": doc}]}):
        try:
            spans = otlp_json.decode_traces(wrapped)
        except SpanDecodeError as exc:
            assert "\n" not in str(exc)
            continue
        runs_from_spans(spans)


def test_a_file_is_read_in_one_pass_with_progress(tmp_path: Path, bodies: list[bytes]) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join(proto_to_json(b) for b in bodies * 300) + b"\n")
    seen: list[tuple[int, int]] = []
    spans, _ = read_otlp_file(path, lambda done, total: seen.append((done, total)))
    assert len(spans) == 300 * sum(len(otlp_proto.decode_traces(b)) for b in bodies)
    assert seen[-1] == (path.stat().st_size, path.stat().st_size)
    assert len(seen) > 2 and [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_every_command_reads_a_collected_run_as_it_reads_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The example spans of three frameworks (examples/otlp): show, search, export, diff."""
    from tests.conftest import ROOT

    store = tmp_path / "runs"
    spans = ROOT / "examples" / "otlp" / "three-frameworks.jsonl"
    status, out, _ = _import(capsys, str(spans), "--store", str(store))
    assert status == 0 and out.startswith("3 runs from ")
    runs = {lines[0]["messages"][-1]["content"]: log for log in run_logs(store)
            for lines in [log_lines(log)]}  # fmt: skip
    lisbon = runs["What is the weather in Lisbon and Porto?"].stem
    madrid = runs["Is it warm in Madrid?"].stem

    def run(*argv: str) -> str:
        capsys.readouterr()
        assert agentor_main(list(argv)) == 0, capsys.readouterr().err
        return capsys.readouterr().out

    shown = json.loads(run("show", lisbon, "--store", str(store), "--json"))
    row = shown["run"]
    assert (row["status"], row["agent"], row["tool_calls"]) == ("completed", "weather", 2)
    assert row["total_tokens"] == shown["usage"]["total_tokens"] > 0
    assert shown["final_output"] == "Sunny in Lisbon Sunny in Porto"
    said = run("show", lisbon, "--store", str(store))
    assert "from     pydantic-ai " in said and "over OTLP · service weather-service" in said
    hits = json.loads(run("search", str(store), "Porto", "--json"))
    assert {h["run_id"] for h in hits} == {lisbon}
    assert "Sunny in Lisbon" in run("export", lisbon, "--store", str(store), "--format", "md")
    page = run("export", madrid, "--store", str(store), "--format", "html")
    assert "Is it warm in Madrid?" in page and "<script" not in page.split("</head>", 1)[-1]
    document = json.loads(run("export", madrid, "--store", str(store), "--format", "json"))
    assert document["run_id"] == madrid
    difference = json.loads(run("diff", lisbon, madrid, "--store", str(store), "--json"))
    assert difference["first_divergence"] is not None
