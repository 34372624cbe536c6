"""One writer per run on PostgreSQL: a holder that dies or whose connection is cut loses the
run at once, and a writer that lost the run cannot append any more (it is fenced), so two
writers never interleave. Real server, real processes, connections really cut
(`pg_terminate_backend`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agentor import RunLockedError
from agentor.engine.events import Event
from agentor.engine.store.pg import store as pg_store
from agentor.engine.store.pg.dsn import KEEPALIVE_COUNT, KEEPALIVE_IDLE, KEEPALIVE_INTERVAL
from agentor.errors import RunLostError
from tests.conftest import FULL_RUN, ROOT, Children, WeatherAgents, counted, wait_for
from tests.netsplit import blackholed
from tests.openai_server import FakeOpenAI
from tests.pg_support import PgStores

RUN = "fenced"

real_write = pg_store.write_and_announce


def texts(store: object) -> list[str | None]:
    return [e.text for e in store.load(RUN)]  # type: ignore[attr-defined]


def test_a_holder_whose_lock_session_is_cut_cannot_append_once_another_took_the_run(
    pg_stores: PgStores,
) -> None:
    first, second = pg_stores(), pg_stores()
    with first.lock(RUN):
        first.append(RUN, Event("message", text="first 1"))
        assert pg_stores.terminate("lock") == 1  # the first store's lock session
        # The server let go of the run with the session: it is free at once.
        assert not second.is_locked(RUN)
        with second.lock(RUN):
            # Late, before the new holder wrote anything: its token is no longer the run's.
            with pytest.raises(RunLostError, match="another process took it"):
                first.append(RUN, Event("message", text="first, late"))
            second.append(RUN, Event("message", text="second 1"))
            second.append(RUN, Event("message", text="second 2"))
            with pytest.raises(RunLostError):  # and from now on without asking
                first.append_many(RUN, [Event("message", text="first, later")])
    assert texts(pg_stores()) == ["first 1", "second 1", "second 2"]
    assert pg_stores().list_summaries(run_ids=[RUN])[0].claims == 2


def test_a_holder_whose_lock_session_is_cut_cannot_append_even_before_anyone_took_the_run(
    pg_stores: PgStores,
) -> None:
    store = pg_stores()
    with store.lock(RUN):
        store.append(RUN, Event("message", text="held"))
        assert pg_stores.terminate("lock") == 1
        with pytest.raises(RunLostError, match="session ended"):
            store.append(RUN, Event("message", text="after the cut"))
    assert texts(pg_stores()) == ["held"]
    with store.lock(RUN):  # the store takes runs again, on a new lock session
        store.append(RUN, Event("message", text="taken again"))
    assert texts(pg_stores()) == ["held", "taken again"]


def test_an_append_whose_pooled_connection_was_cut_is_written_once(pg_stores: PgStores) -> None:
    store = pg_stores()
    with store.lock(RUN):
        store.append(RUN, Event("message", text="one"))
        assert pg_stores.terminate("store") >= 1  # every pooled connection of this process
        store.append(RUN, Event("message", text="two"))  # on a fresh connection
        assert pg_stores.terminate("store") >= 1
        assert texts(store) == ["one", "two"]  # a read is tried again too
    assert texts(pg_stores()) == ["one", "two"]


def test_an_append_committed_on_a_connection_that_dropped_before_answering_is_kept_once(
    pg_stores: PgStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = pg_stores()

    def answer_lost(conn: Any, *args: Any) -> Any:
        """The append commits, then fails as a connection dropped before the server's answer
        arrived would."""
        real_write(conn, *args)
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    with store.lock(RUN):
        store.append(RUN, Event("message", text="one"))
        monkeypatch.setattr(pg_store, "write_and_announce", answer_lost)
        store.append(RUN, Event("message", text="two"))  # committed; the answer was lost
        monkeypatch.undo()
        store.append(RUN, Event("message", text="three"))
    assert texts(pg_stores()) == ["one", "two", "three"]


def test_a_writer_that_does_not_hold_the_run_is_refused_while_another_holds_it(
    pg_stores: PgStores,
) -> None:
    holder, other = pg_stores(), pg_stores()
    with holder.lock(RUN):
        with pytest.raises(RunLockedError) as refused:
            other.append(RUN, Event("message", text="sneaking in"))
        assert refused.value.pid == os.getpid() and refused.value.host
        assert str(os.getpid()) in str(refused.value)
    other.append(RUN, Event("message", text="once it is free"))
    assert texts(pg_stores()) == ["once it is free"]


def test_the_server_watches_the_lock_session_so_a_vanished_host_frees_its_runs(
    pg_stores: PgStores,
) -> None:
    # A host that vanishes sends no FIN: its lock session just goes silent. The server finds
    # out by the TCP keepalives it sends on that session (KEEPALIVE_IDLE s of silence, then
    # KEEPALIVE_COUNT probes KEEPALIVE_INTERVAL s apart: 11 s; the default would be two
    # hours), ends the session, and the run is free. Its holder cannot append any more.
    stated = KEEPALIVE_IDLE + KEEPALIVE_COUNT * KEEPALIVE_INTERVAL
    holder, viewer = pg_stores(), pg_stores()
    with holder.lock(RUN):
        holder.append(RUN, Event("message", text="before"))
        lock_session = holder._holds._session_conn()
        backend = lock_session.info.backend_pid
        with blackholed(lock_session.fileno()):
            vanished = time.monotonic()
            # Silent, not closed: the server still holds the session, and the run with it.
            assert viewer.is_locked(RUN)
            assert pg_stores.sql("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (backend,))
            wait_for(
                lambda: not viewer.is_locked(RUN),
                timeout=stated + 10,  # kernel timers: late only by how slowly we look
                what=f"the server to free the run of a vanished host (about {stated} s)",
            )
            took = time.monotonic() - vanished
            assert took >= KEEPALIVE_IDLE, "freed before a keepalive could have told"
            assert not pg_stores.sql("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (backend,))
            with viewer.lock(RUN):  # another process takes the run
                viewer.append(RUN, Event("message", text="taken over"))
            with pytest.raises(RunLostError):
                holder.append(RUN, Event("message", text="late"))
    assert texts(pg_stores()) == ["before", "taken over"]


HOLDER = textwrap.dedent(
    """
    import os, sys, time
    from agentor.engine.events import Event
    from agentor.engine.store.postgres import PostgresStore

    store = PostgresStore(os.environ["AGENTOR_TEST_PG"], schema=os.environ["SCHEMA"])
    with store.lock("fenced"):
        store.append("fenced", Event("message", text="child"))
        print("held", flush=True)
        time.sleep(3600)
    """
)


def spawn(code: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_holder_killed_frees_its_run_at_once(pg_stores: PgStores) -> None:
    viewer = pg_stores()
    child = spawn(HOLDER, {"AGENTOR_TEST_PG": pg_stores.dsn, "SCHEMA": pg_stores.schema})
    try:
        assert child.stdout is not None and child.stdout.readline() == "held\n"
        row = viewer.list_summaries(run_ids=[RUN])[0]
        assert (row.held, row.status, row.holder_pid) == (True, "running", child.pid)
        with pytest.raises(RunLockedError) as refused, viewer.lock(RUN):
            pass
        assert refused.value.pid == child.pid
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        # Its session ends with its socket: no keepalive has to find out (they would take
        # KEEPALIVE_IDLE s of silence first).
        wait_for(lambda: not viewer.is_locked(RUN), timeout=KEEPALIVE_IDLE, what="a free run")
        with viewer.lock(RUN):
            viewer.append(RUN, Event("message", text="taken over"))
        assert texts(viewer) == ["child", "taken over"]
    finally:
        child.kill()
        child.wait(timeout=10)
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()


# The seed page's weather agent on a PostgresStore; its tool blocks until GO_FILE exists.
BLOCKED_AGENT = textwrap.dedent(
    """
    import logging, os, time
    from agentor import Agentor, function_tool
    from agentor.engine.store.postgres import PostgresStore
    from agentor import RunLostError

    logging.basicConfig(level=logging.ERROR)

    @function_tool
    def get_weather(city: str) -> str:
        \"\"\"Get the current weather for a city.

        Args:
            city: The city to look up.
        \"\"\"
        with open(os.environ["COUNT_FILE"], "a") as f:
            f.write(city + "\\n")
        while not os.path.exists(os.environ["GO_FILE"]):
            time.sleep(0.01)
        return f"The weather in {city} is sunny and 22C."

    agent = Agentor(
        name="Weather Agent",
        model="gpt-4o-mini",
        instructions="You are a helpful weather assistant.",
        tools=[get_weather],
        store=PostgresStore(os.environ["AGENTOR_TEST_PG"], schema=os.environ["SCHEMA"]),
        max_retries=0,
    )
    try:
        agent.run("What is the weather in Oslo?", run_id="fenced")
    except RunLostError as exc:
        print("stopped:", exc, flush=True)
    """
)


def test_a_worker_cut_off_inside_its_tool_is_fenced_while_another_finishes_the_run(
    pg_stores: PgStores,
    children: Children,
    fake_openai: FakeOpenAI,
    weather_agent: WeatherAgents,
    tmp_path: Path,
) -> None:
    go = tmp_path / "go"
    env = {"AGENTOR_TEST_PG": pg_stores.dsn, "SCHEMA": pg_stores.schema, "GO_FILE": str(go)}
    first = children.spawn(BLOCKED_AGENT, **env)
    wait_for(lambda: counted(children.count_file) == ["Oslo"], what="the first worker's tool")
    assert pg_stores.terminate("lock", first.pid) == 1  # its lock session: the run is free

    store = pg_stores()
    result = weather_agent(store=store).resume(RUN)  # another worker finishes it
    assert result.status == "completed" and weather_agent.executed == ["Oslo"]

    requests = fake_openai.calls
    go.touch()  # the first worker's tool returns: its result must not land
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    # Its save refused, the first worker stops: it never asks the model again.
    assert "stopped: run fenced was lost by this process" in out
    assert fake_openai.calls == requests

    events = pg_stores().load(RUN)
    types = [e.type for e in events]
    assert types == ["run_start", "generation", "tool_call", *FULL_RUN]
    # The first worker's segment, then the second's whole: nothing of the first after it.
    assert [e.pid for e in events if e.type == "run_start"] == [first.pid, os.getpid()]
    assert events[-1].status == "completed"
