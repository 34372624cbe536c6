"""The store contract, one suite for every store backend: FileStore, MemoryStore and
PostgresStore, each against what it declares.

`BACKENDS` is one line a backend: how a test opens it, and the capabilities
(`agentor.engine.store.api`) it declares. A test asks for a fixture named after what it needs
(`stores`: any store; `locking`: a `LockingStore`; ...: `NEEDS`), and runs once per backend that
declares it; `stores.new()` is another store on the same runs, as another process would open it
(for MemoryStore, the same object: its runs live in it). A backend's declarations are held to
what it is (`test_each_backend_is_what_it_declares`) and to the type checker's list
(tests/store_protocols_typed.py). What only one store does (files, torn lines, symlinks; the
runs table, the change feed, fencing) is tested in that store's own files.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentor import (
    Agentor,
    ExperimentNotFoundError,
    RunLockedError,
    RunNotFoundError,
    function_tool,
)
from agentor.engine.events import Event, Usage
from agentor.engine.log.format import LogDecoder, LogEncoder
from agentor.engine.statuses import INCOMPLETE
from agentor.engine.store.api import (
    BatchStore,
    ClaimingStore,
    ClosingStore,
    DeletingStore,
    DirectoryStore,
    ExperimentStore,
    LineKeepingStore,
    LockingStore,
    LookupStore,
    PinningStore,
    SearchingStore,
    ServerStore,
    Store,
    TypeQueryStore,
)
from agentor.engine.store.copy import copy_runs
from agentor.engine.store.file import FileStore
from agentor.engine.store.holding import load_lines
from agentor.engine.store.matching import matcher_for
from agentor.engine.store.memory import MemoryStore
from agentor.engine.store.pg.dsn import redact
from agentor.testing import ScriptedModel
from tests.conftest import FIXTURES, WeatherAgents
from tests.openai_server import FakeOpenAI
from tests.retention_support import write_run

RUN = "r1"
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text())

EVERY_STORE = (
    Store,
    BatchStore,
    LockingStore,
    DeletingStore,
    PinningStore,
    LookupStore,
    ExperimentStore,
)


@dataclass(frozen=True)
class Backend:
    """A backend under test: `open(tmp_path, request)` gives what opens a store on the runs of
    this test (again and again, as processes would); `declares`: its capabilities."""

    open: Callable[[Path, pytest.FixtureRequest], Callable[[], Any]]
    declares: frozenset[type]


def _one_memory_store(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[], Any]:
    memory = MemoryStore()
    return lambda: memory


# One line a backend.
BACKENDS = {
    "file": Backend(
        lambda tmp_path, _: lambda: FileStore(tmp_path / "runs"),
        frozenset({*EVERY_STORE, LineKeepingStore, DirectoryStore}),
    ),
    "memory": Backend(_one_memory_store, frozenset(EVERY_STORE)),
    "postgres": Backend(
        lambda _, request: request.getfixturevalue("pg_stores"),
        frozenset(
            {
                *EVERY_STORE,
                LineKeepingStore,
                SearchingStore,
                TypeQueryStore,
                ClaimingStore,
                ServerStore,
                ClosingStore,
            }
        ),
    ),
}

CAPABILITIES = frozenset(
    {
        Store,
        BatchStore,
        LockingStore,
        DeletingStore,
        PinningStore,
        ExperimentStore,
        SearchingStore,
        LineKeepingStore,
        LookupStore,
        TypeQueryStore,
        ClaimingStore,
        DirectoryStore,
        ServerStore,
        ClosingStore,
    }
)


def needs(*capabilities: type) -> pytest.MarkDecorator:
    """What the store of a test must declare (default: `Store`): the test runs once per backend
    that declares it all."""
    return pytest.mark.needs.with_args(*capabilities)  # (one class alone would be decorated)


class Stores:
    """The store under test: `new()` opens it again on the same runs."""

    def __init__(self, kind: str, make: Any) -> None:
        self.kind = kind
        self.new = make


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "stores" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("needs")
        needed = set(marker.args) if marker is not None else {Store}
        kinds = [kind for kind, backend in BACKENDS.items() if needed <= backend.declares]
        metafunc.parametrize("stores", kinds, indirect=True)


@pytest.fixture
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    kind = request.param
    return Stores(kind, BACKENDS[kind].open(tmp_path, request))


def test_each_backend_is_what_it_declares(stores: Stores) -> None:
    """At run time, and to the type checker (tests/store_protocols_typed.py)."""
    store = stores.new()
    declared = BACKENDS[stores.kind].declares
    assert {c for c in CAPABILITIES if isinstance(store, c)} == declared
    assert typed_declarations()[type(store).__name__] == {c.__name__ for c in declared}


def typed_declarations() -> dict[str, set[str]]:
    """Store class -> the protocols tests/store_protocols_typed.py holds it to: each
    `def as_x(store: A | B) -> Protocol` there, `Backend` standing for every store."""
    tree = ast.parse((Path(__file__).parent / "store_protocols_typed.py").read_text())
    aliases: dict[str, list[str]] = {}
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            aliases[node.targets[0].id] = ast.unparse(node.value).split(" | ")
        if isinstance(node, ast.FunctionDef) and node.name.startswith("as_") and node.returns:
            annotation = node.args.args[0].annotation
            assert annotation is not None
            for name in ast.unparse(annotation).split(" | "):
                for cls in aliases.get(name, [name]):
                    found.setdefault(cls, set()).add(ast.unparse(node.returns))
    return found


def test_every_capability_of_the_store_api_has_tests_here() -> None:
    from agentor.engine.store import api

    protocols = {v for v in vars(api).values() if isinstance(v, type) and Store in v.__mro__[1:]}
    assert protocols | {Store} == CAPABILITIES
    tested = {
        capability
        for name, test in globals().items()
        if name.startswith("test_")
        for mark in getattr(test, "pytestmark", [])
        if mark.name == "needs"
        for capability in mark.args
    }
    assert tested | {Store} == CAPABILITIES


def lines(events: list[Event]) -> list[bytes]:
    """Full-form lines: equal lines are the same events, field order included (and a NaN
    equals itself, which `==` on events would not say)."""
    encoder = LogEncoder(compact=False)
    return [encoder.encode(e) for e in events]


def assorted_events() -> list[Event]:
    """Every kind of event a log holds, with what is hard to keep: unknown fields and types,
    growing requests (compact generations), usage, odd numbers and strings."""
    system = {"role": "system", "content": "Be brief."}
    asked = [system, {"role": "user", "content": "Wetter in Zürich? ☀", "name": "x"}]
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    answered = [
        *asked,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    return [
        Event("run_start", run_id=RUN, agent="A", model="m", messages=asked, v=1, pid=7,
              tools=[{"type": "function", "function": {"name": "f"}}], settings={"t": 0.5},
              started_at=1.5, ts=1.5, extra={"future_field": {"nested": [1, 2]}}),
        Event("generation", turn=1, messages=asked, calls=[call], usage=Usage(3, 4, 7), ts=2.0),
        Event("tool_call", turn=1, name="f", call_id="c1", args={}, ts=2.1),
        Event("tool_result", turn=1, name="f", call_id="c1", args={}, result={"deep": [None]}),
        Event("approval_request", name="rm", call_id="c9", extra={"why": "asks first"}),
        Event("generation", turn=2, messages=answered, text="done", usage=Usage(5, 1, 6)),
        Event("message", turn=2, text="NUL \x00, lone \udcff, big " + "x" * 3000,
              extra={"nan": float("nan"), "huge": 2**70, "inf": float("-inf")}),
        Event("run_end", status="completed", text="done", usage=Usage(8, 5, 13), ended_at=3.0),
    ]  # fmt: skip


# -- saving and loading --------------------------------------------------------------------------


@needs(BatchStore)
def test_events_load_back_exactly_as_they_were_saved(stores: Stores) -> None:
    written = assorted_events()
    store = stores.new()
    store.append(RUN, written[0])
    store.append_many(RUN, written[1:4])
    for e in written[4:]:
        store.append(RUN, e)
    assert lines(stores.new().load(RUN)) == lines(written)
    assert lines(store.load(RUN)) == lines(written)


@needs(BatchStore)
def test_transient_events_are_never_saved(stores: Stores) -> None:
    store = stores.new()
    store.append_many(RUN, [Event("message", text="a"), Event("text_delta", text="tok")])
    store.append(RUN, Event("tool_wait", name="f", call_id="c1"))
    store.append_many(RUN, [Event("text_delta", text="only transient")])
    assert [e.type for e in stores.new().load(RUN)] == ["message"]


def test_runs_are_listed_in_order_and_an_unknown_run_is_not_found(stores: Stores) -> None:
    store = stores.new()
    for run_id in ("b", "a", "c-1_X", "B"):
        store.append(run_id, Event("message", text=run_id))
    assert stores.new().list_runs() == ["B", "a", "b", "c-1_X"]
    with pytest.raises(RunNotFoundError, match="nope") as missing:
        stores.new().load("nope")
    assert isinstance(missing.value, KeyError) and missing.value.run_id == "nope"


BAD_IDS = ["../x", "", "a" * 129, "a/b", "x y", "é", "abc\n", "a'; DROP TABLE runs; --", None, 12]


@pytest.mark.parametrize("run_id", BAD_IDS)
def test_bad_run_ids_are_refused_by_every_method_and_nothing_is_written(
    stores: Stores, run_id: Any
) -> None:
    store = stores.new()
    calls = [lambda: store.append(run_id, Event("message")), lambda: store.load(run_id)]
    if isinstance(store, BatchStore):
        calls.append(lambda: store.append_many(run_id, [Event("message")]))
    if isinstance(store, LockingStore):
        calls += [
            lambda: store.lock(run_id).__enter__(),
            lambda: store.is_locked(run_id),
            lambda: store.lock_holder(run_id),
        ]
    if isinstance(store, LookupStore):
        calls.append(lambda: store.has_run(run_id))
    for call in calls:
        with pytest.raises(ValueError, match="invalid run id"):
            call()
    assert stores.new().list_runs() == []


# -- holding a run -------------------------------------------------------------------------------


@needs(LockingStore)
def test_a_run_is_held_by_one_taker_at_a_time(stores: Stores) -> None:
    store, other = stores.new(), stores.new()
    assert not store.is_locked(RUN) and store.lock_holder(RUN) is None
    with store.lock(RUN):
        store.append(RUN, Event("message", text="mine"))
        assert store.is_locked(RUN) and other.is_locked(RUN)
        assert other.lock_holder(RUN) == os.getpid()
        for contender in (store, other):
            with pytest.raises(RunLockedError) as refused, contender.lock(RUN):
                pass
            assert refused.value.pid == os.getpid() and refused.value.run_id == RUN
    assert not store.is_locked(RUN) and not other.is_locked(RUN)
    assert other.lock_holder(RUN) is None
    with other.lock(RUN):
        other.append(RUN, Event("message", text="then yours"))
    assert [e.text for e in stores.new().load(RUN)] == ["mine", "then yours"]


# -- with the engine -----------------------------------------------------------------------------


def reader_agent(store: Any, pages: int) -> tuple[Agentor, ScriptedModel, list[int]]:
    fetched: list[int] = []

    @function_tool
    def fetch(page: int) -> str:
        fetched.append(page)
        return f"page {page}: " + "x" * 200

    model = ScriptedModel([])
    model.replies = [
        model.calls(("fetch", {"page": 2 * i}), ("fetch", {"page": 2 * i + 1}))
        for i in range(pages // 2)
    ]
    model.replies.append(ScriptedModel.text("read them all"))
    agent = Agentor("Reader", model=model, tools=[fetch], store=store, max_turns=pages)
    return agent, model, fetched


@needs(BatchStore)
async def test_a_run_loads_back_whole_and_a_crashed_copy_of_it_resumes(stores: Stores) -> None:
    agent, model, fetched = reader_agent(stores.new(), pages=4)
    result = await agent.arun("read 4 pages")
    assert result.status == "completed" and fetched == [0, 1, 2, 3]
    loaded = stores.new().load(result.run_id)
    assert lines(loaded) == lines(result.events)
    assert [e.messages for e in loaded if e.type == "generation"] == model.requests

    # The same run cut after the second turn's first tool result, as a kill leaves it.
    cut = [e.type for e in loaded].index("tool_result", 6) + 1
    stores.new().append_many("crashed", loaded[:cut])
    agent, model, fetched = reader_agent(stores.new(), pages=4)
    model.replies = model.replies[1:]  # turn 1 is on record; turn 2 is asked again
    resumed = await agent.aresume("crashed")
    assert resumed.status == "completed" and resumed.final_output == "read them all"
    assert fetched == [3]  # page 2's result was on record: never fetched again
    events = stores.new().load("crashed")
    assert lines(events[:cut]) == lines(loaded[:cut])
    assert [e.messages for e in events[cut:] if e.type == "generation"] == model.requests


def test_writers_taking_turns_on_one_run_keep_its_requests_right(stores: Stores) -> None:
    first, second = stores.new(), stores.new()
    requests = [[{"role": "user", "content": f"m{j}"} for j in range(n)] for n in range(1, 7)]
    for i, messages in enumerate(requests):
        (first if i % 3 else second).append(RUN, Event("generation", turn=i, messages=messages))
    assert [e.messages for e in stores.new().load(RUN)] == requests
    assert [e.messages for e in first.load(RUN)] == requests


# -- logs from upstream Agentor ------------------------------------------------------------------


@pytest.fixture
def upstream(tmp_path: Path) -> FileStore:
    """The upstream fixtures, in a FileStore of their own (a copy: resuming writes)."""
    shutil.copytree(FIXTURES, tmp_path / "upstream")
    return FileStore(tmp_path / "upstream")


def test_upstream_logs_copied_into_the_store_load_as_filestore_loads_them(
    stores: Stores, upstream: FileStore
) -> None:
    report = copy_runs(upstream, stores.new())
    assert sorted(report.copied) == upstream.list_runs() and not report.skipped
    for run_id in upstream.list_runs():
        assert lines(stores.new().load(run_id)) == lines(upstream.load(run_id))
    assert stores.new().list_runs() == upstream.list_runs()


def test_upstream_runs_copied_into_the_store_resume(
    stores: Stores, upstream: FileStore, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    copy_runs(upstream, stores.new())
    crashed = MANIFEST["crash_after_tool_result"]["run_id"]
    result = weather_agent(store=stores.new()).resume(crashed)
    assert result.status == "completed"
    assert result.final_output == "The weather in Vienna is sunny and 22C."
    assert weather_agent.executed == [] and fake_openai.calls == 1  # the result was on record
    half = MANIFEST["half_finished_crash"]["run_id"]
    result = weather_agent(store=stores.new()).resume(half)
    assert result.status == "completed" and weather_agent.executed == ["Prague"]
    done = MANIFEST["completed"]["run_id"]
    before, calls = lines(stores.new().load(done)), fake_openai.calls
    assert weather_agent(store=stores.new()).resume(done).status == "completed"
    assert lines(stores.new().load(done)) == before and fake_openai.calls == calls


# -- deleting runs (DeletingStore) ---------------------------------------------------------------


@needs(DeletingStore)
def test_a_deleted_run_is_gone_and_the_others_stay(stores: Stores) -> None:
    store = stores.new()
    write_run(store, "old", age_days=40)
    write_run(store, "other", age_days=40)
    before = lines(store.load("other"))
    store.delete("old")
    assert stores.new().list_runs() == ["other"]
    with pytest.raises(RunNotFoundError):
        stores.new().load("old")
    assert lines(stores.new().load("other")) == before


@needs(DeletingStore)
def test_deleting_an_unknown_run_says_so(stores: Stores) -> None:
    store = stores.new()
    with pytest.raises(RunNotFoundError):
        store.delete("nobody")
    with pytest.raises(ValueError, match="invalid run id"):
        store.delete("../etc/passwd")


@needs(DeletingStore, LockingStore)
def test_a_run_held_in_this_process_is_not_deleted(stores: Stores) -> None:
    store = stores.new()
    write_run(store, "busy", age_days=1, ending=None)
    with store.lock("busy"), pytest.raises(RunLockedError):
        stores.new().delete("busy")
    assert len(stores.new().load("busy")) == 2


@needs(DeletingStore)
def test_a_check_that_raises_keeps_the_run(stores: Stores) -> None:
    store = stores.new()
    write_run(store, "kept", age_days=1)
    seen: list[list[Event]] = []

    def refuse(events: list[Event]) -> None:
        seen.append(events)
        raise RuntimeError("not this one")

    with pytest.raises(RuntimeError, match="not this one"):
        store.delete("kept", refuse)
    assert [e.type for e in seen[0]] == ["run_start", "generation", "run_end"]
    assert stores.new().list_runs() == ["kept"]


# -- pins (PinningStore) -------------------------------------------------------------------------


@needs(PinningStore)
def test_pins_are_kept_outside_the_logs(stores: Stores) -> None:
    store = stores.new()
    write_run(store, "keep-me", age_days=400)
    before = lines(store.load("keep-me"))
    assert store.pin("keep-me") is True
    assert store.pin("keep-me") is False  # already pinned
    assert stores.new().pinned() == {"keep-me"}
    assert lines(stores.new().load("keep-me")) == before
    assert stores.new().list_runs() == ["keep-me"]  # a pin is no run
    assert store.unpin("keep-me") is True
    assert store.unpin("keep-me") is False
    assert stores.new().pinned() == set()
    with pytest.raises(RunNotFoundError):
        store.pin("nobody")


@needs(PinningStore, DeletingStore)
def test_deleting_a_pinned_run_removes_its_pin(stores: Stores) -> None:
    store = stores.new()
    write_run(store, "pinned", age_days=1)
    store.pin("pinned")
    store.delete("pinned")
    assert stores.new().pinned() == set()
    write_run(store, "pinned", age_days=0)  # a new run under the same id starts unpinned
    assert stores.new().pinned() == set()


# -- experiments (ExperimentStore) ---------------------------------------------------------------


@needs(ExperimentStore)
def test_experiment_records_come_back_in_order_to_another_opening_of_the_store(
    stores: Stores,
) -> None:
    store = stores.new()
    assert store.list_experiments() == []
    definition = {"kind": "definition", "id": "exp-1", "name": "ünïcode \u202e", "n": [1, 2.5]}
    store.append_experiment("exp-1", definition)
    store.append_experiment("exp-2", {"kind": "definition", "id": "exp-2"})
    for i in range(3):
        store.append_experiment("exp-1", {"kind": "pair", "i": i, "none": None})
    again = stores.new()
    assert again.list_experiments() == ["exp-1", "exp-2"]
    assert again.load_experiment("exp-1") == [
        definition,
        *({"kind": "pair", "i": i, "none": None} for i in range(3)),
    ]
    assert again.load_experiment("exp-2") == [{"kind": "definition", "id": "exp-2"}]
    assert again.list_runs() == []  # an experiment is no run


@needs(ExperimentStore)
def test_an_unknown_experiment_is_named_in_one_line(stores: Stores) -> None:
    store = stores.new()
    with pytest.raises(ExperimentNotFoundError, match="no experiment exp-none") as caught:
        store.load_experiment("exp-none")
    assert isinstance(caught.value, KeyError)
    with pytest.raises(ValueError):
        store.append_experiment("../escape", {"kind": "definition"})


# -- lines that are not events (LineKeepingStore) ------------------------------------------------


@needs(LineKeepingStore)
def test_a_run_loads_with_errors_as_it_loads_and_an_unknown_one_is_not_found(
    stores: Stores,
) -> None:
    written = assorted_events()
    store = stores.new()
    for event in written:
        store.append(RUN, event)
    events, bad = stores.new().load_with_errors(RUN)
    assert lines(events) == lines(written) and bad == []
    assert lines(load_lines(stores.new(), RUN)) == lines(written)  # in the order written
    with pytest.raises(RunNotFoundError):
        stores.new().load_with_errors("nope")


# -- is a run there (LookupStore) ----------------------------------------------------------------


@needs(LookupStore)
def test_a_store_tells_whether_it_holds_a_run_without_listing_them(stores: Stores) -> None:
    store = stores.new()
    assert not store.has_run(RUN)
    store.append(RUN, Event("message", text="here"))
    assert stores.new().has_run(RUN) and not stores.new().has_run("r")  # a prefix is no run


# -- the events of one type (TypeQueryStore) -----------------------------------------------------


@needs(TypeQueryStore)
def test_the_events_of_one_type_of_many_runs_come_in_log_order(stores: Stores) -> None:
    store = stores.new()
    asked = [Event("approval_request", name=n, call_id=f"c{n}") for n in ("a", "b")]
    store.append("two", Event("message", text="first"))
    for event in asked:
        store.append("two", event)
    store.append("none", Event("message", text="nothing asked"))
    found = stores.new().events_of_type(["two", "none", "unknown"], "approval_request")
    assert list(found) == ["two"] and lines(found["two"]) == lines(asked)
    assert stores.new().events_of_type([], "approval_request") == {}


# -- its own search (SearchingStore) -------------------------------------------------------------


@needs(SearchingStore)
def test_a_store_searching_its_events_finds_what_a_search_of_its_logs_finds(
    stores: Stores, tmp_path: Path
) -> None:
    from agentor.ops import search

    store = stores.new()
    store.append_many(RUN, assorted_events())
    store.append("r2", Event("message", text="Zürich again, and done"))
    copy_runs(store, FileStore(tmp_path / "as-files"))
    for query, regex in (("zürich", False), ("done", False), ("d[e]ep", True), ("Be brief", False)):
        ignore_case = matcher_for(query, regex, None).fold
        hits = list(stores.new().search(query, regex=regex, ignore_case=ignore_case))
        assert hits and hits == list(search(tmp_path / "as-files", query, regex=regex))


# -- runs a worker may take (ClaimingStore) ------------------------------------------------------


@needs(ClaimingStore)
def test_claimable_runs_are_the_free_incomplete_ones_and_the_feed_tells_what_changes(
    stores: Stores,
) -> None:
    store = stores.new()
    write_run(store, "done", age_days=3)
    write_run(store, "open", age_days=2, ending=None)
    write_run(store, "busy", age_days=1, ending=None)
    with store.lock("busy"):
        assert stores.new().claimable() == ["open"]
        assert stores.new().claimable(agents=["Weather Agent"], limit=1) == ["open"]
        assert stores.new().claimable(agents=["Somebody Else"]) == []
        assert stores.new().claimable(statuses=[INCOMPLETE, "completed"]) == ["done", "open"]
    feed = stores.new().changes()
    try:
        feed.wait(0)  # what came before the feed is not its news
        store.append("open", Event("message", text="taken"))
        told: set[str] = set()
        for _ in range(100):  # each wait returns as soon as a change is told
            told |= set(feed.wait(1.0))
            if "open" in told:
                break
        assert "open" in told
    finally:
        feed.close()


# -- runs as files (DirectoryStore) --------------------------------------------------------------


@needs(DirectoryStore)
def test_each_run_is_a_log_file_in_its_directory_that_a_reader_may_read(stores: Stores) -> None:
    store = stores.new()
    written = assorted_events()
    for event in written:
        store.append(RUN, event)
    path = stores.new().path(RUN)
    assert path == store.directory / f"{RUN}.jsonl" and path.is_file()
    decoder = LogDecoder()
    read = [decoder.decode(line) for line in path.read_bytes().splitlines(keepends=True)]
    assert lines([e for e in read if isinstance(e, Event)]) == lines(written)


# -- a server's store (ServerStore) --------------------------------------------------------------


@needs(ServerStore)
def test_a_store_on_a_server_names_it_without_a_password(stores: Stores) -> None:
    store = stores.new()
    assert store.where and store.where == redact(store.where)
    assert store.schema and (stores.new().where, stores.new().schema) == (store.where, store.schema)
    assert store.where in repr(store)


# -- letting go (ClosingStore) -------------------------------------------------------------------


@needs(ClosingStore)
def test_closing_a_store_keeps_what_it_wrote_and_may_be_done_twice(stores: Stores) -> None:
    store = stores.new()
    store.append(RUN, Event("message", text="kept"))
    store.close()
    store.close()
    assert [e.text for e in stores.new().load(RUN)] == ["kept"]
