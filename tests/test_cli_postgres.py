"""`agentor-tui postgresql://user@host/db [--schema NAME]`: the database's runs in a real
terminal, its header naming the store without the password; every bad input a one-line error
and exit status 2, never with the password."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentor.engine.events import Event
from tests.pg_support import SCHEMA, PgStores
from tests.test_cli import run_cli
from tests.test_tui_process import SCRIPT, Terminal, wait
from tui.cli import main

SECRET = "s3cret-Pw"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path)
    try:
        yield term
    finally:
        term.close()


def with_password(dsn: str, password: str = SECRET) -> str:
    """The test server's DSN with a password in it (its trust auth takes any)."""
    user, _, rest = dsn.removeprefix("postgresql://").partition("@")
    return f"postgresql://{user}:{password}@{rest}"


def test_help_names_the_database_form_and_the_schema() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    for word in ("STORE", "postgresql://user@host/db", "--schema NAME", "default: agentor"):
        assert word in proc.stdout, word


def test_bad_database_input_is_one_line_and_exit_2_without_the_password(
    pg_stores: PgStores, capsys: pytest.CaptureFixture[str]
) -> None:
    dsn = with_password(pg_stores.dsn)
    newer = f"{SCHEMA}_tui_newer"
    pg_stores(schema=newer).close()
    pg_stores.sql(
        f"INSERT INTO \"{newer}\".schema_version (version, applied_by) VALUES (9, 'future')"
    )
    host = pg_stores.dsn.split("@", 1)[1].split("/", 1)[0]
    cases = {
        # Not a DSN libpq can read (the password holds a space).
        (dsn.replace(SECRET, SECRET + " x"), SCHEMA): "not a valid PostgreSQL DSN",
        # No server there.
        (dsn.replace(host, "127.0.0.1:1"), SCHEMA): "cannot connect to",
        # No such database.
        (dsn.rsplit("/", 1)[0] + "/no_such_db_x7", SCHEMA): "does not exist",
        # A schema made by a newer agentor: refused, left alone.
        (dsn, newer): "version 9",
        (dsn, 'x"; DROP TABLE y; --'): "--schema: invalid schema name",
    }
    for (given, schema), says in cases.items():
        assert main([given, "--schema", schema]) == 2
        err = capsys.readouterr().err
        assert err.startswith("agentor-tui: error: ") and err.count("\n") == 1, err
        assert says in err, err
        assert SECRET not in err, err
    assert pg_stores.sql(f'SELECT version FROM "{newer}".schema_version ORDER BY 1') == [
        (1,),
        (2,),
        (3,),
        (4,),
        (9,),
    ]


def test_schema_is_refused_with_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path), "--schema", "agentor"]) == 2
    assert capsys.readouterr().err == (
        f"agentor-tui: error: --schema is for a PostgreSQL store; {tmp_path} is a directory\n"
    )


def test_an_unreachable_server_ends_the_process_with_status_2(pg_dsn: str) -> None:
    proc = run_cli(with_password(pg_dsn.replace(pg_dsn.split("@")[1].split("/")[0], "127.0.0.1:1")))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("agentor-tui: error: cannot connect to postgresql://")
    assert proc.stderr.count("\n") == 1 and SECRET not in proc.stderr
    assert "postgres:***@127.0.0.1:1/" in proc.stderr


def test_the_database_opens_in_a_terminal_its_header_naming_it_without_the_password(
    pg_stores: PgStores, terminal: Terminal, tmp_path: Path
) -> None:
    with pg_stores() as store:
        start = Event("run_start", agent="Weather Agent", model="scripted")
        start.messages = [{"role": "user", "content": "Weather in Oslo?"}]
        store.append("oslo-job", start)
    status = tmp_path / "status.txt"
    tui = str(SCRIPT) if SCRIPT.exists() else f"{sys.executable} -m tui"
    dsn = with_password(pg_stores.dsn)
    terminal.start(f"{tui} '{dsn}' --schema {SCHEMA}; echo $? >{status}; sleep 60", {})
    screen = wait(lambda: (s := terminal.screen()) and "oslo-job" in s and s, 20, "the list")
    assert isinstance(screen, str)
    header = screen.splitlines()[0]
    assert with_password(pg_stores.dsn, "***") in header and f"schema {SCHEMA}" in header
    assert "interrupted" in screen and "Weather in Oslo?" in screen
    assert SECRET not in screen
    terminal.keys("q")
    wait(lambda: status.exists() and status.read_text().strip(), 10, "the process to end")
    assert status.read_text().strip() == "0"
    assert SECRET not in terminal.screen()


def test_the_tui_on_a_directory_never_loads_the_database_driver(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from tui.cli import main\n"
        "import tui.app\n"
        f"main([{str(tmp_path / 'missing')!r}])\n"
        "print('psycopg' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=Path.cwd()
    )
    assert proc.stdout == "False\n", proc.stderr
