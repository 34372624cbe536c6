"""Races: several processes (or tasks) resuming one run at once, and stores sharing a log."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
from pathlib import Path

import pytest

from agentor.engine.events import GENERATION, MESSAGE, RUN_START, Event
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from agentor.errors import RunLockedError
from tests import crashkit
from tests.crashkit import ANSWERS
from tests.openai_server import FakeOpenAI


@pytest.fixture
def script():
    return crashkit.Script()


@pytest.fixture
def srv(script):
    with FakeOpenAI(script) as server:
        yield server


def interrupted_run(tmp_path: Path, srv: FakeOpenAI) -> tuple[Path, str, bytes]:
    """A parallel run killed right after its two tool calls were recorded (no tool ran)."""
    runs = tmp_path / "runs"
    cfg = {
        "dir": str(runs),
        "url": srv.url,
        "scenario": "parallel",
        "action": "start",
        "kill_after": 4,
        "tool_log": str(tmp_path / "tools.log"),
    }
    proc = crashkit.spawn(cfg)
    assert proc.wait(timeout=60) == -signal.SIGKILL
    run_id = crashkit.only_run(runs)
    assert crashkit.tool_runs(tmp_path / "tools.log") == {}
    return runs, run_id, FileStore(runs).path(run_id).read_bytes()


async def interrupted_copy(tmp_path: Path, srv: FakeOpenAI) -> tuple[Path, str]:
    """The same state as `interrupted_run`, made in this process: a finished run cut after its
    first four events (the crash tests prove a kill leaves exactly such a prefix)."""
    runs = tmp_path / "runs"
    agent = crashkit.build_agent("parallel", FileStore(runs), srv.url)
    result = await agent.arun(crashkit.WEATHER_PROMPT)
    path = FileStore(runs).path(result.run_id)
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:4]))
    return runs, result.run_id


@pytest.mark.slow
def test_four_processes_resume_at_once_exactly_one_proceeds(tmp_path, srv, script):
    runs, run_id, before = interrupted_run(tmp_path, srv)
    # The winner's model call waits until the three others have given up: it holds the run
    # all along, however slow this machine is.
    script.gate = threading.Event()
    barrier = tmp_path / "go"
    procs = []
    for i in range(4):
        cfg = {
            "dir": str(runs),
            "url": srv.url,
            "scenario": "parallel",
            "action": "resume",
            "run_id": run_id,
            "tool_log": str(tmp_path / "tools.log"),
            "ready": str(tmp_path / f"ready{i}"),
            "barrier": str(barrier),
            "out": str(tmp_path / f"out{i}.json"),
        }
        procs.append(crashkit.spawn(cfg))
    try:
        crashkit.wait_for(
            lambda: all((tmp_path / f"ready{i}").exists() for i in range(4)),
            timeout=60,
            what="all four resumers to be ready",
        )
        barrier.touch()  # all four go at the same moment
        crashkit.wait_for(
            lambda: len(list(tmp_path.glob("out*.json"))) >= 3,
            timeout=60,
            what="three resumers to give up while the fourth holds the run",
        )
        script.gate.set()
        codes = [p.wait(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert codes == [0, 0, 0, 0]

    outs = [json.loads((tmp_path / f"out{i}.json").read_text()) for i in range(4)]
    winners = [o for o in outs if "error" not in o]
    losers = [o for o in outs if "error" in o]
    assert len(winners) == 1, outs
    assert winners[0]["status"] == COMPLETED
    assert winners[0]["final_output"] == ANSWERS["parallel"]
    assert len(losers) == 3
    for o in losers:
        assert o["error"] == "RunLockedError", o
        assert o["holder"] == winners[0]["pid"], "the refusal names the process holding the run"
        assert str(winners[0]["pid"]) in o["message"]

    assert crashkit.tool_runs(tmp_path / "tools.log") == {
        "get_weather London": 1,
        "get_weather Paris": 1,
    }, "no tool ran twice"
    after = FileStore(runs).path(run_id).read_bytes()
    assert after.startswith(before)
    events, bad = FileStore(runs).load_with_errors(run_id)
    assert bad == []
    assert [e.type for e in events].count(RUN_START) == 2, "exactly one new segment"
    assert FileStore(runs).is_locked(run_id) is False


async def test_two_resumes_in_one_process_one_is_refused(tmp_path, srv, script):
    """What two TUI workers pressing `r` on one run do in the engine."""
    runs, run_id = await interrupted_copy(tmp_path, srv)
    script.gate = threading.Event()  # the winner's model call waits for the loser's refusal
    store = FileStore(runs)
    tool_log = str(tmp_path / "tools.log")
    agents = [crashkit.build_agent("parallel", store, srv.url, tool_log) for _ in range(2)]
    tasks = [asyncio.ensure_future(a.aresume(run_id)) for a in agents]
    first, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED, timeout=60)
    script.gate.set()
    assert len(first) == 1
    with pytest.raises(RunLockedError) as refused:
        first.pop().result()
    assert refused.value.pid == os.getpid()
    [winner] = [t for t in tasks if not t.done() or t.exception() is None]
    done = await winner
    assert (done.status, done.final_output) == (COMPLETED, ANSWERS["parallel"])
    assert crashkit.tool_runs(tool_log) == {"get_weather London": 1, "get_weather Paris": 1}
    assert [e.type for e in FileStore(runs).load(run_id)].count(RUN_START) == 2


async def test_reading_a_run_while_it_is_resumed_does_not_corrupt_its_log(tmp_path, srv, script):
    """`load` on the resuming store (as a viewer in the same process might) while it writes."""
    runs, run_id = await interrupted_copy(tmp_path, srv)
    script.delay = 0.05
    store = FileStore(runs)
    agent = crashkit.build_agent("parallel", store, srv.url, str(tmp_path / "tools.log"))
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            store.load(run_id)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        result = await agent.aresume(run_id)
    finally:
        stop.set()
        thread.join()
    assert result.status == COMPLETED
    events, bad = FileStore(runs).load_with_errors(run_id)
    assert bad == []
    in_memory = [e.messages for e in result.events if e.type == GENERATION]
    assert [e.messages for e in events if e.type == GENERATION] == in_memory


def test_stores_taking_turns_on_one_log_keep_valid_deltas(tmp_path):
    """A store whose view of the log went stale (another process appended) re-reads it."""
    first, second = FileStore(tmp_path), FileStore(tmp_path)
    msgs = [{"role": "user", "content": "hi"}]
    written = []

    def gen(store: FileStore, n: int) -> None:
        msgs.append({"role": "assistant", "content": f"reply {n}"})
        e = Event(GENERATION, turn=n, messages=list(msgs))
        store.append("r", e)
        written.append(e)

    first.append("r", Event(RUN_START, messages=msgs[:1]))
    gen(first, 1)
    gen(first, 2)
    second.load("r")
    gen(second, 3)
    gen(first, 4)  # `first` last saw the log before generation 3
    gen(second, 5)
    first.append("r", Event(MESSAGE, text="end"))
    events, bad = FileStore(tmp_path).load_with_errors("r")
    assert bad == []
    loaded = [e for e in events if e.type == GENERATION]
    assert [e.messages for e in loaded] == [e.messages for e in written]


# -- the TUI's data layer reading a run while it is written ----------------------------------------


def _without_requests(e: Event) -> dict:
    d = e.to_dict()
    d.pop("messages", None)
    d.pop("messages_delta", None)
    return d


def _write_in_pieces(
    path: Path, data: bytes, seed: int, reading: threading.Event, done: threading.Event
) -> None:
    """Append `data` line by line, each line in up to four writes: readers see torn lines."""
    import os
    import random
    import time

    rng = random.Random(seed)
    reading.wait(10)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        for line in data.splitlines(keepends=True):
            cuts = sorted(rng.sample(range(1, len(line)), min(3, len(line) - 1)))
            for a, b in zip([0, *cuts], [*cuts, len(line)], strict=True):
                os.write(fd, line[a:b])
                time.sleep(rng.choice([0, 0.0002, 0.001]))
    finally:
        os.close(fd)
        done.set()


def _logs_to_replay(tmp_path: Path) -> list[bytes]:
    from tests.test_reliability_fuzz import base_logs

    big = Event("tool_result", name="dump", result="x" * 1_000_000).to_json().encode() + b"\n"
    logs = list(base_logs())
    return [*logs, logs[0] + big + logs[0]]


@pytest.mark.slow
def test_a_run_being_written_never_shows_a_torn_event_in_the_tui_data_layer(tmp_path):
    from agentor.sources.directory.runlog import RunLog
    from agentor.sources.directory.source import DirectorySource

    for n, data in enumerate(_logs_to_replay(tmp_path)):
        runs = tmp_path / f"runs{n}"
        runs.mkdir()
        path = runs / "live.jsonl"
        expected = [_without_requests(e) for e in _decode_all(data)]
        index = DirectorySource(runs)
        index.scan()
        reading, done = threading.Event(), threading.Event()
        writer = threading.Thread(target=_write_in_pieces, args=(path, data, n, reading, done))
        writer.start()
        log = None
        seen = 0
        events_before = 0
        try:
            while True:
                finished = done.is_set()
                if log is None and path.exists():
                    log = RunLog(path)
                elif log is not None:
                    log.poll()
                    assert not log.reset_happened, "an appended log is never re-read"
                if log is not None:
                    for i in range(seen, len(log)):
                        item = log.item(i)
                        assert isinstance(item, Event), f"line {i} shown as {item}"
                        assert _without_requests(item) == expected[i]
                    seen = len(log)
                index.refresh_paths([path])
                row = index.get("live")
                if row is not None and row.summary is not None and row.summary.events:
                    assert row.summary.bad_lines == 0 and row.error is None, row
                    assert events_before <= row.summary.events <= len(expected)
                    events_before = row.summary.events
                reading.set()
                if finished:
                    break
        finally:
            writer.join()
        assert log is not None and len(log) == len(expected) == seen
        loaded = FileStore(runs).load("live")
        for i, e in enumerate(loaded):
            if e.type == GENERATION and e.messages is not None:
                assert log.request(i) == e.messages
        log.close()
        assert index.get("live").summary.events == len(expected)


def _decode_all(data: bytes) -> list[Event]:
    from agentor.engine.log.format import LogDecoder

    decoder = LogDecoder()
    return [decoder.decode(line) for line in data.splitlines(keepends=True)]


def test_the_tui_data_layer_and_the_engine_repair_of_a_torn_tail(tmp_path):
    """A crash left a torn line; the viewer waits on it; the resumer's repair then appends."""
    from agentor.sources.directory.runlog import RunLog
    from agentor.sources.directory.source import DirectorySource

    store = FileStore(tmp_path)
    store.append_many("r", [Event(RUN_START, messages=[{"role": "user", "content": "hi"}])])
    with open(store.path("r"), "ab") as f:
        f.write(b'{"type": "generation", "turn": 1, "mess')
    log = RunLog(store.path("r"))
    index = DirectorySource(tmp_path)
    index.scan()
    assert len(log) == 1 and log.pending > 0
    assert index.get("r").summary.events == 1 and index.get("r").summary.bad_lines == 0

    store2 = FileStore(tmp_path)
    store2.load("r")
    store2.append_many("r", [Event(MESSAGE, text="after the repair")])
    log.poll()
    index.refresh_paths([store.path("r")])
    assert [log.item(i).type for i in range(len(log))] == [RUN_START, MESSAGE]
    assert index.get("r").summary.events == 2 and index.get("r").summary.bad_lines == 0
