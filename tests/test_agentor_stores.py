"""Every `agentor` command on a directory or a PostgreSQL database (`--store DIR|DSN`,
`--schema NAME`), `agentor copy` between the two, and `agentor submit`; the installed console
script in subprocesses, a real server."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentor.engine.events import RUN_START
from agentor.engine.log.format import LogEncoder
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED, INTERRUPTED
from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from tests import approvalkit
from tests.approvalkit import TRAVEL_PROMPT, Travel
from tests.conftest import ROOT
from tests.pg_support import PgStores
from tests.test_agentor_command import ENV, SCRIPT, Served, agentor, refused

SECRET = "s3cr3t-Pa55"
AGENT = "tests/approvalkit.py:make_agent"


class Place:
    """A store under test and the arguments that name it on a command line."""

    def __init__(self, store: Store, args: list[str]) -> None:
        self.store = store
        self.args = args


@pytest.fixture(params=["file", "postgres"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Place]:
    if request.param == "file":
        runs = tmp_path / "runs"
        yield Place(FileStore(runs), ["--store", str(runs)])
    else:
        pg: PgStores = request.getfixturevalue("pg_stores")
        yield Place(pg(), ["--store", pg.dsn, "--schema", pg.schema])


@pytest.fixture
def served() -> Iterator[Served]:
    s = Served()
    yield s
    s.gate.set()
    s.srv.stop()


def lines(store: Store, run_id: str) -> list[bytes]:
    encoder = LogEncoder(compact=False)
    return [encoder.encode(e) for e in store.load(run_id)]


def test_ls_show_approve_and_resume_work_on_the_store_named(
    place: Place, served: Served, tmp_path: Path
) -> None:
    tool_log = tmp_path / "tools.log"
    agent = approvalkit.make_agent(place.store, served.srv.url, str(tool_log))
    run_id = agent.run(TRAVEL_PROMPT).run_id

    listed = agentor("ls", *place.args, "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert (row["run_id"], row["status"], row["pending"]) == (run_id, AWAITING_APPROVAL, 1)
    assert (row["agent"], row["first_prompt"]) == ("Travel Agent", TRAVEL_PROMPT)

    shown = agentor("show", run_id[:6], *place.args)
    assert shown.returncode == 0, shown.stderr
    assert "waiting for approval (1)" in shown.stdout and "book_hotel" in shown.stdout

    decided = agentor("approve", run_id, *place.args, "--by", "alice")
    assert decided.returncode == 0, decided.stderr
    assert decided.stdout.startswith(f"approved call_1_0 (book_hotel) of run {run_id} as alice")

    env = {
        "OPENAI_BASE_URL": served.srv.url,
        "OPENAI_API_KEY": "sk-test",
        "TOOL_LOG": str(tool_log),
    }
    resumed = agentor("resume", run_id, *place.args, "--agent", AGENT, env=env)
    assert resumed.returncode == 0, resumed.stderr
    assert f"run {run_id} is completed:" in resumed.stdout
    assert approvalkit.answer("Booked a room in Rome.") in resumed.stdout
    assert [line.split()[0] for line in tool_log.read_text().splitlines()] == [
        "get_weather",
        "book_hotel",
    ], "each tool ran once, book_hotel once approved"

    listed = agentor("ls", *place.args, "--status", COMPLETED)
    assert listed.returncode == 0 and run_id in listed.stdout, listed.stderr


def test_ls_takes_the_store_as_its_argument_too(pg_stores: PgStores) -> None:
    store = pg_stores()
    Travel(store, gate=False).agent.run(TRAVEL_PROMPT)
    listed = agentor("ls", pg_stores.dsn, "--schema", pg_stores.schema)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[1].split()[0] == COMPLETED
    pg_stores(schema=pg_stores.schema + "_empty").close()  # a store of no run yet
    empty = agentor("ls", pg_stores.dsn, "--schema", pg_stores.schema + "_empty")
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.startswith("no runs in postgresql://")
    assert empty.stdout.endswith(f" (schema {pg_stores.schema}_empty)\n")


def test_store_arguments_misused_are_one_line_usage_errors(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert "DIR and --store name different stores" in refused(
        agentor("ls", str(a), "--store", str(b)), 2
    )
    assert "--dir and --store name different stores" in refused(
        agentor("show", "x", "--dir", str(a), "--store", str(b)), 2
    )
    assert "--schema is for a PostgreSQL store" in refused(
        agentor("ls", "--store", str(a), "--schema", "s"), 2
    )
    assert "invalid schema name" in refused(
        agentor("ls", "--store", "postgresql://x@127.0.0.1/db", "--schema", "no such"), 2
    )
    assert "is not in the store" in refused(
        agentor("show", "runs/x.jsonl", "--store", "postgresql://x@127.0.0.1/db"), 2
    )
    assert agentor("ls", str(a), "--store", str(a)).returncode == 0  # the same, twice


@pytest.mark.parametrize(
    "command",
    [
        ["ls"],
        ["show", "r1"],
        ["approve", "r1"],
        ["submit", "hi", "--agent", AGENT],
        ["worker", "--agent", AGENT],
        ["copy", "{dsn}", "{dir}"],
    ],
    ids=lambda c: c[0],
)
def test_a_database_that_cannot_be_used_is_one_line_and_never_shows_the_password(
    command: list[str], tmp_path: Path
) -> None:
    for dsn, why, status in [
        (f"postgresql://agentor:{SECRET}@127.0.0.1:1/agents", "cannot connect", 1),
        (f"postgresql://postgres:{SECRET}@127.0.0.1:5432/no_such_db", "no_such_db", 1),
        (f"postgresql://agentor:{SECRET}@[::1", "not a valid PostgreSQL DSN", 2),  # usage
    ]:
        args = [a.replace("{dsn}", dsn).replace("{dir}", str(tmp_path / "out")) for a in command]
        if "{dsn}" not in command[1:] and command[0] != "copy":
            args += ["--store", dsn]
        line = refused(agentor(*args), status)
        assert why in line, line
        assert SECRET not in line
        assert ":***@" in line, "the store is named, without its password"


def test_copy_takes_runs_from_a_directory_into_a_database_and_back(
    pg_stores: PgStores, tmp_path: Path
) -> None:
    first = tmp_path / "first"
    travel = Travel(FileStore(first))
    done = travel.agent.run(TRAVEL_PROMPT).run_id
    waiting = travel.agent.run(TRAVEL_PROMPT).run_id
    db = ["--schema", pg_stores.schema]

    into = agentor("copy", str(first), pg_stores.dsn, *db)
    assert into.returncode == 0, into.stderr
    assert into.stdout.startswith("2 copied, 0 extended, 0 already there, 0 skipped (from ")
    assert into.stderr == ""
    back = tmp_path / "made" / "back"
    out = agentor("copy", pg_stores.dsn, str(back), *db)
    assert out.returncode == 0, out.stderr
    for run_id in (done, waiting):
        assert lines(FileStore(back), run_id) == lines(FileStore(first), run_id)
    again = agentor("copy", str(first), pg_stores.dsn, *db, "--run", done)
    assert again.stdout.startswith("0 copied, 0 extended, 1 already there, 0 skipped")

    db_store = pg_stores()
    with db_store.lock(waiting):  # being written there: skipped, said on stderr
        held = agentor("copy", pg_stores.dsn, str(tmp_path / "third"), *db)
    assert held.returncode == 0, held.stderr
    assert held.stdout.startswith("1 copied, 0 extended, 0 already there, 1 skipped")
    assert held.stderr.splitlines() == [
        f"agentor copy: skipped {waiting}: being written in the source (by process {os.getpid()})"
    ]


def test_copy_refuses_the_same_store_twice_a_missing_source_and_bad_run_ids(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    assert "SRC and DST are the same store" in refused(agentor("copy", str(runs), str(runs)), 2)
    assert "no such directory" in refused(agentor("copy", str(tmp_path / "no"), str(runs)), 1)
    assert "is not a run id" in refused(
        agentor("copy", str(runs), str(tmp_path / "o"), "--run", "a/b"), 2
    )
    assert "--src-schema is for a PostgreSQL store" in refused(
        agentor("copy", str(runs), str(tmp_path / "o"), "--src-schema", "s"), 2
    )


def test_submit_prints_the_run_id_and_a_worker_of_the_agents_name_will_run_it(
    place: Place,
) -> None:
    made = agentor("submit", TRAVEL_PROMPT, "--agent", AGENT, *place.args, "--run-id", "job-7")
    assert made.returncode == 0, made.stderr
    assert made.stdout == "job-7\n"
    [start] = place.store.load("job-7")
    assert (start.type, start.agent) == (RUN_START, "Travel Agent")
    assert start.messages is not None and start.messages[-1]["content"] == TRAVEL_PROMPT
    again = agentor("submit", TRAVEL_PROMPT, "--agent", AGENT, *place.args, "--run-id", "job-7")
    assert again.stdout == "job-7\n"
    assert "started with a different input" in refused(
        agentor("submit", "Other", "--agent", AGENT, *place.args, "--run-id", "job-7"), 1
    )
    assert len(place.store.load("job-7")) == 1
    listed = json.loads(agentor("ls", *place.args, "--json").stdout)
    assert [(r["run_id"], r["status"]) for r in listed] == [("job-7", INTERRUPTED)]

    for piped_in, prompt in [("From stdin\n", "From stdin"), ("Two\nlines\n\n", "Two\nlines\n")]:
        piped = subprocess.run(
            [str(SCRIPT), "submit", "-", "--agent", AGENT, *place.args],
            input=piped_in,
            cwd=ROOT,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert piped.returncode == 0, piped.stderr
        run_id = piped.stdout.strip()
        # One trailing newline (echo's) is not part of the prompt.
        assert place.store.load(run_id)[0].messages[-1]["content"] == prompt  # type: ignore[index]


def test_submit_refuses_an_empty_prompt_a_bad_run_id_and_two_agents(tmp_path: Path) -> None:
    runs = ["--store", str(tmp_path)]
    assert "PROMPT is empty" in refused(agentor("submit", " ", "--agent", AGENT, *runs), 2)
    assert "is not a run id" in refused(
        agentor("submit", "hi", "--agent", AGENT, *runs, "--run-id", "a b"), 2
    )
    assert "submit takes one --agent" in refused(
        agentor("submit", "hi", "--agent", AGENT, "--agent", AGENT, *runs), 2
    )
    assert list(tmp_path.iterdir()) == []
