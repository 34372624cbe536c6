"""A database store named wrongly: a reading command (`agentor ls`, `show`, `search`, `export`,
`diff`, and `agentor-tui`) given a schema that holds no store says so in one line and makes
nothing (checked in `pg_namespace` after each); only a command that writes new runs makes it.
A DSN libpq cannot parse is a usage error, exit status 2, in every command. The installed
console scripts in subprocesses, a real server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pg_support import SCHEMA, PgStores
from tests.test_agentor_command import agentor, refused
from tests.test_cli import run_cli

AGENT = "tests/approvalkit.py:make_agent"
MALFORMED = "postgresql://[bad"


def schemas(pg: PgStores, name: str) -> list[tuple[str]]:
    return pg.sql("SELECT nspname FROM pg_namespace WHERE nspname = %s", (name,))


def tables_in(pg: PgStores, name: str) -> int:
    rows = pg.sql("SELECT count(*) FROM pg_tables WHERE schemaname = %s", (name,))
    return int(rows[0][0])


READERS = {
    "ls": ["ls", "{dsn}"],
    "show": ["show", "r1", "--store", "{dsn}"],
    "export": ["export", "r1", "--store", "{dsn}"],
    "diff": ["diff", "r1", "r2", "--store", "{dsn}"],
    "search": ["search", "{dsn}", "Lisbon"],
}


def test_reading_commands_refuse_a_schema_that_does_not_exist_and_make_none(
    pg_stores: PgStores,
) -> None:
    typo = f"{SCHEMA}_typo"
    for name, command in READERS.items():
        args = [a.replace("{dsn}", pg_stores.dsn) for a in command]
        # search exits as grep does: 2 for any error (1 would say "nothing matched").
        line = refused(agentor(*args, "--schema", typo), 2 if name == "search" else 1)
        assert f'schema "{typo}" does not exist in postgresql://' in line, line
        assert schemas(pg_stores, typo) == [], f"agentor {name} made the schema"
    tui = run_cli(pg_stores.dsn, "--schema", typo)
    assert tui.returncode == 2 and tui.stdout == ""
    assert tui.stderr == (
        f'agentor-tui: error: schema "{typo}" does not exist in {pg_stores.dsn} '
        "(only a command that writes runs makes one)\n"
    )
    assert schemas(pg_stores, typo) == []

    # A writer of new runs makes it; then the readers read it.
    made = agentor("submit", "hi", "--agent", AGENT, "--store", pg_stores.dsn, "--schema", typo)
    assert made.returncode == 0, made.stderr
    assert schemas(pg_stores, typo) == [(typo,)]
    listed = agentor("ls", pg_stores.dsn, "--schema", typo)
    assert listed.returncode == 0 and made.stdout.strip() in listed.stdout


def test_a_schema_of_something_else_is_refused_and_left_without_our_tables(
    pg_stores: PgStores,
) -> None:
    theirs = f"{SCHEMA}_theirs"
    pg_stores.sql(f'CREATE SCHEMA "{theirs}"')
    line = refused(agentor("ls", pg_stores.dsn, "--schema", theirs), 1)
    assert f'schema "{theirs}" holds no agentor store in postgresql://' in line
    tui = run_cli(pg_stores.dsn, "--schema", theirs)
    assert tui.returncode == 2 and "holds no agentor store" in tui.stderr
    assert tables_in(pg_stores, theirs) == 0


EVERY_COMMAND = [
    ["ls", "{dsn}"],
    ["show", "r1", "--store", "{dsn}"],
    ["approve", "r1", "--store", "{dsn}"],
    ["reject", "r1", "--reason", "no", "--store", "{dsn}"],
    ["resume", "r1", "--agent", AGENT, "--store", "{dsn}"],
    ["submit", "hi", "--agent", AGENT, "--store", "{dsn}"],
    ["worker", "--agent", AGENT, "--store", "{dsn}"],
    ["copy", "{dsn}", "{dir}"],
    ["copy", "{dir}", "{dsn}"],
    ["fork", "r1", "--agent", AGENT, "--store", "{dsn}"],
    ["replay", "r1", "--model", "m", "--agent", AGENT, "--store", "{dsn}"],
    ["diff", "r1", "r2", "--store", "{dsn}"],
    ["prune", "{dsn}", "--older-than", "1d"],
    ["pin", "r1", "--store", "{dsn}"],
    ["unpin", "r1", "--store", "{dsn}"],
    ["export", "r1", "--store", "{dsn}"],
    ["search", "{dsn}", "Lisbon"],
]


@pytest.mark.parametrize("command", EVERY_COMMAND, ids=lambda c: "-".join(c[:2]))
def test_a_malformed_dsn_is_a_usage_error_in_every_command(
    command: list[str], tmp_path: Path
) -> None:
    (tmp_path / "runs").mkdir()
    args = [a.replace("{dsn}", MALFORMED).replace("{dir}", str(tmp_path / "runs")) for a in command]
    line = refused(agentor(*args), 2)
    assert line.startswith(f"agentor {command[0]}: error: not a valid PostgreSQL DSN ("), line


def test_a_malformed_dsn_is_a_usage_error_in_the_tui() -> None:
    tui = run_cli(MALFORMED)
    assert tui.returncode == 2 and tui.stdout == "", tui.stderr
    assert tui.stderr.startswith("agentor-tui: error: not a valid PostgreSQL DSN (")
    assert tui.stderr.count("\n") == 1
