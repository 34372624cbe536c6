"""A run session lets its run go the same way on every way out of a segment, for every verb
that runs one (agentor.session.run.RunSession): stopped while the model is asked (a cancel) or
by an exception (the store lost the run), what it saved is on record, the run is let go, and
its tracer is finished: the segment it left open is closed as interrupted. Real stores, a real
OpenTelemetry SDK tracer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from agentor import Agentor, RunLostError, function_tool
from agentor.engine.events import RUN_START, TOOL_RESULT
from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.telemetry import inprocess
from agentor.telemetry.ids import span_id_of
from agentor.testing import ScriptedModel
from tests.app_support import GatedModel
from tests.pg_support import PgStores

PROMPT = "What is the weather in Oslo?"


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"Sunny in {city}."


class Traced:
    """An SDK tracer whose finished spans are kept in memory."""

    def __init__(self) -> None:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("t")

    def segment_span(self, store: Store, run_id: str) -> Any:
        """The exported span of the run's last segment (opened by its last run_start)."""
        assert inprocess.flush(30)
        lines = load_lines(store, run_id)
        last = max(i for i, e in enumerate(lines, 1) if getattr(e, "type", None) == RUN_START)
        spans = {s.context.span_id: s for s in self.exporter.get_finished_spans()}
        return spans.get(span_id_of(run_id, last))


@pytest.fixture
def traced() -> Iterator[Traced]:
    t = Traced()
    yield t
    t.provider.shutdown()


def asks_then_waits() -> GatedModel:
    """Asks for Oslo's weather, then is held at its second request until cancelled."""
    model = GatedModel([])
    model.replies = [model.calls(("get_weather", {"city": "Oslo"})), ScriptedModel.text("Sunny.")]
    return model.hold(1)


def weather(store: Store, traced: Traced, model: Any, **options: Any) -> Agentor:
    return Agentor(
        "Weather Agent",
        model=model,
        tools=[get_weather],
        store=store,
        tracing=traced.tracer,
        **options,
    )


async def parent_run(store: Store, traced: Traced, **options: Any) -> str:
    """A run recorded with a scripted model: the tool called once, then (unless cut short by
    max_turns=1) an answer."""
    script = ScriptedModel([])
    script.replies = [script.calls(("get_weather", {"city": "Oslo"})), ScriptedModel.text("Sun.")]
    agent = weather(store, traced, script, **options)
    await agent.arun(PROMPT, run_id="parent")
    return "parent"


# A verb, given the store, the tracer and the model: the run it writes, and its call.
Verb = Callable[[Store, Traced, GatedModel], Awaitable[tuple[str, Awaitable[Any]]]]


async def run(store: Store, traced: Traced, model: GatedModel) -> tuple[str, Awaitable[Any]]:
    return "child", weather(store, traced, model).arun(PROMPT, run_id="child")


async def resume(store: Store, traced: Traced, model: GatedModel) -> tuple[str, Awaitable[Any]]:
    parent = await parent_run(store, traced, max_turns=1)  # ends at max_turns: resumable
    return parent, weather(store, traced, model).aresume(parent)


async def fork(store: Store, traced: Traced, model: GatedModel) -> tuple[str, Awaitable[Any]]:
    parent = await parent_run(store, traced)
    agent = weather(store, traced, ScriptedModel([]))
    return "child", agent.afork(parent, at=2, model=model, fork_id="child")  # its generation


async def replay(store: Store, traced: Traced, model: GatedModel) -> tuple[str, Awaitable[Any]]:
    parent = await parent_run(store, traced)
    agent = weather(store, traced, ScriptedModel([]))
    return "child", agent.areplay(parent, model=model, fork_id="child")


async def until_asked(task: asyncio.Future[Any], model: GatedModel) -> None:
    """Until the model is held at its second request (or the run ended without it)."""
    asked = asyncio.ensure_future(model.waiting.wait())
    try:
        await asyncio.wait({task, asked}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
    finally:
        asked.cancel()
    assert model.waiting.is_set(), task


@pytest.mark.parametrize("verb", [run, resume, fork, replay], ids=lambda v: v.__name__)
async def test_a_segment_cancelled_while_the_model_is_asked_is_let_go_and_its_spans_closed(
    tmp_path: Any, traced: Traced, verb: Verb
) -> None:
    store = FileStore(tmp_path)
    model = asks_then_waits()
    run_id, call = await verb(store, traced, model)
    task = asyncio.ensure_future(call)
    await until_asked(task, model)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert not store.is_locked(run_id)
    assert store.load(run_id)[-1].type == TOOL_RESULT  # the segment's last step, on record
    span = traced.segment_span(store, run_id)
    assert span is not None and span.name == "invoke_agent Weather Agent"
    assert span.attributes["error.type"] == "interrupted"


async def test_a_segment_whose_store_lost_the_run_raises_once_its_spans_are_closed(
    pg_stores: PgStores, traced: Traced
) -> None:
    store = pg_stores()
    model = asks_then_waits()
    task = asyncio.ensure_future(weather(store, traced, model).arun(PROMPT, run_id="lost"))
    await until_asked(task, model)
    assert pg_stores.terminate("lock") == 1  # the run's lock session is cut: the run is lost
    model.gate.set()  # the answer comes, and cannot be saved
    with pytest.raises(RunLostError):
        await task

    assert [e.type for e in pg_stores().load("lost")][-1] == TOOL_RESULT
    span = traced.segment_span(store, "lost")
    assert span is not None and span.attributes["error.type"] == "interrupted"
