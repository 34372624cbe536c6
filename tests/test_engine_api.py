"""What the engine's API tells a caller who passes something wrong: an unknown run, a store that
is not one, an input that is not one, a log with nothing to resume. Each is refused with a
message saying what is expected, before anything is written or sent to a model."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

import agentor
import agentor.errors
from agentor import Agentor, NothingToResumeError, RunNotFoundError
from agentor.engine.events import Event
from agentor.engine.store import api as store_api
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.testing import ScriptedModel
from tests.conftest import log_types


def agent_on(store: Any, model: ScriptedModel | None = None) -> Agentor:
    return Agentor("Helper", model=model or ScriptedModel([]), store=store)


# -- an unknown run ---------------------------------------------------------------------------


class KeyErrorStore(MemoryStore):
    """A store of someone else's making: its `load` raises a plain KeyError, as the protocol
    allows."""

    def __repr__(self) -> str:
        return "KeyErrorStore(db='prod')"

    def load(self, run_id: str) -> list[Event]:
        try:
            return super().load(run_id)
        except KeyError:
            raise KeyError(run_id) from None


def test_run_not_found_is_one_class_exported_from_agentor_and_its_errors() -> None:
    assert agentor.RunNotFoundError is agentor.errors.RunNotFoundError
    assert issubclass(RunNotFoundError, agentor.AgentorError)
    assert issubclass(RunNotFoundError, KeyError)  # code catching KeyError still works


async def test_resuming_an_unknown_run_names_the_id_and_the_store(tmp_path: Path) -> None:
    files, memory, theirs = FileStore(tmp_path), MemoryStore(), KeyErrorStore()
    expected = {
        files: f"no run 'nope' in FileStore({str(tmp_path)!r})",
        memory: "no run 'nope' in MemoryStore()",
        theirs: "no run 'nope' in KeyErrorStore(db='prod')",
    }
    for store, message in expected.items():
        model = ScriptedModel([])
        agent = agent_on(store, model)
        with pytest.raises(RunNotFoundError) as sync:
            await asyncio.to_thread(agent.resume, "nope")
        with pytest.raises(RunNotFoundError) as asynchronous:
            await agent.aresume("nope")
        with pytest.raises(RunNotFoundError) as streamed:
            _ = [e async for e in agent.stream_resume("nope")]
        for raised in (sync, asynchronous, streamed):
            assert str(raised.value) == message
            assert raised.value.run_id == "nope" and raised.value.store is store
        assert model.requests == [] and store.list_runs() == []
    assert list(tmp_path.iterdir()) == []


def test_stores_raise_run_not_found_for_an_unknown_id(tmp_path: Path) -> None:
    for store in (FileStore(tmp_path), MemoryStore()):
        with pytest.raises(RunNotFoundError, match=r"^no run 'ghost' in "):
            store.load("ghost")
    with pytest.raises(KeyError):
        FileStore(tmp_path).load_with_errors("ghost")


# -- a store that is not one ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("store", "got"),
    [
        (42, "got int 42"),
        (b"runs", "got bytes b'runs'"),
        (["runs"], "got list ['runs']"),
        ({"runs": []}, "got dict {'runs': []}"),
        (object(), "got object <object object"),
        (FileStore, "got the class FileStore itself: make one, such as FileStore(...)"),
    ],
    ids=["int", "bytes", "list", "dict", "object", "the-class"],
)
def test_a_store_that_is_not_a_store_is_refused_when_the_agent_is_made(
    store: object, got: str
) -> None:
    with pytest.raises(TypeError) as refused:
        Agentor("Helper", model=ScriptedModel([]), store=store)
    message = str(refused.value)
    assert message.startswith(
        "store= takes a store: an object with append(run_id, event), load(run_id) and "
        "list_runs() methods, such as FileStore('runs') or MemoryStore(), or a directory path"
    )
    assert got in message


def test_a_directory_path_as_the_store_means_a_file_store_there(tmp_path: Path) -> None:
    for given in (str(tmp_path / "as-str"), tmp_path / "as-path"):
        agent = agent_on(given, ScriptedModel([ScriptedModel.text("Hi.")]))
        assert isinstance(agent.store, FileStore)
        result = agent.run("Hello?")
        assert log_types(Path(given) / f"{result.run_id}.jsonl")[-1] == "run_end"
    with pytest.raises(ValueError, match="names no directory"):
        agent_on("")


# -- an input that is not one -----------------------------------------------------------------

SHAPE = (
    "input must be a str (the user's message) or a sequence of message dicts, each with a "
    "'role' (such as [{'role': 'user', 'content': 'Hi'}]); "
)
BAD_INPUTS = [
    (42, TypeError, "got int"),
    (None, TypeError, "got NoneType"),
    (b"hello", TypeError, "got bytes"),
    ({"role": "user", "content": "Hi"}, TypeError, "got one dict: put it in a list"),
    ([], ValueError, "got an empty list"),
    (["Hi"], (TypeError, ValueError), "input[0] is str (a list of prompts is a batch"),
    ([{"role": "user", "content": "Hi"}, {"content": "no role"}], ValueError, "input[1] has no"),
]


@pytest.mark.parametrize(("given", "error", "detail"), BAD_INPUTS)
async def test_an_input_that_is_not_one_is_refused_before_anything_is_written(
    tmp_path: Path, given: Any, error: Any, detail: str
) -> None:
    model = ScriptedModel([ScriptedModel.text("never")])
    agent = agent_on(FileStore(tmp_path), model)
    with pytest.raises(error) as run:
        await asyncio.to_thread(agent.run, given)
    with pytest.raises(error) as arun:
        # A list of prompts is a batch (upstream's arun), never one named run.
        await agent.arun(given, run_id="named")
    if given == ["Hi"]:
        assert str(arun.value) == "run_id= names one run, not a batch"
        arun = run
    with pytest.raises(error) as stream:
        agent.stream_chat(given)  # at the call, not when the stream is first read
    for raised in (run, arun, stream):
        assert str(raised.value).startswith(SHAPE) and detail in str(raised.value)
    assert model.requests == [] and list(tmp_path.iterdir()) == []


# -- a log with nothing to resume -------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        ([Event("run_start", agent="Helper", model="scripted")], "its run_start holds no messages"),
        ([Event("run_start", agent="Helper", messages=[])], "its run_start holds no messages"),
        ([], "its log has no run_start"),
    ],
    ids=["no-messages", "empty-messages", "empty-log"],
)
async def test_a_log_without_a_prompt_has_nothing_to_resume(
    tmp_path: Path, lines: list[Event], why: str
) -> None:
    store = FileStore(tmp_path)
    path = store.path("r1")
    path.touch(mode=0o600)
    store.append_many("r1", lines)
    before = path.read_bytes()
    model = ScriptedModel([ScriptedModel.text("never")])
    with pytest.raises(NothingToResumeError) as refused:
        await agent_on(store, model).aresume("r1")
    assert str(refused.value) == f"run r1: nothing to resume: no prompt recorded ({why})"
    assert isinstance(refused.value, ValueError) and refused.value.reason == why
    assert model.requests == [] and path.read_bytes() == before
    assert not store.is_locked("r1")


# -- the store protocols ----------------------------------------------------------------------


class LockOnly(MemoryStore):
    """A store of someone else's making that can lock but not tell who holds a run."""

    is_locked = None  # type: ignore[assignment]
    lock_holder = None  # type: ignore[assignment]


def test_a_store_that_locks_only_in_part_is_refused_rather_than_run_unlocked() -> None:
    with pytest.raises(TypeError, match="LockOnly has lock\\(\\) but not is_locked or lock_holder"):
        agent_on(LockOnly())


def test_the_bundled_stores_are_whole_locking_and_batch_stores(tmp_path: Path) -> None:
    memory = MemoryStore()
    for store in (FileStore(tmp_path), memory):
        assert isinstance(store, store_api.LockingStore)
        assert isinstance(store, store_api.BatchStore)
    memory.append("r", Event("run_start"))
    assert (memory.is_locked("r"), memory.lock_holder("r")) == (False, None)
    with memory.lock("r"):
        assert (memory.is_locked("r"), memory.lock_holder("r")) == (True, os.getpid())


async def test_a_store_without_lock_or_append_many_still_runs_a_whole_run() -> None:
    class Plain:  # the seed page's three-method store
        def __init__(self) -> None:
            self.runs: dict[str, list[Event]] = {}

        def append(self, run_id: str, event: Event) -> None:
            self.runs.setdefault(run_id, []).append(event)

        def load(self, run_id: str) -> list[Event]:
            return list(self.runs[run_id])

        def list_runs(self) -> list[str]:
            return list(self.runs)

    store = Plain()
    result = await agent_on(store, ScriptedModel([ScriptedModel.text("Hi.")])).arun("Hello")
    assert [e.type for e in store.runs[result.run_id]] == [
        "run_start",
        "generation",
        "message",
        "run_end",
    ]


# -- clone ------------------------------------------------------------------------------------


def test_clone_changes_what_it_is_given_checks_it_and_leaves_the_original_alone(
    tmp_path: Path,
) -> None:
    agent = Agentor(
        "Helper",
        model="gpt-4o-mini",
        base_url="http://127.0.0.1:9/v1",
        api_key="sk-x",
        temperature=0.2,
        max_retries=0,
        store=MemoryStore(),
    )
    twin = agent.clone(store=tmp_path / "runs", model="gpt-4o", max_turns=3)
    assert isinstance(twin.store, FileStore) and twin.store.directory == tmp_path / "runs"
    assert (twin.model.name, twin.max_turns, twin.name) == ("gpt-4o", 3, "Helper")
    # The same endpoint, key and settings, under the new name.
    assert twin.model.settings == {"temperature": 0.2}
    assert repr(twin.model) == "OpenAIModel('gpt-4o', base_url='http://127.0.0.1:9/v1')"
    assert twin.model._api_key == "sk-x"
    assert isinstance(agent.store, MemoryStore) and agent.model.name == "gpt-4o-mini"
    assert twin.tools is not agent.tools

    with pytest.raises(TypeError, match="clone\\(\\) cannot change temperature"):
        agent.clone(temperature=1.0)
    with pytest.raises(ValueError, match="max_turns must be at least 1"):
        agent.clone(max_turns=0)
    with pytest.raises(TypeError, match="store= takes a store"):
        agent.clone(store=42)
