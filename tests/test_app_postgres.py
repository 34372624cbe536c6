"""The TUI on a PostgreSQL store (`PostgresSource`): the same list, timeline and detail as the
directory it was copied from, live changes from other processes, liveness from the server's
locks, and `r` resuming a run into the database. Real server (tests/pg_support.py), real
processes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentor.engine.events import APPROVAL, Event
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.copy import copy_runs
from agentor.engine.store.file import FileStore
from agentor.sources.postgres.source import PostgresSource
from tests.app_support import (
    IDS,
    SIZE,
    GatedModel,
    OneAgent,
    app_for,
    copy_fixtures,
    copy_samples,
    fixed_clock,
    notifications,
    priced,
    row_statuses,
    screen_text,
    text_reply,
    wait_until,
    weather_agent,
)
from tests.approvalkit import TRAVEL_PROMPT, Travel
from tests.conftest import ROOT
from tests.pg_support import PgStores
from tui.app import RunsApp

VIENNA = IDS["crash_after_tool_result"]  # interrupted after its tool's result


class Sources:
    """Makes PostgresSources on the test's schema; closes them (an app closes its own)."""

    def __init__(self, stores: PgStores) -> None:
        self.stores = stores
        self.made: list[PostgresSource] = []

    def __call__(self, **kwargs: Any) -> PostgresSource:
        source = PostgresSource(self.stores.dsn, schema=self.stores.schema, **kwargs)
        self.made.append(source)
        return source

    def app(self, agents: Any = None, watch: bool = False, **kwargs: Any) -> RunsApp:
        source = self(clock=fixed_clock, **kwargs)
        return RunsApp(source, agents=agents, watch=watch, clock=fixed_clock)


@pytest.fixture
def pg_sources(pg_stores: PgStores) -> Iterator[Sources]:
    sources = Sources(pg_stores)
    yield sources
    for source in sources.made:
        source.close()


def copied(pg_stores: PgStores, directory: Path) -> list[str]:
    """The runs of `directory` copied into the test's schema; their ids."""
    with pg_stores() as store:
        report = copy_runs(FileStore(directory), store)
    assert not report.skipped, report.skipped
    return report.copied


async def everything_shown(app: RunsApp) -> dict[str, Any]:
    """What the app shows of every run: the list's rows, and for each run each timeline line
    with the detail of that line (and the raw line: as the store keeps it)."""
    shown: dict[str, Any] = {}
    async with app.run_test(size=SIZE) as pilot:
        # Listed briefly at first (a database's rows too), then filled in.
        await wait_until(pilot, lambda: not app.source.incomplete, what="the rows filled")
        await priced(pilot)  # the cost column: every generation's usage and model, both alike
        run_list, timeline = app.runs_screen.run_list, app.runs_screen.timeline
        width = run_list.size.width
        shown["list"] = [run_list.render_row(k, width).plain for k in range(len(run_list.rows))]
        shown["title"] = screen_text(app).splitlines()[0]
        for row in list(run_list.rows):
            assert run_list.select(row.run_id)
            await pilot.pause()
            log = timeline.run_log
            assert log is not None and timeline.run_id == row.run_id
            lines = []
            for i in range(len(log)):
                app.runs_screen.show_detail(i)  # what moving the cursor there shows, drawn at once
                detail = app.runs_screen.event_detail.text
                lines.append((timeline.render_row(i, timeline.size.width).plain, detail))
            marks = log.marks(0, log.indexed_to, 0, lambda: False)
            found = log.search("sunny", 0, log.indexed_to, 0, lambda: False)
            assert marks is not None and found is not None
            raw = [json.loads(log.raw(i)) for i in range(len(log))]
            shown[row.run_id] = (lines, marks.errors, marks.calls, found.found, raw)
    return shown


@pytest.mark.parametrize("runs", ["upstream", "ours"])
async def test_the_database_shows_the_same_rows_timelines_and_details_as_the_directory(
    pg_stores: PgStores, pg_sources: Sources, tmp_path: Path, runs: str
) -> None:
    directory = tmp_path / "runs"
    if runs == "upstream":  # logs written by upstream Agentor 0.1.1 (full-form generations)
        copy_fixtures(directory)
    else:  # by this engine (compact generations), crashes and resumes included
        copy_samples(directory)
    ids = copied(pg_stores, directory)
    runs_there = len(list(directory.glob("*.jsonl")))
    assert len(ids) == runs_there >= 8
    from_files = await everything_shown(app_for(directory))
    from_db = await everything_shown(pg_sources.app())
    assert from_db["list"] == from_files["list"] and len(from_db["list"]) == runs_there
    for run_id in ids:
        lines, errors, calls, found, raw = from_db[run_id]
        f_lines, f_errors, f_calls, f_found, f_raw = from_files[run_id]
        assert lines == f_lines and len(lines) >= 2
        assert (errors, calls) == (f_errors, f_calls)
        if runs == "ours":  # stored as written: the very same bytes, the same matches
            assert raw == f_raw and found == f_found
    # The header names the database and schema.
    assert from_db["title"].startswith(
        f"╭─ {pg_stores.dsn} · schema {pg_stores.schema} · Runs {runs_there} · "
    )
    counts = [
        t.split(" · Runs ")[1].split(" ─")[0] for t in (from_db["title"], from_files["title"])
    ]
    assert counts[0] == counts[1]


# -- live ----------------------------------------------------------------------------------------

APPEND = textwrap.dedent(
    """
    import sys, time
    from agentor.engine.events import APPROVAL, Event
    from agentor.engine.store.postgres import PostgresStore
    dsn, schema, run_id, text = sys.argv[1:5]
    with PostgresStore(dsn, schema=schema) as store:
        store.append(run_id, Event("message", text=text, turn=2, ts=time.time()))
    """
)

HOLD = textwrap.dedent(
    """
    import sys, time
    from agentor.engine.store.postgres import PostgresStore
    dsn, schema, run_id = sys.argv[1:4]
    store = PostgresStore(dsn, schema=schema)
    with store.lock(run_id):
        print("held", flush=True)
        time.sleep(3600)
    """
)


def python(code: str, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], env=env, cwd=ROOT, text=True, **kwargs
    )


async def test_events_appended_by_another_process_appear_live(
    pg_stores: PgStores, pg_sources: Sources, tmp_path: Path
) -> None:
    copied(pg_stores, copy_fixtures(tmp_path / "runs"))
    app = pg_sources.app(watch=True)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(VIENNA)
        await pilot.pause()
        assert len(app.runs_screen.timeline.run_log) == 4
        await wait_until(pilot, lambda: app.watcher.armed, what="the watch")
        dsn, schema = pg_stores.dsn, pg_stores.schema
        python(APPEND, dsn, schema, VIENNA, "Written elsewhere.").wait(timeout=30)
        await wait_until(
            pilot, lambda: len(app.runs_screen.timeline.run_log) == 5, what="the new line"
        )
        await wait_until(
            pilot, lambda: "message       2  Written elsewhere." in screen_text(app), what="it"
        )
        assert app.source.get(VIENNA).summary.events == 5
        # A run that was not there: a new row.
        python(APPEND, dsn, schema, "fresh-run", "Hello.").wait(timeout=30)
        await wait_until(pilot, lambda: "fresh-run" in row_statuses(app), what="the new run")
        await wait_until(pilot, lambda: "Runs 9 · " in screen_text(app), what="the title")


async def test_a_held_run_shows_running_and_interrupted_once_its_holder_is_killed(
    pg_stores: PgStores, pg_sources: Sources, tmp_path: Path
) -> None:
    copied(pg_stores, copy_fixtures(tmp_path / "runs"))
    # The feed's safety poll (which would read the row again) out of the way: only asking
    # the server who holds what can tell of the death.
    app = pg_sources.app(watch=True, poll_interval=600)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.watcher.armed, what="the watch")
        assert row_statuses(app)[VIENNA] == "interrupted"
        holder = python(HOLD, pg_stores.dsn, pg_stores.schema, VIENNA, stdout=subprocess.PIPE)
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            await wait_until(pilot, lambda: row_statuses(app)[VIENNA] == "running", what="run")
            os.kill(holder.pid, signal.SIGKILL)
            holder.wait(timeout=10)
            # No write tells of a death: the server frees the lock, the list asks it again.
            await wait_until(
                pilot, lambda: row_statuses(app)[VIENNA] == "interrupted", what="interrupted"
            )
        finally:
            if holder.poll() is None:
                holder.kill()
            holder.wait(timeout=10)
            if holder.stdout is not None:
                holder.stdout.close()


# -- resume --------------------------------------------------------------------------------------


async def test_r_resumes_a_run_into_the_database(
    pg_stores: PgStores, pg_sources: Sources, tmp_path: Path
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    copied(pg_stores, runs)
    model = GatedModel([text_reply("Vienna is sunny, 22C.")], partial="Vienna is").hold(0)
    executed: list[str] = []
    app = pg_sources.app(agents=OneAgent(weather_agent(runs, model, executed)))
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(VIENNA)
        await pilot.pause()
        await pilot.press("r")
        await wait_until(pilot, lambda: model.waiting.is_set(), what="the model request")
        # The run is this process's now: every other session sees it held.
        with pg_stores() as other:
            assert other.is_locked(VIENNA)
        await wait_until(pilot, lambda: row_statuses(app)[VIENNA] == "running", what="running")
        model.gate.set()
        await wait_until(
            pilot,
            lambda: row_statuses(app)[VIENNA] == "completed" and not app.resumer.running,
            what="the resume to complete",
        )
        await wait_until(
            pilot, lambda: len(app.runs_screen.timeline.run_log) == 8, what="the timeline"
        )
        assert "Run 2dfade51 completed: Vienna is sunny, 22C." in notifications(app)
    # Written to the database, not to the directory the agent was built on.
    with pg_stores() as store:
        types = [e.type for e in store.load(VIENNA)]
        assert not store.is_locked(VIENNA)
    assert types[4:] == ["run_start", "generation", "message", "run_end"]
    assert executed == []  # the recorded tool result was not run again
    assert FileStore(runs).load(VIENNA) == FileStore(copy_fixtures(tmp_path / "again")).load(VIENNA)
    assert len(model.requests) == 1


# -- a race: four processes and the TUI's `r` ----------------------------------------------------

RESUMER = textwrap.dedent(
    """
    import asyncio, json, os, sys
    from agentor import Agentor, RunLockedError, function_tool
    from agentor.engine.store.postgres import PostgresStore
    from agentor.testing import ScriptedModel

    dsn, schema, run_id = sys.argv[1:4]

    class Held(ScriptedModel):
        async def generate(self, messages, tools, on_text=None):
            while not os.path.exists(os.environ["RELEASE"]):  # held while the others try
                await asyncio.sleep(0.01)
            return await super().generate(messages, tools, on_text)

    @function_tool
    def get_weather(city: str) -> str:
        \"\"\"The weather in a city.\"\"\"
        with open(os.environ["COUNT_FILE"], "a") as f:
            f.write(city + "\\n")
        return "Sunny in " + city + "."

    model = Held([ScriptedModel.text("Vienna is sunny.")])
    store = PostgresStore(dsn, schema=schema)
    agent = Agentor(name="Travel Agent", model=model, tools=[get_weather], store=store)
    print("ready", flush=True)
    sys.stdin.readline()
    try:
        result = agent.resume(run_id)
        outcome = "proceeded" if model.requests else "found it " + result.status
    except RunLockedError as exc:
        outcome = f"locked by {exc.pid}"
    print(json.dumps({"outcome": outcome, "requests": len(model.requests), "pid": os.getpid()}),
          flush=True)
    store.close()
    """
)


def winner(said: list[dict[str, Any]]) -> int:
    return next(s["pid"] for s in said if s["outcome"] == "proceeded")


@pytest.mark.parametrize("first", ["processes", "tui"])
async def test_four_processes_and_the_tuis_r_on_one_interrupted_run_only_one_proceeds(
    pg_stores: PgStores, pg_sources: Sources, tmp_path: Path, first: str
) -> None:
    """Told to go at once; `first` is told a moment before the others (whoever wins, the
    others are refused by the lock, told who holds the run)."""
    runs = copy_fixtures(tmp_path / "runs")
    copied(pg_stores, runs)
    count, release = tmp_path / "tool-runs.txt", tmp_path / "release"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COUNT_FILE": str(count), "RELEASE": str(release)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", RESUMER, pg_stores.dsn, pg_stores.schema, VIENNA],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
            text=True,
        )
        for _ in range(4)
    ]
    model = GatedModel([text_reply("Vienna is sunny, 22C.")]).hold(0)
    executed: list[str] = []
    app = pg_sources.app(agents=OneAgent(weather_agent(runs, model, executed)), watch=True)
    try:
        for worker in workers:
            assert worker.stdout is not None and worker.stdout.readline() == "ready\n"
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.watcher.armed, what="the watch")
            assert app.runs_screen.run_list.select(VIENNA)
            await pilot.pause()
            if first == "tui":
                await pilot.press("r")
            for worker in workers:
                assert worker.stdin is not None
                worker.stdin.write("go\n")
                worker.stdin.flush()
            if first == "processes":
                await pilot.press("r")
            # The winner holds the run until released: the TUI's r took it, or was refused.
            await wait_until(
                pilot,
                lambda: (
                    model.waiting.is_set() or any(" is locked by " in n for n in notifications(app))
                ),
                what="the TUI's r to take the run or be refused",
            )
            release.touch()
            said = [json.loads(w.stdout.readline()) for w in workers if w.stdout is not None]
            model.gate.set()  # if the TUI took the run: let it finish
            await wait_until(pilot, lambda: not app.resumer.running, what="the TUI's resume")
            await wait_until(
                pilot, lambda: row_statuses(app)[VIENNA] == "completed", what="completed"
            )
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
            worker.wait(timeout=10)
            for stream in (worker.stdin, worker.stdout):
                if stream is not None:
                    stream.close()
    tui_proceeded = bool(model.requests)
    proceeded = [s for s in said if s["outcome"] == "proceeded"] + [{}] * tui_proceeded
    assert len(proceeded) == 1, (said, tui_proceeded, notifications(app))
    assert sum(s["requests"] for s in said) + len(model.requests) == 1  # one model call in all
    others = [s["outcome"] for s in said if s["outcome"] != "proceeded"]
    assert all(o.startswith(("locked by ", "found it completed")) for o in others), others
    if not tui_proceeded:  # refused by the lock, naming the holder and its host
        holder = f"Run 2dfade51 is locked by process {winner(said)} on {socket.gethostname()}:"
        assert any(n.startswith(holder) for n in notifications(app)), notifications(app)
    with pg_stores() as store:
        types = [e.type for e in store.load(VIENNA)]
    # One new segment, written by one process: nothing interleaved, nothing twice.
    assert types[4:] == ["run_start", "generation", "message", "run_end"]
    assert not count.exists() and executed == []  # the recorded tool result was reused


# -- a database that stops answering -------------------------------------------------------------


class Proxy:
    """A TCP relay on 127.0.0.1 to the test server; `cut()` drops every connection and
    refuses new ones (as a server that went away, or a network down), `restore()` relays again."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.up = True
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            if not self.up:
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.up = False
        for s in self.open:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
        self.open.clear()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self.cut()
        self.listener.close()


async def test_a_database_that_stops_answering_keeps_the_list_and_catches_up_when_back(
    pg_stores: PgStores, pg_sources: Sources, tmp_path: Path
) -> None:
    copied(pg_stores, copy_fixtures(tmp_path / "runs"))
    host, port = pg_stores.dsn.split("@", 1)[1].split("/", 1)[0].split(":")
    proxy = Proxy(host, int(port))
    relayed = pg_stores.dsn.replace(f"@{host}:{port}/", f"@127.0.0.1:{proxy.port}/")
    source = PostgresSource(relayed, schema=pg_stores.schema, clock=fixed_clock, read_timeout=0.5)
    app = RunsApp(source, watch=True, clock=fixed_clock)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.watcher.armed, what="the watch")
            assert app.runs_screen.run_list.select(VIENNA)
            proxy.cut()
            said = await wait_until(
                pilot,
                lambda: [n for n in notifications(app) if n.startswith("Cannot read ")],
                what="the notice",
            )
            assert "The list shows what was read until now" in said[0]
            assert (
                len(app.runs_screen.run_list.rows) == 8
                and len(app.runs_screen.timeline.run_log) == 4
            )  # kept
            with pg_stores() as store:  # written meanwhile, by a process that can reach it
                store.append(VIENNA, Event("message", text="While it was away.", turn=2))
            proxy.restore()
            await wait_until(
                pilot,
                lambda: any("answers again" in n for n in notifications(app)),
                what="the second notice",
            )
            await wait_until(
                pilot, lambda: len(app.runs_screen.timeline.run_log) == 5, what="catching up"
            )
            assert "While it was away." in screen_text(app)
    finally:
        proxy.close()


async def test_unwatched_ctrl_r_says_the_database_does_not_answer_and_reads_it_once_it_does(
    pg_stores: PgStores, tmp_path: Path
) -> None:
    copied(pg_stores, copy_fixtures(tmp_path / "runs"))
    host, port = pg_stores.dsn.split("@", 1)[1].split("/", 1)[0].split(":")
    proxy = Proxy(host, int(port))
    relayed = pg_stores.dsn.replace(f"@{host}:{port}/", f"@127.0.0.1:{proxy.port}/")
    source = PostgresSource(relayed, schema=pg_stores.schema, read_timeout=0.5)
    app = RunsApp(source, watch=False)
    try:
        async with app.run_test(size=SIZE) as pilot:
            proxy.cut()
            await pilot.press("ctrl+r")
            said = await wait_until(pilot, lambda: notifications(app), what="a notice")
            assert said[-1].startswith("Cannot read postgresql://") and len(said) == 1
            assert len(app.runs_screen.run_list.rows) == 8
            with pg_stores() as store:
                store.append("fresh-run", Event("message", text="new"))
            [first] = app._notifications
            await pilot.press("ctrl+r")  # still cut: said again (in the first one's place)
            [again] = await wait_until(
                pilot, lambda: [n for n in app._notifications if n is not first], what="again"
            )
            assert again.message.startswith("Cannot read ")
            proxy.restore()
            deadline = time.monotonic() + 20
            while "fresh-run" not in row_statuses(app):  # as a user would: again, until read
                assert time.monotonic() < deadline, notifications(app)
                await pilot.press("ctrl+r")  # a reload tries again
                await pilot.pause(0.2)
            said = notifications(app)
            assert "answers again" in said[-2] and said[-1].startswith("Reloaded ")
    finally:
        proxy.close()


# -- approval ------------------------------------------------------------------------------------


async def test_calls_awaiting_approval_are_decided_and_the_run_goes_on_in_the_database(
    pg_stores: PgStores, pg_sources: Sources
) -> None:
    travel = Travel(pg_stores())
    travel.asks = [("book_hotel", {"city": "Rome", "nights": 2}), ("get_weather", {"city": "Rome"})]
    result = await travel.agent.arun(TRAVEL_PROMPT)
    assert result.status == AWAITING_APPROVAL
    run_id = result.run_id
    app = pg_sources.app(agents=OneAgent(travel.agent), watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.watcher.armed, what="the watch")
        assert row_statuses(app)[run_id] == AWAITING_APPROVAL
        assert app.runs_screen.run_list.select(run_id)
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(
            pilot, lambda: app.focused is app.runs_screen.approval_pane.call_list, what="focus"
        )
        await pilot.press("a")  # recorded through the source's store, then resumed here
        await wait_until(pilot, lambda: row_statuses(app)[run_id] == COMPLETED, what="done")
    with pg_stores() as store:
        decided = [(e.call_id, e.decision) for e in store.load(run_id) if e.type == APPROVAL]
    assert decided == [("c1_0", "approved")]
    assert travel.executed("book_hotel") == [("book_hotel", "Rome", 2)]  # once, after it
