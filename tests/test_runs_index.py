"""The directory source (`agentor.sources`): the run list of a directory and the lazy log of one
run.

Real files in tmp_path, written by the real engine (an in-process scripted model) or copied
from the upstream fixtures; statuses and summaries must be exactly what `agentor.engine.history`
derives from `FileStore.load`.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentor import Agentor, function_tool
from agentor.engine.events import Event, Usage
from agentor.engine.history import event_time, summarize
from agentor.engine.log.format import BadLine, LogDecoder
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.errors import ModelError
from agentor.sources.directory import source as directory_source
from agentor.sources.directory.runlog import RunLog
from agentor.sources.directory.source import DirectorySource

ROOT = Path(__file__).resolve().parent.parent
from tests.conftest import FIXTURES  # noqa: E402

# -- runs written by the real engine -------------------------------------------------------------


class Script:
    """A `Model` answering from a list: a ModelResponse, an exception to raise, or "hang"."""

    name = "scripted"

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.waiting = asyncio.Event()

    async def generate(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], on_text=None
    ) -> ModelResponse:
        reply = self.replies.pop(0) if self.replies else "hang"
        if reply == "hang":
            self.waiting.set()
            await asyncio.Event().wait()
        if isinstance(reply, BaseException):
            raise reply
        return reply


def calls(*pairs: tuple[str, dict[str, Any]], turn: int = 1) -> ModelResponse:
    made = [
        {
            "id": f"c{turn}_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(pairs)
    ]
    return ModelResponse(calls=made, usage=Usage(10, 2, 12))


def text(answer: str) -> ModelResponse:
    return ModelResponse(text=answer, usage=Usage(20, 3, 23))


@function_tool
def get_weather(city: str) -> str:
    """Get the weather.

    Args:
        city: The city.
    """
    if city == "Atlantis":
        raise LookupError("no such city")
    return f"The weather in {city} is sunny and 22C."


def agent(store: FileStore, *replies: Any, name: str = "Weather", max_turns: int = 10) -> Agentor:
    return Agentor(
        name=name,
        model=Script(*replies),
        instructions="You are a weather bot.",
        tools=[get_weather],
        store=store,
        max_turns=max_turns,
    )


async def interrupted_run(store: FileStore, *replies: Any) -> str:
    """A run cancelled while the model is thinking: left incomplete, unlocked."""
    before = set(store.list_runs())
    a = agent(store, *replies, "hang")
    task = asyncio.ensure_future(a.arun("What is the weather in Oslo?"))
    await asyncio.wait_for(a.model.waiting.wait(), 10)  # type: ignore[attr-defined]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (run_id,) = set(store.list_runs()) - before
    return run_id


async def engine_runs(directory: Path, compact: bool = True) -> dict[str, str]:
    """One run per outcome, written by the engine; returns {scenario: run id}."""
    store = FileStore(directory, compact=compact)
    out: dict[str, str] = {}

    async def run(name: str, a: Agentor, prompt: str) -> None:
        result = await a.arun(prompt)
        out[name] = result.run_id or ""

    await run("completed", agent(store, calls(("get_weather", {"city": "Paris"})), text("Sunny.")),
              "Weather in Paris?")  # fmt: skip
    await run(
        "parallel",
        agent(
            store,
            calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})),
            text("Both sunny."),
        ),
        "Paris and Oslo?",
    )
    await run("tool_error", agent(store, calls(("get_weather", {"city": "Atlantis"})),
              text("Unknown.")), "Atlantis?")  # fmt: skip
    await run("failed", agent(store, ModelError("HTTP 500: boom")), "Fail please")
    await run(
        "max_turns",
        agent(
            store,
            calls(("get_weather", {"city": "A"}), turn=1),
            calls(("get_weather", {"city": "B"}), turn=2),
            max_turns=2,
        ),
        "Loop",
    )
    out["interrupted"] = await interrupted_run(store, calls(("get_weather", {"city": "Oslo"})))
    resumed = await interrupted_run(store, calls(("get_weather", {"city": "Rome"})))
    await agent(store, text("Rome is sunny.")).aresume(resumed)
    out["resumed"] = resumed
    return out


EXPECTED = {
    "completed": "completed",
    "parallel": "completed",
    "tool_error": "completed",
    "failed": "failed",
    "max_turns": "max_turns",
    "interrupted": "interrupted",
    "resumed": "completed",
}


def assert_summaries_match_the_engine(index: DirectorySource, directory: Path) -> None:
    store = FileStore(directory)
    for run_id in store.list_runs():
        row = index.get(run_id)
        assert row is not None and row.complete
        events, bad = store.load_with_errors(run_id)
        assert row.summary == summarize(run_id, events, bad_lines=len(bad))


# -- the run list: statuses ----------------------------------------------------------------------


def test_upstream_fixture_runs_list_with_the_statuses_of_the_manifest() -> None:
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    index = DirectorySource(FIXTURES)  # read-only: nothing is written there
    index.scan()
    assert index.error is None
    assert {r.run_id for r in index.rows()} == {m["run_id"] for m in manifest.values()}
    for scenario, m in manifest.items():
        row = index.get(m["run_id"])
        assert row is not None, scenario
        assert (row.status, row.error, row.complete) == (m["expect"], None, True), scenario
    assert_summaries_match_the_engine(index, FIXTURES)


def test_quick_rows_have_the_right_status_and_fill_completes_them(monkeypatch, tmp_path) -> None:
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 0)  # as in a directory of 10,000 runs
    index = DirectorySource(FIXTURES)
    index.scan()
    for scenario, m in manifest.items():
        row = index.get(m["run_id"])
        assert row is not None and row.status == m["expect"], scenario
        assert row.summary is not None and row.summary.agent == "Travel Agent"
        assert row.summary.first_prompt and row.summary.started_at
    # Only the first line and the last segment's boundary were decoded, not every line.
    total_lines = sum(p.read_bytes().count(b"\n") for p in FIXTURES.glob("*.jsonl"))
    assert index.lines_decoded < total_lines / 2
    assert index.incomplete > 0
    filled = index.fill()
    assert index.incomplete == 0 and len(filled) > 0
    assert_summaries_match_the_engine(index, FIXTURES)
    assert index.fill() == []


async def test_engine_written_runs_list_with_their_statuses(tmp_path: Path) -> None:
    for compact in (True, False):
        directory = tmp_path / f"compact-{compact}"
        ids = await engine_runs(directory, compact=compact)
        index = DirectorySource(directory)
        index.scan()
        got = {name: index.get(run_id).status for name, run_id in ids.items()}  # type: ignore[union-attr]
        assert got == EXPECTED
        assert_summaries_match_the_engine(index, directory)
        resumed = index.get(ids["resumed"])
        assert resumed is not None and resumed.summary is not None
        assert resumed.summary.segments == 2
        failed = index.get(ids["failed"])
        assert failed is not None and failed.summary is not None
        assert "HTTP 500" in (failed.summary.error or "")


async def test_rows_are_newest_first(tmp_path: Path) -> None:
    ids = await engine_runs(tmp_path)
    index = DirectorySource(tmp_path)
    index.scan()
    starts = [r.summary.started_at for r in index.rows()]  # type: ignore[union-attr]
    assert starts == sorted(starts, reverse=True)
    assert index.rows()[0].run_id == ids["resumed"]


# -- the run list: live changes ------------------------------------------------------------------


async def test_an_appended_event_is_read_alone_and_moves_the_status(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    run_id = await interrupted_run(store, calls(("get_weather", {"city": "Oslo"})))
    index = DirectorySource(tmp_path)
    index.scan()
    row = index.get(run_id)
    assert row is not None and row.status == "interrupted"
    path = store.path(run_id)
    size = path.stat().st_size

    before = index.bytes_read
    store.append(run_id, Event("run_end", status="completed", text="done", ts=1.0))
    line = path.read_bytes()[size:]
    changes = index.refresh_paths([str(path)])
    # Only the new line is read, plus the byte before it (still the newline we stopped at).
    assert index.bytes_read - before == len(line) + 1
    assert changes.appended == {run_id: 1}
    assert changes.updated == {run_id} and not changes.added and not changes.removed
    assert row.status == "completed" and row.summary is not None
    assert row.summary.final_output == "done"

    # Nothing new: nothing read, nothing reported.
    before = index.bytes_read
    assert not index.refresh_paths([path])
    assert index.bytes_read == before


def test_a_partial_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "r1.jsonl"
    start = {"type": "run_start", "agent": "A", "started_at": 5.0, "messages": []}
    path.write_text(json.dumps(start) + "\n")
    index = DirectorySource(tmp_path)
    index.scan()
    row = index.get("r1")
    assert row is not None and row.summary is not None and row.summary.events == 1

    line = json.dumps({"type": "run_end", "status": "completed", "text": "ok"}).encode() + b"\n"
    with path.open("ab") as f:
        f.write(line[:20])
    changes = index.refresh_paths([path])
    assert changes.appended == {} and row.summary.events == 1 and row.error is None
    assert row.status == "interrupted"

    with path.open("ab") as f:
        f.write(line[20:])
    before = index.bytes_read
    changes = index.refresh_paths([path])
    assert changes.appended == {"r1": 1}
    assert index.bytes_read - before == len(line) + 1  # the partial line is read again, whole
    assert row.status == "completed" and row.summary.events == 2 and row.summary.bad_lines == 0


async def test_a_new_file_appears_and_a_deleted_one_leaves(tmp_path: Path) -> None:
    ids = await engine_runs(tmp_path)
    index = DirectorySource(tmp_path)
    index.scan()
    n = len(index.rows())

    store = FileStore(tmp_path)
    new = (await agent(store, text("Hi.")).arun("Hello")).run_id
    assert new is not None
    changes = index.refresh_paths([store.path(new)])
    assert changes.added == {new}
    assert len(index.rows()) == n + 1 and index.rows()[0].run_id == new
    assert index.get(new).status == "completed"  # type: ignore[union-attr]

    gone = ids["failed"]
    store.path(gone).unlink()
    changes = index.refresh_paths([str(store.path(gone))])
    assert changes.removed == {gone}
    assert index.get(gone) is None and len(index.rows()) == n

    # Without paths (no watcher): every file is checked.
    store.path(ids["completed"]).unlink()
    newer = (await agent(store, text("Hey.")).arun("Hey")).run_id
    changes = index.refresh()
    assert changes.removed == {ids["completed"]} and changes.added == {newer}


async def test_a_truncated_or_replaced_file_is_read_again(tmp_path: Path) -> None:
    ids = await engine_runs(tmp_path)
    index = DirectorySource(tmp_path)
    index.scan()
    store = FileStore(tmp_path)

    # Truncated: a completed run cut back to its first three lines.
    run_id = ids["completed"]
    path = store.path(run_id)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:3]))
    changes = index.refresh_paths([path])
    assert changes.updated == {run_id}
    row = index.get(run_id)
    assert row is not None and row.status == "interrupted" and row.summary.events == 3  # type: ignore[union-attr]

    # Replaced (a new inode), longer than before: not mistaken for an append.
    other = store.path(ids["failed"]).read_bytes()
    tmp = tmp_path / "swap.tmp"
    tmp.write_bytes(other + other)
    os.replace(tmp, path)
    changes = index.refresh_paths([path])
    assert changes.updated == {run_id} and run_id not in changes.appended
    assert row.status == "failed" and row.summary.segments == 2  # type: ignore[union-attr]

    # Rewritten in place (same inode), longer: the byte before the old offset tells.
    row_offset = path.stat().st_size
    pad = json.dumps({"type": "message", "text": "p" * row_offset}).encode() + b"\n"
    with path.open("r+b") as f:
        f.write(pad + b"".join(lines))
    changes = index.refresh_paths([path])
    assert changes.updated == {run_id}
    assert row.status == "completed"
    events, bad = store.load_with_errors(run_id)
    assert row.summary == summarize(run_id, events, bad_lines=len(bad))


def test_unreadable_files_are_rows_with_an_error(tmp_path: Path) -> None:
    good = {"type": "run_start", "agent": "A", "messages": [], "started_at": 1.0}
    end = {"type": "run_end", "status": "completed"}
    (tmp_path / "dir.jsonl").mkdir()
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "garbage.jsonl").write_bytes(b"\xff\xfe\x00garbage\n\x80\x81 more\n")
    (tmp_path / "torn-only.jsonl").write_bytes(b'{"type": "run_st')
    (tmp_path / "one-bad.jsonl").write_text(
        json.dumps(good) + "\n" + "{not json\n" + json.dumps(end) + "\n"
    )
    os.mkfifo(tmp_path / "fifo.jsonl")  # opening must not hang
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "one-bad.jsonl")
    # Not run logs at all: ignored.
    (tmp_path / "one-bad.jsonl.torn").write_bytes(b"torn\n")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / ".hidden.jsonl").write_text(json.dumps(good) + "\n")
    # A log whose name is no run id: listed under its whole name, with the reason.
    (tmp_path / "bad id!.jsonl").write_text(json.dumps(good) + "\n")

    index = DirectorySource(tmp_path)
    index.scan()
    rows = {r.run_id: r for r in index.rows()}
    assert set(rows) == {
        *("dir", "empty", "garbage", "torn-only", "one-bad", "fifo", "link", "bad id!.jsonl")
    }
    bad = rows["bad id!.jsonl"]
    assert (bad.status, bad.summary) == ("unreadable", None)
    assert bad.error is not None and bad.error.startswith("not a valid run id: 'bad id!' (use 1")
    assert (rows["dir"].status, rows["dir"].error) == ("unreadable", "is a directory")
    assert (rows["empty"].status, rows["empty"].error) == ("unreadable", "empty file")
    assert rows["garbage"].status == "unreadable"
    assert rows["garbage"].error.startswith("no events: 2 bad lines; first at byte 0:")  # type: ignore[union-attr]
    assert (rows["torn-only"].status, rows["torn-only"].error) == (
        "unreadable",
        "no complete line",
    )
    assert rows["one-bad"].status == "completed"
    assert rows["one-bad"].error.startswith("1 bad line; first at byte ")  # type: ignore[union-attr]
    assert rows["one-bad"].summary.bad_lines == 1  # type: ignore[union-attr]
    assert (rows["fifo"].status, rows["fifo"].error) == ("unreadable", "not a regular file")
    assert rows["link"].status == "unreadable" and "symlink" in rows["link"].error  # type: ignore[operator]
    assert rows["dir"].summary is None
    # Liveness probes and refreshes take them in stride too.
    index.refresh_liveness()
    index.refresh_paths([tmp_path / n for n in os.listdir(tmp_path)])
    assert len(index.rows()) == 8


def test_a_file_without_read_permission_is_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "secret.jsonl"
    path.write_text('{"type": "run_start"}\n')
    path.chmod(0)
    if os.geteuid() == 0:
        # root reads files whatever their mode: make the kernel's answer for this one file
        # what it would be for anybody else.
        real_open = os.open

        def refusing_open(file, flags, *args, **kwargs):
            if Path(os.fsdecode(file)).name == "secret.jsonl":
                raise PermissionError(13, "Permission denied", os.fsdecode(file))
            return real_open(file, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", refusing_open)
    index = DirectorySource(tmp_path)
    index.scan()
    row = index.get("secret")
    assert row is not None and (row.status, row.error) == ("unreadable", "permission denied")


def test_a_log_longer_than_the_tail_read_gets_its_status_from_the_end(
    monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 0)
    start = {"type": "run_start", "agent": "Big", "messages": [{"role": "user", "content": "go"}]}
    result = {"type": "tool_result", "turn": 1, "result": "x" * 2000, "call_id": "c"}
    lines = [start] + [result] * 200 + [{"type": "run_end", "status": "max_turns"}]
    (tmp_path / "big.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines))
    # And one whose last line alone is longer than the tail read.
    huge_end = {"type": "run_end", "status": "completed", "text": "y" * 200_000}
    (tmp_path / "huge-end.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in [start, result, huge_end])
    )
    index = DirectorySource(tmp_path)
    index.scan()
    big, huge = index.get("big"), index.get("huge-end")
    assert big is not None and huge is not None
    assert (big.status, big.complete, big.summary.agent) == ("max_turns", False, "Big")  # type: ignore[union-attr]
    assert (huge.status, huge.complete) == ("completed", False)
    assert index.lines_decoded == 4  # first and last line of each
    assert sorted(index.fill()) == ["big", "huge-end"]
    assert big.summary.events == 202 and big.complete  # type: ignore[union-attr]
    assert_summaries_match_the_engine(index, tmp_path)

    # An append to a quick row is folded in; the row stays incomplete until filled.
    monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 0)
    index = DirectorySource(tmp_path)
    index.scan()
    with (tmp_path / "big.jsonl").open("a") as f:
        f.write(json.dumps({"type": "run_start", "agent": "Big"}) + "\n")
    changes = index.refresh_paths([tmp_path / "big.jsonl"])
    assert changes.appended == {"big": 1}
    assert index.get("big").status == "interrupted"  # type: ignore[union-attr]


async def test_quick_and_whole_reads_agree_on_every_cut_of_a_log(
    monkeypatch, tmp_path: Path
) -> None:
    """A log cut anywhere (a crash, a torn write): the head-and-tail row says what the whole
    file says, for everything a quick row promises."""
    ids = await engine_runs(tmp_path / "src")
    logs = [(tmp_path / "src" / f"{ids['resumed']}.jsonl").read_bytes()]
    logs += [p.read_bytes() for p in FIXTURES.glob("*.jsonl")]  # fork, message events, ...
    quick, whole = tmp_path / "quick", tmp_path / "whole"
    quick.mkdir()
    whole.mkdir()
    for n, data in enumerate(logs):
        cuts = {i + d for i, b in enumerate(data) if b == 0x0A for d in (0, 1, 2)}
        for cut in sorted(c for c in cuts if c <= len(data)):
            for d in (quick, whole):
                (d / f"r{n}_{cut}.jsonl").write_bytes(data[:cut])
    monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 0)
    q = DirectorySource(quick)
    q.scan()
    monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 10**9)
    w = DirectorySource(whole)
    w.scan()
    assert len(q.rows()) == len(w.rows()) > 100
    for row in w.rows():
        other = q.get(row.run_id)
        assert other is not None and row.complete
        assert other.status == row.status, row.run_id
        if row.summary is None or row.summary.events == 0:
            continue
        a, b = other.summary, row.summary
        assert b is not None and a is not None
        promised = ("status", "agent", "model", "started_at", "first_prompt", "last_event_at")
        for name in (*promised, "ended_at", "error", "final_output"):
            assert getattr(a, name) == getattr(b, name), (row.run_id, name)
    # Once filled, a quick row is the whole row: counts, calls and active time included.
    q.fill()
    for row in w.rows():
        filled = q.get(row.run_id)
        assert filled is not None and filled.complete
        assert filled.summary == row.summary, row.run_id


def test_a_missing_or_deleted_directory_is_an_error_not_a_crash(tmp_path: Path) -> None:
    index = DirectorySource(tmp_path / "nope")
    index.scan()
    assert index.rows() == [] and "is gone" in (index.error or "")
    assert not (tmp_path / "nope").exists()  # nothing was created

    directory = tmp_path / "runs"
    directory.mkdir()
    (directory / "a.jsonl").write_text('{"type": "run_start"}\n')
    index = DirectorySource(directory)
    index.scan()
    assert len(index.rows()) == 1 and index.error is None
    shutil.rmtree(directory)
    changes = index.refresh_paths([directory / "a.jsonl"])
    assert changes.removed == {"a"} and index.rows() == [] and index.error


# -- liveness ------------------------------------------------------------------------------------


HOLD_LOCK = textwrap.dedent(
    """
    import sys, time
    from agentor.engine.events import Event
    from agentor.engine.store.file import FileStore
    store = FileStore(sys.argv[1])
    with store.lock("live"):
        store.append("live", Event("run_start", agent="A", messages=[], started_at=1.0))
        print("locked", flush=True)
        time.sleep(120)
    """
)


def test_running_while_a_process_holds_the_lock_then_interrupted_once_killed(
    tmp_path: Path,
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        index = DirectorySource(tmp_path)
        index.scan()
        row = index.get("live")
        assert row is not None and row.status == "running"
        assert index.refresh_liveness() == []

        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        # The file did not change; only the lock went away with the process.
        assert index.refresh_liveness() == ["live"]
        assert row.status == "interrupted"
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()


async def test_a_run_in_progress_in_this_process_is_running(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    a = agent(store, "hang")
    task = asyncio.ensure_future(a.arun("Weather?"))
    await asyncio.wait_for(a.model.waiting.wait(), 10)  # type: ignore[attr-defined]
    index = DirectorySource(tmp_path)
    index.scan()
    (row,) = index.rows()
    assert row.status == "running"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert index.refresh_liveness() == [row.run_id] and row.status == "interrupted"


def test_an_empty_file_being_started_is_running(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    with store.lock("fresh"):  # creates the file, writes nothing yet
        index = DirectorySource(tmp_path)
        index.scan()
        row = index.get("fresh")
        assert row is not None and (row.status, row.error) == ("running", None)
    assert index.refresh_liveness() == ["fresh"]
    assert (row.status, row.error) == ("unreadable", "empty file")


# -- RunLog: one run, lazily ---------------------------------------------------------------------


def write_big_log(path: Path, events: int) -> int:
    """A compact log of `events` lines, as FileStore writes it; returns the generation count.

    Each turn: a generation (a delta after the first) with one call, its tool_call and
    tool_result. Written by hand because encoding 100,000 events through the engine takes long.
    """
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    out = [json.dumps({"type": "run_start", "agent": "Big", "messages": msgs, "ts": 100.0})]
    turn = gens = 0
    kept = 0
    while len(out) < events - 1:
        turn += 1
        call = {"id": f"c{turn}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        gen: dict[str, Any] = {"type": "generation", "turn": turn, "calls": [call], "ts": 100.0}
        if gens == 0:
            gen["messages"] = list(msgs)
        else:
            gen["messages_delta"] = {"base": gens - 1, "keep": kept, "tail": msgs[kept:]}
        kept = len(msgs)
        gens += 1
        out.append(json.dumps(gen))
        msgs.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append(f'{{"type": "tool_call", "turn": {turn}, "name": "f", "call_id": "c{turn}"}}')
        out.append(f'{{"type": "tool_result", "turn": {turn}, "call_id": "c{turn}", "result": 1}}')
        msgs.append({"role": "tool", "tool_call_id": f"c{turn}", "content": "1"})
    out = out[: events - 1]
    out.append(json.dumps({"type": "run_end", "status": "completed", "ts": 200.0}))
    path.write_text("\n".join(out) + "\n")
    return gens


def test_a_100k_event_log_opens_at_its_end_without_decoding_its_lines(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    write_big_log(path, 100_000)
    log = RunLog(path)
    assert len(log) == 100_000
    last = log.item(len(log) - 1)
    assert isinstance(last, Event) and last.type == "run_end" and last.status == "completed"
    assert log.item(-1) is last  # cached
    assert log.start_time == 100.0 and log.segment_starts == [0]
    assert log.decoded == 2  # the last line and the first (for the start time)
    # The last generation: its request is rebuilt from the first one, the only full one.
    i = 1 + 3 * ((len(log) - 3) // 3)
    gen = log.item(i)
    assert isinstance(gen, Event) and gen.type == "generation" and gen.messages is None
    request = log.request(i)
    assert request is not None and len(request) == 1 + 2 * (gen.turn - 1)  # type: ignore[operator]
    assert request[-1] == {"role": "tool", "tool_call_id": f"c{gen.turn - 1}", "content": "1"}  # type: ignore[operator]
    assert log.request(i - 3) == request[:-2]  # one step back, from the cache
    log.close()


async def test_request_equals_what_filestore_load_rebuilds(tmp_path: Path) -> None:
    for compact in (True, False):
        directory = tmp_path / f"compact-{compact}"
        ids = await engine_runs(directory, compact=compact)
        # A longer one: several turns, then a crash and a resume (deltas across segments).
        store = FileStore(directory, compact=compact)
        long_run = await interrupted_run(
            store, *[calls(("get_weather", {"city": f"C{t}"}), turn=t) for t in range(1, 6)]
        )
        await agent(store, calls(("get_weather", {"city": "Z"}), turn=9), text("Done.")).aresume(
            long_run
        )
        for run_id in [*ids.values(), long_run]:
            events = store.load(run_id)
            log = RunLog(store.path(run_id))
            assert len(log) == len(events)
            gens = [i for i, e in enumerate(events) if e.type == "generation"]
            expected = {i: events[i].messages for i in gens}
            assert all(expected[i] is not None for i in gens)
            for order in (gens, gens[::-1], gens[1::2] + gens[::2]):
                for i in order:
                    assert log.request(i) == expected[i], (run_id, compact, i)
            for i, e in enumerate(events):
                item = log.item(i)
                assert isinstance(item, Event) and item.type == e.type
                if e.type != "generation":
                    assert item == e
                    assert log.request(i) is None
            starts = [i for i, e in enumerate(events) if e.type == "run_start"]
            assert log.segment_starts == starts
            assert log.start_time == event_time(events[0])
            log.close()


def test_request_on_upstream_full_form_logs() -> None:
    store = FileStore(FIXTURES)
    for run_id in store.list_runs():
        events = store.load(run_id)
        with RunLog(store.path(run_id)) as log:
            for i, e in enumerate(events):
                assert log.request(i) == (e.messages if e.type == "generation" else None)


def test_a_lost_delta_base_is_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "broken.jsonl"
    write_big_log(path, 12)  # generations on lines 1, 4, 7, 10
    lines = path.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4][:30] + b"\n"  # the second generation is corrupt
    path.write_bytes(b"".join(lines))
    events = FileStore(tmp_path).load("broken")
    with RunLog(path) as log:
        assert isinstance(log.item(4), BadLine)
        assert log.request(1) is not None
        assert log.request(7) is None and log.request(10) is None
    assert [e.messages is None for e in events if e.type == "generation"] == [False, True, True]

    # A malformed delta (a tail that is not messages) breaks the chain there, as in the engine.
    write_big_log(path, 12)
    lines = path.read_bytes().splitlines(keepends=True)
    gen = json.loads(lines[7])
    gen["messages_delta"]["tail"] = [1, 2]
    lines[7] = json.dumps(gen).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    events = FileStore(tmp_path).load("broken")
    gens = [i for i, e in enumerate(events) if e.type == "generation"]
    with RunLog(path) as log:
        assert [log.request(i) for i in gens] == [events[i].messages for i in gens]
        assert [log.request(i) is None for i in gens] == [False, False, True, True]


def requests_agree_with_the_loader(path: Path) -> list[bool]:
    """Every generation's request as RunLog rebuilds it equals the engine decoder's, asked in
    order, backwards and skipping about (each walks and caches differently); which were
    rebuilt (False: neither rebuilds it)."""
    decoder = LogDecoder()
    items = [decoder.decode(line) for line in path.read_bytes().splitlines(keepends=True)]
    gens = [i for i, x in enumerate(items) if isinstance(x, Event) and x.type == "generation"]
    for order in (gens, gens[::-1], gens[1::2] + gens[::2]):
        with RunLog(path) as log:
            for i in order:
                assert log.request(i) == items[i].messages, (i, order)  # type: ignore[union-attr]
    return [items[i].messages is not None for i in gens]  # type: ignore[union-attr]


def test_a_corrupt_line_that_looks_like_a_generation_does_not_break_the_deltas_after_it(
    tmp_path: Path,
) -> None:
    """A corrupt line is no generation to the engine's decoder: the delta after it extends the
    generation before it, and RunLog rebuilds it too (a fuzz finding)."""
    path = tmp_path / "r.jsonl"
    write_big_log(path, 12)  # generations on lines 1, 4, 7, 10
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(2, b'{"type":"generation","turn":\x01 oops\n')
    path.write_bytes(b"".join(lines))
    assert requests_agree_with_the_loader(path) == [True, True, True, True]


def test_a_generation_the_writer_counted_but_the_decoder_lost_stops_deltas_as_in_the_engine(
    tmp_path: Path,
) -> None:
    """A corrupt generation that the writer counted (its ordinal is a delta's base) leaves the
    engine's count one behind: a delta naming it, and every delta after it, is not rebuilt,
    however many full generations come between; RunLog says the same."""
    path = tmp_path / "r.jsonl"
    m1 = [{"role": "user", "content": "a"}]
    m2 = [*m1, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]
    tail = [{"role": "assistant", "content": "d"}]
    full_a = {"type": "generation", "turn": 1, "messages": m1}
    full_c = {"type": "generation", "turn": 3, "messages": m2}
    start = json.dumps({"type": "run_start", "messages": m1}).encode() + b"\n"
    corrupt = b'{"type":"generation","turn":2,"messages_delta":{"base":0,\n'

    def delta(base: int, keep: int) -> dict[str, Any]:
        return {
            "type": "generation",
            "turn": 4,
            "messages_delta": {"base": base, "keep": keep, "tail": tail},
        }

    def write(*events: dict[str, Any] | bytes) -> None:
        body = [e if isinstance(e, bytes) else json.dumps(e).encode() + b"\n" for e in events]
        path.write_bytes(start + b"".join(body))

    # Between the full generation and the delta: the delta names the lost one as its base.
    write(full_a, corrupt, delta(1, 1))
    assert requests_agree_with_the_loader(path) == [True, False]
    # Before the full generation the delta extends: the count is one behind from there on.
    write(full_a, corrupt, full_c, delta(2, 3))
    assert requests_agree_with_the_loader(path) == [True, True, False]
    # The same log with the count right (the corrupt line was never a generation).
    write(full_a, corrupt, full_c, delta(1, 3))
    assert requests_agree_with_the_loader(path) == [True, True, True]


def test_poll_reads_new_lines_waits_for_partial_ones_and_reloads_replaced_files(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    write_big_log(path, 10)
    log = RunLog(path)
    assert len(log) == 10 and log.poll() == 0 and not log.reset_happened

    line = b'{"type": "message", "text": "hi"}\n'
    with path.open("ab") as f:
        f.write(line + line[:10])
    assert log.poll() == 1 and len(log) == 11 and log.pending == 10
    assert isinstance(log.item(10), Event) and log.item(10).text == "hi"  # type: ignore[union-attr]
    with path.open("ab") as f:
        f.write(line[10:])
    assert log.poll() == 1 and len(log) == 12 and log.pending == 0 and not log.reset_happened

    # A corrupt line in the middle is a BadLine; the lines after it still show.
    with path.open("ab") as f:
        f.write(b"{oops\n" + line)
    assert log.poll() == 2
    assert isinstance(log.item(12), BadLine) and isinstance(log.item(13), Event)

    # Truncated: reloaded from the start.
    data = path.read_bytes()
    path.write_bytes(data[: data.index(b"\n") + 1])
    assert log.poll() == 1 and log.reset_happened and len(log) == 1

    # Replaced by another file, longer: reloaded, not appended to.
    tmp = tmp_path / "new.tmp"
    write_big_log(tmp, 20)
    os.replace(tmp, path)
    assert log.poll() == 20 and log.reset_happened and len(log) == 20
    assert log.poll() == 0 and not log.reset_happened

    path.unlink()
    with pytest.raises(OSError):
        log.poll()
    log.close()


# -- quick reads: small tails, refills, the summary decoder -------------------------------------


def big_log_with_an_end(path: Path, end: dict[str, Any], after: int) -> None:
    """A big log (over 64 KiB): a run_start, tool results, `end`, then `after` bytes of
    timed `message` lines (so `end` is that far from the end of the file)."""
    start = {"type": "run_start", "agent": "Big", "ts": 1.0, "messages": []}
    result = {"type": "tool_result", "turn": 1, "result": "x" * 500, "call_id": "c", "ts": 2.0}
    lines = [start] + [result] * 150 + [end]
    tail = []
    while sum(len(line) for line in tail) < after:
        tail.append(json.dumps({"type": "message", "text": "m" * 200, "ts": 3.0}) + "\n")
    path.write_text("".join(json.dumps(e) + "\n" for e in lines) + "".join(tail))


def test_a_quick_row_reads_a_small_tail_first_and_further_back_only_when_needed(
    monkeypatch, tmp_path: Path
) -> None:
    from agentor.sources.directory.quickread import FIRST_READ, TAIL_BYTES, TAIL_FIRST

    monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 0)
    end = {"type": "run_end", "status": "completed", "text": "done", "ts": 2.5}
    big_log_with_an_end(tmp_path / "short-end.jsonl", end, after=0)
    index = DirectorySource(tmp_path)
    index.scan()
    row = index.get("short-end")
    assert row is not None and (row.status, row.complete) == ("completed", False)
    assert (tmp_path / "short-end.jsonl").stat().st_size > TAIL_BYTES
    # The first read (the first line) and one small tail read, not 64 KiB of tail.
    assert index.bytes_read <= FIRST_READ + TAIL_FIRST + 1
    assert index.lines_decoded == 2

    # The last segment's end further back than the first tail read: the walk reads on.
    for after in (3_000, 20_000, 50_000):
        (tmp_path / "short-end.jsonl").unlink(missing_ok=True)
        big_log_with_an_end(tmp_path / f"end-{after}.jsonl", end, after=after)
    quick = DirectorySource(tmp_path)
    quick.scan()
    whole = DirectorySource(tmp_path)
    whole.scan()
    whole.fill()
    for after in (3_000, 20_000, 50_000):
        q, w = quick.get(f"end-{after}"), whole.get(f"end-{after}")
        assert q is not None and w is not None and not q.complete and w.complete
        assert (q.status, q.summary.final_output) == ("completed", "done")  # type: ignore[union-attr]
        assert q.summary.last_event_at == w.summary.last_event_at == 3.0  # type: ignore[union-attr]
    assert quick.bytes_read < 3 * TAIL_BYTES + 3 * FIRST_READ


def test_a_big_file_replaced_after_the_fill_is_reported_for_filling_again(
    monkeypatch, tmp_path: Path
) -> None:
    """The app's fill worker stops once fill() returns nothing; a change that makes a quick
    row again says so in `Changes.incomplete` (and in `DirectorySource.incomplete`)."""
    monkeypatch.setattr(directory_source, "SCAN_WHOLE_FILES", 0)
    path = tmp_path / "big.jsonl"
    write_big_log(path, 3000)
    (tmp_path / "small.jsonl").write_text('{"type": "run_start", "ts": 1.0}\n')
    index = DirectorySource(tmp_path)
    index.scan()
    assert index.incomplete == 1
    # The big row is read whole; the small one (whole already) is read again to be priced.
    assert sorted(index.fill()) == ["big", "small"]
    assert index.fill() == [] and index.incomplete == 0

    tmp = tmp_path / "swap.tmp"
    write_big_log(tmp, 4000)
    os.replace(tmp, path)
    changes = index.refresh_paths([path])
    assert changes.updated == {"big"} and changes.incomplete == {"big"}
    row = index.get("big")
    assert row is not None and not row.complete and index.incomplete == 1
    assert index.fill() == ["big"] and index.incomplete == 0
    assert row.summary is not None and row.summary.events == 4000

    # An append to a complete row keeps it complete: nothing to fill.
    with path.open("ab") as f:
        f.write(b'{"type": "message", "text": "hi"}\n')
    changes = index.refresh_paths([path])
    assert changes.appended == {"big": 1} and changes.incomplete == set()
    # A new big file (and, with no paths, every file checked) is reported too.
    write_big_log(tmp_path / "new.jsonl", 3000)
    changes = index.refresh()
    assert changes.added == {"new"} and changes.incomplete == {"new"} and index.incomplete == 1
    small = index.refresh_paths([tmp_path / "small.jsonl"])
    assert not small and small.incomplete == set()


TRICKY_LINES = [
    # Known fields of the wrong JSON type: kept in `extra` by the engine, so not folded.
    {"type": "run_start", "agent": 5, "model": ["m"], "started_at": True, "ts": "1", "messages": 1},
    {"type": "run_start", "agent": "A", "messages": [{"role": "user", "content": [{"text": "p"}]}]},
    {"type": "generation", "turn": True, "usage": "lots", "model": 3, "ts": 2},
    {"type": "generation", "turn": 2, "usage": {"input_tokens": "1", "total_tokens": 2.5}},
    {"type": "run_end", "status": 7, "ended_at": False, "error": {"e": 1}, "text": 3},
    {"type": "run_end", "status": "completed", "text": "ok", "ended_at": 5, "ts": 4.5},
    {"type": "tool_call", "ts": None, "started_at": 1e308, "extra": {"deep": [1, 2]}},
    {"type": "fork", "forked_from": "x", "ts": -0.0},
]
TRICKY_RAW = [
    b'{"type": "message", "text": "\\udcff lone surrogate"}\n',
    b'\xef\xbb\xbf{"type": "message", "ts": 1.0}\n',  # a UTF-8 BOM: json.loads takes it
    '{"type": "message", "ts": 1.0}\n'.encode("utf-16-le"),
    b'{"type": "message", "ts": NaN}\n',
    b'{"type": "message", "ts": 1.0}  \t\r\n',
    b'{"type": "message", "ts": 1.0} extra\n',
    b'{"type": "message", "ts": 1.0}\x0b\n',
    b'{"type": "message", "text": "\xff"}\n',
    b'{"type": 5}\n',
    b"[1, 2]\n",
    b"{oops\n",
    b"{\n",
    b'{"type": "message", "n": ' + b"[" * 100_000 + b"\n",
]


async def test_lines_decoded_for_a_summary_fold_as_the_engines_events_do(tmp_path: Path) -> None:
    from agentor.sources.logfile import decode_for_summary, decode_line

    await engine_runs(tmp_path)
    files = [*tmp_path.glob("*.jsonl"), *FIXTURES.glob("*.jsonl")]
    logs = [p.read_bytes().splitlines(keepends=True) for p in files]
    logs.append([(json.dumps(e) + "\n").encode() for e in TRICKY_LINES] + TRICKY_RAW)
    for lines in logs:
        full, slim = [], []
        for n, line in enumerate(lines):
            a, b = decode_line(line, 7, n), decode_for_summary(line, 7, n)
            assert type(a) is type(b), line
            if isinstance(a, BadLine):
                assert a == b
                continue
            assert summarize("r", [a]) == summarize("r", [b]), line
            full.append(a)
            slim.append(b)
        assert summarize("r", full) == summarize("r", slim)


def test_the_summary_decoder_keeps_every_field_fold_reads() -> None:
    """`history.fold` is the one place a summary is derived; the fields the quick decoder
    keeps must cover what it reads of an event (checked from its source)."""
    import ast
    import inspect

    from agentor.engine import history
    from agentor.sources.logfile import FOLD_FIELDS

    read: set[str] = set()
    for fn in (history.fold, history.event_time):
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        read |= {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "e"
        }
    assert "status" in read and "ts" in read
    assert read <= {*FOLD_FIELDS, "messages"}, read - {*FOLD_FIELDS, "messages"}


def test_a_file_that_shrinks_during_a_quick_read_keeps_what_was_read(tmp_path: Path) -> None:
    from agentor.sources.directory.quickread import quick_read

    path = tmp_path / "r.jsonl"
    big_log_with_an_end(path, {"type": "run_end", "status": "completed"}, after=0)
    data = path.read_bytes()
    fd = os.open(path, os.O_RDONLY)
    try:
        read = quick_read(fd, len(data) + 100)  # as if it was 100 bytes longer at fstat
    finally:
        os.close(fd)
    head_end = data.index(b"\n") + 1
    assert [i.type for i in read.items] == ["run_start"]  # type: ignore[union-attr]
    assert (read.offset, read.every_line) == (head_end, False)


def test_liveness_with_a_budget_probes_running_rows_always_and_the_rest_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = '{"type": "run_start", "agent": "A", "messages": [{"role": "user", "content": "x"}]}\n'
    for i in range(10):
        (tmp_path / f"r{i}.jsonl").write_text(start)
    index = DirectorySource(tmp_path)
    index.scan()
    held = {"r3"}
    probed: list[str] = []

    def locked(run_id: str) -> bool:
        probed.append(run_id)
        return run_id in held

    monkeypatch.setattr(index, "_locked", locked)
    assert index.refresh_liveness() == ["r3"]  # no budget: every incomplete run
    assert len(probed) == 10
    probed.clear()
    held.clear()  # r3's holder died: a running row is probed on every tick
    assert index.refresh_liveness(budget=4) == ["r3"]
    assert "r3" in probed and len(probed) == 5
    seen = set(probed)
    for _ in range(3):
        probed.clear()
        index.refresh_liveness(budget=4)
        assert len(probed) == 4
        seen |= set(probed)
    assert seen == {f"r{i}" for i in range(10)}  # the others take turns
