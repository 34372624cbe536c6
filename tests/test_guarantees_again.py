"""Second, independent proofs of guarantees that had one test each (issue 9, item 6): each
reaches the behaviour by another road than the first, so one broken path cannot hide behind the
other's test.

- A whole last event missing only its newline is an event: loaded, kept by the next append,
  and honoured by a resume (first proof: test_reliability_crash.py, a byte-offset sweep).
- A finished named run writes nothing: on a MemoryStore, and on the `aresume` path where the
  run was finished by someone else while this resume waited for it (first proof:
  test_named_runs.py, a FileStore calling `run` again).
- A stale delta encoder is detected: a foreign writer (upstream, full form) appended a
  generation behind a store's back, and that store's next compact line still decodes to the
  right request (first proof: test_reliability_races.py, two FileStores taking turns).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from agentor import Agentor, function_tool
from agentor.engine.events import GENERATION, MESSAGE, RUN_START, Event
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.testing import ScriptedModel
from tests.conftest import FULL_RUN, log_types

PROMPT = "Weather in Oslo?"


class Counted:
    def __init__(self) -> None:
        self.runs: list[str] = []

        @function_tool
        def get_weather(city: str) -> str:
            """Look the weather up."""
            self.runs.append(city)
            return f"Sunny in {city}."

        self.tool = get_weather


def agent_on(store: object, counted: Counted, *replies) -> tuple[Agentor, ScriptedModel]:
    model = ScriptedModel(list(replies))
    return Agentor("Weather Agent", model=model, tools=[counted.tool], store=store), model


async def finished_run(store: object, counted: Counted, run_id: str = "r") -> None:
    script = ScriptedModel([])
    ask = script.calls(("get_weather", {"city": "Oslo"}))
    agent, _ = agent_on(store, counted, ask, ScriptedModel.text("Sunny."))
    result = await agent.arun(PROMPT, run_id=run_id)
    assert result.status == "completed"


# -- a last event missing only its newline -----------------------------------------------------


async def test_a_resume_honours_a_tool_result_that_lacks_only_its_newline(tmp_path: Path) -> None:
    counted = Counted()
    store = FileStore(tmp_path)
    await finished_run(store, counted)
    path = store.path("r")
    lines = path.read_bytes().splitlines(keepends=True)
    assert log_types(path) == FULL_RUN
    kept = b"".join(lines[:4])  # killed after the tool result's bytes, before its newline
    path.write_bytes(kept[:-1])

    loaded, bad = FileStore(tmp_path).load_with_errors("r")
    assert bad == [] and [e.type for e in loaded] == FULL_RUN[:4]
    resumer, model = agent_on(FileStore(tmp_path), counted, ScriptedModel.text("Sunny."))
    result = await resumer.aresume("r")

    assert result.status == "completed"
    assert counted.runs == ["Oslo"], "the recorded result was thrown away and the tool ran again"
    assert model.requests[0][-1]["content"] == "Sunny in Oslo."
    data = path.read_bytes()
    assert data.startswith(kept)  # the event and its newline, then the new segment
    assert log_types(path) == [*FULL_RUN[:4], RUN_START, *FULL_RUN[4:]]
    assert not path.with_name(path.name + ".torn").exists()


# -- a finished named run writes nothing ---------------------------------------------------------


async def test_a_finished_named_run_on_a_memory_store_writes_nothing(tmp_path: Path) -> None:
    counted = Counted()
    store = MemoryStore()
    await finished_run(store, counted, "job-1")
    before = [e.to_dict() for e in store.load("job-1")]

    again, model = agent_on(store, counted)
    result = await again.arun(PROMPT, run_id="job-1")
    resumed = await again.aresume("job-1")

    for r in (result, resumed):
        assert (r.status, r.final_output) == ("completed", "Sunny.")
    assert model.requests == [] and counted.runs == ["Oslo"]
    assert [e.to_dict() for e in store.load("job-1")] == before


class FinishedWhileWaiting(FileStore):
    """A store whose run is finished by another worker (another store on the same directory)
    just as this one takes the run's lock: after `aresume` read it as incomplete."""

    def __init__(self, directory: Path, finish) -> None:
        super().__init__(directory)
        self.finish = finish

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        self.finish(run_id)  # on entering: in the thread that takes the lock
        with super().lock(run_id):
            yield


async def test_a_run_finished_elsewhere_while_aresume_waited_writes_nothing(
    tmp_path: Path,
) -> None:
    counted = Counted()
    store = FileStore(tmp_path)
    await finished_run(store, counted)
    path = store.path("r")
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:4]))
    finished: list[bytes] = []

    def finish(run_id: str) -> None:
        other, _ = agent_on(FileStore(tmp_path), counted, ScriptedModel.text("Sunny."))
        assert other.resume(run_id).status == "completed"
        finished.append(path.read_bytes())

    late, model = agent_on(FinishedWhileWaiting(tmp_path, finish), counted)
    result = await late.aresume("r")

    assert (result.status, result.final_output) == ("completed", "Sunny.")
    assert model.requests == [], "the late resumer asked the model again"
    assert path.read_bytes() == finished[0], "the late resumer wrote to a finished run"
    assert counted.runs == ["Oslo"]


# -- a stale delta encoder ---------------------------------------------------------------------


def test_a_compact_append_after_a_foreign_writer_added_a_generation_decodes_right(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path)
    system = {"role": "system", "content": "Be brief."}
    first = [system, {"role": "user", "content": "Hi"}]
    second = [*first, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "?"}]
    store.append_many("r", [Event(RUN_START, messages=first[:2])])
    store.append("r", Event(GENERATION, turn=1, messages=first, text="Hello"))
    store.append("r", Event(GENERATION, turn=2, messages=second, text="Yes?"))

    # Upstream Agentor (full form, its own spacing) appends a generation to the same log.
    foreign = [system, {"role": "user", "content": "Something else entirely"}]
    line = Event(GENERATION, turn=3, messages=foreign, text="Oh.").to_json() + "\n"
    fd = os.open(store.path("r"), os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)

    # This store last saw the log before that line: its next compact line must count it.
    fourth = [*foreign, {"role": "assistant", "content": "Oh."}, {"role": "user", "content": "!"}]
    store.append("r", Event(GENERATION, turn=4, messages=fourth, text="Done."))
    store.append("r", Event(MESSAGE, text="Done."))

    events, bad = FileStore(tmp_path).load_with_errors("r")
    assert bad == []
    requests = [e.messages for e in events if e.type == GENERATION]
    assert requests == [first, second, foreign, fourth]
