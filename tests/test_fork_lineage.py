"""Forks and the rest of the engine: gated turns, upstream Agentor's fork logs, retention, and a
fork killed in a real process and finished by another after its parent was deleted."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from agentor.engine.approval.pending import pending_calls
from agentor.engine.events import FORK
from agentor.engine.fork.compare import compare
from agentor.engine.fork_mark import last_fork
from agentor.engine.models import OpenAIModel
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.file import FileStore
from agentor.ops.pins import pin
from agentor.ops.retention import HAS_KEPT_FORKS, PINNED, prune
from agentor.testing import ScriptedModel
from tests.approvalkit import TRAVEL_PROMPT, Travel
from tests.conftest import CHILD_AGENT, FIXTURES, Children, WeatherAgents, counted, wait_for
from tests.forkkit import Weather, log_bytes, result_line, types, weather_model
from tests.openai_server import FakeOpenAI
from tests.pg_support import PgStores

UPSTREAM_PARENT = "32e803417cab48f7a26fffcf902194d6"
UPSTREAM_FORK = "e8c1463ce4314dc891670939d984ec41"


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return FileStore(tmp_path / "runs")


# -- gated turns ----------------------------------------------------------------------------------
# The travel run: 1 run_start, 2 generation, 3-4 tool_call (book_hotel, get_weather),
# 5 approval_request (book_hotel), 6 tool_result (get_weather), 7 run_end (awaiting_approval).


def test_a_fork_inside_a_gated_turn_waits_for_its_own_decision_then_runs_the_call_once(
    store: FileStore,
) -> None:
    t = Travel(store)
    parent = t.agent.run(TRAVEL_PROMPT)
    assert parent.status == AWAITING_APPROVAL and t.ran == [("get_weather", "Rome", 0)]
    before = log_bytes(store, parent.run_id)

    fork = t.agent.fork(parent.run_id, at=6, result="Snow in Rome.")
    assert fork.status == AWAITING_APPROVAL
    assert [p.name for p in fork.pending] == ["book_hotel"]
    assert t.ran == [("get_weather", "Rome", 0)], "nothing ran in the fork"
    assert types(store.load(fork.run_id))[-4:] == ["fork", "run_start", "tool_result", "run_end"]

    t.agent.approve(fork.run_id, by="alice")
    done = t.agent.resume(fork.run_id)
    assert done.status == COMPLETED
    assert done.final_output == "Booked 2 night(s) in Rome. | Snow in Rome."
    assert t.executed("book_hotel") == [("book_hotel", "Rome", 2)]
    assert log_bytes(store, parent.run_id) == before
    assert [p.name for p in pending_calls(store.load(parent.run_id))] == ["book_hotel"]


def test_a_whole_fork_of_an_awaiting_run_waits_too_and_refuses_an_added_message(
    store: FileStore,
) -> None:
    t = Travel(store)
    parent = t.agent.run(TRAVEL_PROMPT)
    silent = ScriptedModel([])
    copy = t.agent.clone(model=silent).fork(parent.run_id)
    assert copy.status == AWAITING_APPROVAL and [p.name for p in copy.pending] == ["book_hotel"]
    assert silent.requests == []
    with pytest.raises(ValueError, match=r"waits for approval of calls of its last turn: c1_0 "):
        t.agent.fork(parent.run_id, "Never mind the hotel.")
    again = t.agent.fork(parent.run_id, at=2)  # asked again: the call is gated again
    assert again.status == AWAITING_APPROVAL
    assert t.executed("book_hotel") == []


# -- upstream Agentor -----------------------------------------------------------------------------


@pytest.fixture
def upstream(tmp_path: Path) -> FileStore:
    runs = tmp_path / "upstream"
    shutil.copytree(FIXTURES, runs)
    return FileStore(runs)


def test_an_upstream_fork_log_reads_as_a_fork_and_forks_again(upstream: FileStore) -> None:
    events = upstream.load(UPSTREAM_FORK)
    mark = last_fork(events)
    assert mark is not None and (mark.forked_from, mark.at, mark.edit) == (
        UPSTREAM_PARENT,
        None,
        {},
    )
    assert compare(upstream.load(UPSTREAM_PARENT), events).same, "a copy of its parent"
    before = (upstream.directory / f"{UPSTREAM_FORK}.jsonl").read_bytes()

    w = Weather(upstream, model=weather_model())
    fork = w.agent.fork(UPSTREAM_FORK, at=4, result="Fog in Lisbon.")
    assert fork.final_output == "heard: Fog in Lisbon."
    mine = upstream.load(fork.run_id)
    assert [e.to_dict() for e in mine[:3]] == [e.to_dict() for e in events[:3]], "copied as read"
    assert "ts" not in mine[0].to_dict(), "a copy keeps its own times"
    ours = json.loads((upstream.directory / f"{fork.run_id}.jsonl").read_bytes().splitlines()[3])
    assert {"type", "forked_from", "started_at", "ended_at"} <= set(ours), "upstream's fields"

    cont = w.agent.fork(UPSTREAM_FORK, "And in Porto?")
    assert cont.final_output == "heard: Sunny in Porto."
    marks = [e.forked_from for e in upstream.load(cont.run_id) if e.type == FORK]
    assert marks == [UPSTREAM_PARENT, UPSTREAM_FORK]
    assert w.ran == ["Porto"]
    assert (upstream.directory / f"{UPSTREAM_FORK}.jsonl").read_bytes() == before


# -- retention ------------------------------------------------------------------------------------


def test_prune_keeps_a_parent_whose_fork_is_kept(store: FileStore) -> None:
    w = Weather(store)
    parent = w.agent.run("What is the weather in Oslo?").run_id
    fork = w.agent.fork(parent, at=4, result="Snow.").run_id
    lonely = w.agent.run("What is the weather in Rome?").run_id
    pin(store, fork)
    later = time.time() + 10 * 86400
    report = prune(store, older_than="1d", now=later)
    kept = {k.run_id: (k.reason, k.detail) for k in report.kept}
    assert kept == {fork: (PINNED, "pinned"), parent: (HAS_KEPT_FORKS, f"its fork {fork} is kept")}
    assert [r.run_id for r in report.removed] == [lonely]


# -- a real process -------------------------------------------------------------------------------

FORK_IN_CHILD = "\nagent.fork(PARENT, at=AT, result='Snow in London.', fork_id='f1')"
RESUME_IN_CHILD = CHILD_AGENT + "\nr = agent.resume('f1')\nprint(r.status)\nprint(r.final_output)"


def test_a_fork_killed_in_its_process_is_finished_by_another_after_its_parent_is_deleted(
    children: Children, fake_openai: FakeOpenAI
) -> None:
    made = children.run(
        CHILD_AGENT + "\nprint(agent.run('What is the weather in London and Paris?').run_id)"
    )
    parent = made.stdout.strip()
    assert sorted(counted(children.count_file)) == ["London", "Paris"]
    path = children.runs_dir / f"{parent}.jsonl"
    events = FileStore(children.runs_dir).load(parent)
    at = next(  # the parallel calls' results come in either order
        i for i, e in enumerate(events, 1) if e.type == "tool_result" and e.args["city"] == "London"
    )
    requests = len(fake_openai.requests)

    # Its first write (the copy, its marker, run_start and results) is saved, then it is killed.
    code = CHILD_AGENT + f"\nPARENT, AT = {parent!r}, {at}" + FORK_IN_CHILD
    proc = children.spawn(code, BLOCK_AFTER="tool_result")
    fork_log = children.runs_dir / "f1.jsonl"
    wait_for(lambda: fork_log.exists() and b'"run_id":"f1"' in fork_log.read_bytes(), what="saved")
    children.kill(proc)
    kept = ["tool_result"] if at == 5 else []  # Paris's result, when it came after London's
    assert types(FileStore(children.runs_dir).load("f1"))[at - 1 :] == [
        "fork", "run_start", "tool_result", *kept,
    ]  # fmt: skip
    assert len(fake_openai.requests) == requests, "killed before the model call"
    path.unlink()

    done = children.run(RESUME_IN_CHILD)
    status, answer = done.stdout.splitlines()
    assert status == COMPLETED
    assert answer == "Snow in London. The weather in Paris is sunny and 22C."
    assert sorted(counted(children.count_file)) == ["London", "Paris"], "no tool ran again"


# -- PostgreSQL -----------------------------------------------------------------------------------


def test_forks_and_replays_on_a_postgres_store(pg_stores: PgStores) -> None:
    store = pg_stores()
    w = Weather(store)
    parent = w.agent.run("What is the weather in Oslo and Rome?").run_id
    before = [e.to_dict() for e in store.load(parent)]
    oslo = result_line(store, parent, "Oslo")
    fork = w.agent.fork(parent, at=oslo, result="Snow in Oslo.")
    assert fork.final_output == "heard: Snow in Oslo. | Sunny in Rome."
    replay = w.agent.replay(parent, model=weather_model("second"))
    assert replay.final_output == "heard: Sunny in Oslo. | Sunny in Rome."
    assert w.ran == ["Oslo", "Rome"]
    assert [e.to_dict() for e in store.load(parent)] == before
    assert last_fork(store.load(fork.run_id)).at == oslo  # type: ignore[union-attr]
    assert compare(store.load(parent), store.load(replay.run_id)).same


def test_a_model_made_for_a_fork_lets_its_connections_go(
    store: FileStore, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[str] = []
    close = OpenAIModel.aclose

    async def counting(self: OpenAIModel) -> None:
        closed.append(self.name)
        await close(self)

    monkeypatch.setattr(OpenAIModel, "aclose", counting)
    agent = WeatherAgents(fake_openai)(store=store)
    parent = agent.run("What is the weather in Oslo?").run_id
    closed.clear()
    agent.fork(parent, "And Rome?", at=2, model="gpt-4o")
    agent.replay(parent, model="gpt-4.1")
    assert sorted(closed) == ["gpt-4.1", "gpt-4o", "gpt-4o-mini", "gpt-4o-mini"]
