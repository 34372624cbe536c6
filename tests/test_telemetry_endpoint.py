"""Where spans go when no endpoint is given: the OpenTelemetry variables decide, as the OTLP
exporter specification says (the traces variable as it is, else the base one with /v1/traces,
else localhost:4318), and the collector names the URL it sends to. A real exporter and a local
OTLP receiver; the base variable names a port nothing listens on, so spans that reach the
receiver went where the traces variable said."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentor import Agentor
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.telemetry.ids import trace_id_of
from agentor.telemetry.sending import Collector
from agentor.telemetry.spans import spans_of
from agentor.testing import ScriptedModel
from tests.otlp_receiver import OTLPReceiver, otlp_receiver_fixture  # noqa: F401 (fixture)
from tests.phoenix_support import free_port

TRACES = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
BASE = "OTEL_EXPORTER_OTLP_ENDPOINT"


def test_the_traces_variable_names_where_spans_go_before_the_base_one(
    tmp_path: Path, otlp_receiver: OTLPReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(str(tmp_path))
    run = Agentor("A", model=ScriptedModel([ScriptedModel.text("hi")]), store=store).run("hello")
    assert run.status == COMPLETED
    monkeypatch.setenv(TRACES, f"{otlp_receiver.url}/v1/traces")
    monkeypatch.setenv(BASE, f"http://127.0.0.1:{free_port()}")
    collector = Collector()
    assert collector.url == f"{otlp_receiver.url}/v1/traces"
    records, _ = spans_of(run.run_id, load_lines(store, run.run_id))
    collector.send(records)
    got = otlp_receiver.wait_spans(format(trace_id_of(run.run_id), "032x"), len(records))
    assert {s.name for s in got} == {r.name for r in records}


def test_the_base_variable_gets_the_traces_path_and_none_means_the_default_collector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(TRACES, raising=False)
    monkeypatch.setenv(BASE, "https://collector.example:4318/")
    assert Collector().url == "https://collector.example:4318/v1/traces"
    monkeypatch.delenv(BASE)
    assert Collector().url == "http://localhost:4318/v1/traces"
    assert Collector("http://127.0.0.1:6006").url == "http://127.0.0.1:6006/v1/traces"
