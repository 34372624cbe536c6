"""FileStore and MemoryStore: file format, linear growth, torn tails, run ids, symlinks, locks."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, RunLockedError, function_tool
from agentor.engine.events import Event, Usage
from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.engine.store.run_ids import validate_run_id
from agentor.testing import ScriptedModel
from tests.conftest import log_lines
from tests.openai_server import FakeOpenAI

RUN = "r1"


def events(n: int) -> list[Event]:
    return [Event("message", text=f"event {i}", turn=i) for i in range(n)]


def test_directory_is_private_and_each_run_is_one_private_file(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "a" / "runs")
    assert stat.S_IMODE((tmp_path / "a" / "runs").stat().st_mode) == 0o700
    for e in events(3):
        store.append(RUN, e)
    path = tmp_path / "a" / "runs" / "r1.jsonl"
    assert store.path(RUN) == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [d["text"] for d in log_lines(path)] == ["event 0", "event 1", "event 2"]
    assert path.read_bytes().count(b"\n") == 3
    assert store.load(RUN) == events(3)
    assert isinstance(store, Store) and isinstance(MemoryStore(), Store)


def test_append_many_is_one_line_per_event_and_skips_transient_ones(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.append_many(RUN, [events(1)[0], Event("text_delta", text="tok"), *events(3)[1:]])
    assert [d["type"] for d in log_lines(store.path(RUN))] == ["message"] * 3
    store.append_many(RUN, [Event("text_delta", text="only transient")])
    assert len(log_lines(store.path(RUN))) == 3


def test_list_runs_and_unknown_runs(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    for run_id in ("b", "a", "c-1_X"):
        store.append(run_id, events(1)[0])
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "bad name.jsonl").write_text("")
    (tmp_path / "a.jsonl.torn").write_text("")
    assert store.list_runs() == ["a", "b", "c-1_X"]
    with pytest.raises(KeyError, match="nope"):
        store.load("nope")


# -- compact generations -------------------------------------------------------------------------


async def test_compact_log_loads_back_the_exact_requests_sent(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    @function_tool
    def lookup(key: str) -> str:
        return f"value of {key} " * 20

    fake_openai.script = [
        {"calls": [["lookup", {"key": "a"}], ["lookup", {"key": "b"}]]},
        {"calls": [["lookup", {"key": "c"}]]},
        {"text": "done"},
    ]
    store = FileStore(tmp_path)
    agent = Agentor(
        "A",
        instructions="Be brief.",
        tools=[lookup],
        store=store,
        base_url=fake_openai.url,
        api_key="sk-test",
        max_retries=0,
    )
    result = await agent.arun("look things up")

    lines = log_lines(store.path(result.run_id))
    gens = [d for d in lines if d["type"] == "generation"]
    assert "messages" in gens[0] and "messages_delta" not in gens[0]
    for g in gens[1:]:
        assert "messages" not in g and g["messages_delta"]["keep"] > 0
    loaded = [e for e in FileStore(tmp_path).load(result.run_id) if e.type == "generation"]
    assert [g.messages for g in loaded] == [r["messages"] for r in fake_openai.requests]
    assert [e.to_dict() for e in FileStore(tmp_path).load(result.run_id)] == [
        e.to_dict() for e in result.events
    ]


@pytest.mark.parametrize("compact", [True, False])
def test_unknown_fields_and_types_survive_the_file(tmp_path: Path, compact: bool) -> None:
    store = FileStore(tmp_path, compact=compact)
    msgs = [{"role": "user", "content": "hi", "name": "x"}]
    written = [
        Event("generation", turn=1, messages=msgs, extra={"future": [1]}),
        Event("approval_request", name="rm", extra={"why": "asks first"}),
        Event("generation", turn=2, messages=[*msgs, {"role": "user", "content": "more"}]),
    ]
    store.append_many(RUN, written)
    assert [e.to_dict() for e in FileStore(tmp_path).load(RUN)] == [e.to_dict() for e in written]


def long_run(store: Any, turns: int = 100, size: int = 4096) -> tuple[Any, ScriptedModel]:
    @function_tool
    def fetch(page: int) -> str:
        return (f"page {page}: " + "x" * size)[:size]

    model = ScriptedModel([])
    model.replies = [model.calls(("fetch", {"page": i})) for i in range(turns)]
    model.replies.append(ScriptedModel.text("read them all"))
    agent = Agentor("Reader", model=model, tools=[fetch], store=store, max_turns=turns + 1)
    return agent, model


async def test_a_100_turn_run_is_at_least_20x_smaller_compact_than_full(tmp_path: Path) -> None:
    compact, full = FileStore(tmp_path / "compact"), FileStore(tmp_path / "full", compact=False)
    agent, model = long_run(compact)
    first = await agent.arun("read 100 pages")
    agent, _ = long_run(full)
    second = await agent.arun("read 100 pages")
    assert first.status == second.status == "completed"

    small = compact.path(first.run_id).stat().st_size
    big = full.path(second.run_id).stat().st_size
    assert big >= 20 * small, (small, big)
    # The full form writes every request whole; the compact one only the first.
    full_gens = [d for d in log_lines(full.path(second.run_id)) if d["type"] == "generation"]
    assert len(full_gens) == 101 and all("messages" in g for g in full_gens)
    # And both load back the requests the model really received.
    for store, run_id in ((compact, first.run_id), (full, second.run_id)):
        loaded = [e.messages for e in store.load(run_id) if e.type == "generation"]
        assert loaded == model.requests


# -- torn and corrupt lines ----------------------------------------------------------------------


def test_a_torn_tail_is_skipped_on_load_and_repaired_by_the_next_append(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = FileStore(tmp_path)
    store.append_many(RUN, events(3))
    path = store.path(RUN)
    whole = path.read_bytes()
    torn = Event("message", text="never finished").to_json().encode()[:25]
    with open(path, "ab") as f:
        f.write(torn)

    caplog.set_level(logging.WARNING, logger="agentor")
    reader = FileStore(tmp_path)
    assert reader.load(RUN) == events(3)
    assert any("torn" in r.getMessage() for r in caplog.records if r.name == "agentor")
    loaded, bad = reader.load_with_errors(RUN)
    assert len(loaded) == 3 and len(bad) == 1 and bad[0].lineno == 4
    assert bad[0].offset == len(whole) and bad[0].raw == torn

    FileStore(tmp_path).append(RUN, Event("message", text="after the crash"))
    data = path.read_bytes()
    assert data.startswith(whole) and data.endswith(b"\n")
    assert [d["text"] for d in log_lines(path)] == [
        "event 0",
        "event 1",
        "event 2",
        "after the crash",
    ]
    assert FileStore(tmp_path).load_with_errors(RUN)[1] == []
    # The fragment is kept aside, not silently dropped.
    assert (tmp_path / "r1.jsonl.torn").read_bytes() == torn + b"\n"


def test_a_corrupt_line_in_the_middle_is_skipped_and_the_rest_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = FileStore(tmp_path)
    store.append_many(RUN, events(2))
    with open(store.path(RUN), "ab") as f:
        f.write(b'{"type": "message", "text": \xff garbage\n[1, 2]\n{"no_type": 1}\n')
    store.append(RUN, events(3)[2])
    caplog.set_level(logging.WARNING, logger="agentor")
    assert FileStore(tmp_path).load(RUN) == events(3)
    _, bad = FileStore(tmp_path).load_with_errors(RUN)
    assert [b.lineno for b in bad] == [3, 4, 5]
    [said] = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert said.startswith(f"run {RUN}: skipped 3 bad lines; the first: line 3 (byte ")  # once


async def test_resume_after_a_crash_tore_a_generation_line(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    agent, model = long_run(store, turns=3, size=100)
    first = await agent.arun("read 3 pages")
    path = store.path(first.run_id)
    lines = path.read_bytes().splitlines(keepends=True)
    types = [json.loads(line)["type"] for line in lines]
    # Keep turn 1 whole and half of the second generation, as a kill mid-write leaves it.
    second_gen = [i for i, t in enumerate(types) if t == "generation"][1]
    path.write_bytes(b"".join(lines[:second_gen]) + lines[second_gen][:40])

    agent, model = long_run(FileStore(tmp_path), turns=3, size=100)
    model.replies = model.replies[1:]  # turn 1 is on record
    result = await agent.aresume(first.run_id)

    assert result.status == "completed"
    lines = log_lines(path)  # every line is JSON again
    assert [d["type"] for d in lines[:second_gen]] == types[:second_gen]
    loaded = [e.messages for e in FileStore(tmp_path).load(first.run_id) if e.type == "generation"]
    assert loaded[1:] == model.requests


# -- run ids and symlinks -------------------------------------------------------------------------

BAD_IDS = ["../x", "", "a" * 129, "a/b", "a.b", "x y", "é", "abc\n", "/etc/passwd", None, 12]


@pytest.mark.parametrize("run_id", BAD_IDS)
def test_bad_run_ids_are_refused_before_any_file_is_touched(tmp_path: Path, run_id: Any) -> None:
    runs = tmp_path / "runs"
    store = FileStore(runs)
    calls = [
        lambda: store.path(run_id),
        lambda: store.append(run_id, events(1)[0]),
        lambda: store.append_many(run_id, events(1)),
        lambda: store.load(run_id),
        lambda: store.load_with_errors(run_id),
        lambda: store.lock(run_id).__enter__(),
        lambda: store.is_locked(run_id),
        lambda: store.lock_holder(run_id),
        lambda: validate_run_id(run_id),
        lambda: MemoryStore().append(run_id, events(1)[0]),
        lambda: MemoryStore().load(run_id),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="invalid run id"):
            call()
    assert list(runs.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def test_good_run_ids() -> None:
    for run_id in ("a", "A-b_9", "x" * 128, "cabc9046ac5040298aa362c0d6d2c5c5"):
        assert validate_run_id(run_id) == run_id


def test_never_reads_or_writes_through_a_symlink(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    store = FileStore(runs)
    target = tmp_path / "target.txt"
    target.write_text("precious\n")
    (runs / "r1.jsonl").symlink_to(target)
    with pytest.raises(OSError, match="symlink"):
        store.append(RUN, events(1)[0])
    with pytest.raises(OSError, match="symlink"):
        store.load(RUN)
    with pytest.raises(OSError), store.lock(RUN):
        pass
    # A dangling link must not create its target either.
    (runs / "r2.jsonl").symlink_to(tmp_path / "created.txt")
    with pytest.raises(OSError):
        store.append("r2", events(1)[0])
    assert target.read_text() == "precious\n"
    assert not (tmp_path / "created.txt").exists()


# -- locks ---------------------------------------------------------------------------------------


def test_file_store_lock_is_exclusive_and_released(tmp_path: Path) -> None:
    store, other = FileStore(tmp_path), FileStore(tmp_path)
    assert not store.is_locked(RUN)
    with store.lock(RUN):
        store.append(RUN, events(1)[0])  # the holder writes through its own descriptor
        assert store.is_locked(RUN) and other.is_locked(RUN)
        assert other.lock_holder(RUN) == os.getpid()
        for contender in (store, other):
            with pytest.raises(RunLockedError) as refused, contender.lock(RUN):
                pass
            assert refused.value.pid == os.getpid() and refused.value.run_id == RUN
    assert not store.is_locked(RUN) and not other.is_locked(RUN)
    assert other.lock_holder(RUN) is None
    with other.lock(RUN):
        pass
    assert store.load(RUN) == events(1)


def test_memory_store_lock_is_in_process(tmp_path: Path) -> None:
    store = MemoryStore()
    with store.lock(RUN):
        assert store.is_locked(RUN)
        with pytest.raises(RunLockedError), store.lock(RUN):
            pass
    assert not store.is_locked(RUN)
    store.append_many(RUN, events(2))
    assert store.load(RUN) == events(2) and store.list_runs() == [RUN]
    with pytest.raises(KeyError):
        store.load("other")


def test_usage_totals_survive_the_file(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.append(RUN, Event("generation", turn=1, usage=Usage(1, 2, 3), messages=[]))
    assert store.load(RUN)[0].usage == Usage(1, 2, 3)


def test_a_load_racing_the_holders_append_does_not_corrupt_later_deltas(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The TUI may read a run through the same FileStore that a resume is writing it with. A
    # load that read the file just before an append must not leave its (older) view behind
    # as the holder's encoder, or the next generation's delta names the wrong base.
    import agentor.engine.store.file as store_mod

    store = FileStore(tmp_path)
    reqs = [[{"role": "user", "content": f"m{i}"} for i in range(n)] for n in (1, 2, 3)]
    real_split = store_mod.split_lines
    raced = []

    def split_after_an_append(data: bytes) -> Any:
        if not raced:  # the holder appends between the reader's read and its bookkeeping
            raced.append(True)
            store.append(RUN, Event("generation", turn=2, messages=reqs[1]))
        return real_split(data)

    with store.lock(RUN):
        store.append(RUN, Event("generation", turn=1, messages=reqs[0]))
        monkeypatch.setattr(store_mod, "split_lines", split_after_an_append)
        store.load(RUN)
        monkeypatch.setattr(store_mod, "split_lines", real_split)
        store.append(RUN, Event("generation", turn=3, messages=reqs[2]))
    assert [e.messages for e in FileStore(tmp_path).load(RUN)] == reqs


def test_each_append_and_each_append_many_is_fsynced_once_after_its_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/log-format.md: each append is flushed and fsynced. A kill cannot tell (the page
    cache outlives a process), so the calls are counted: one `os.fsync` of the log per
    `append` (the long way, and the short one a held run takes) and per `append_many`, made
    once the event's line is in the file."""
    store = FileStore(tmp_path / "runs")
    path = tmp_path / "runs" / f"{RUN}.jsonl"
    synced: list[tuple[int, int]] = []  # (inode, lines in the file) at each fsync
    real = os.fsync

    def spy(fd: int) -> None:
        synced.append((os.fstat(fd).st_ino, path.read_bytes().count(b"\n")))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    written = 0

    def after(writing: Any, n: int) -> None:
        nonlocal written
        synced.clear()
        writing()
        written += n
        assert synced == [(path.stat().st_ino, written)]

    for e in events(2):  # free: each append opens the log
        after(lambda e=e: store.append(RUN, e), 1)
    after(lambda: store.append_many(RUN, events(3)), 3)
    with store.lock(RUN):  # held, as a run's loop holds it: the short way
        for e in events(3):
            after(lambda e=e: store.append(RUN, e), 1)
        after(lambda: store.append_many(RUN, events(4)), 4)
    assert len(log_lines(path)) == written == 12
