"""A PostgreSQL DSN written as libpq's `key=value` pairs names a database everywhere a URL does
(`agentor.engine.store.pg.dsn.is_dsn`, the one place that tells a DSN from a directory): never a
directory to make or to look for, and its password is never shown. Real server, real commands.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from psycopg import conninfo

from agentor import PostgresStore, open_store
from agentor.engine.store.pg.dsn import is_dsn, redact
from tests.pg_support import PgStores
from tests.test_agentor_command import agentor, refused
from tests.test_cli import run_cli


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections: bound by this test, never listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_key_value_pairs_are_a_dsn_and_a_path_is_not() -> None:
    assert is_dsn("host=127.0.0.1 port=5999 user=postgres password=x dbname=test")
    assert is_dsn("dbname = test") and is_dsn("password='a b' host=h")
    assert not is_dsn("./host=h") and not is_dsn("a=b") and not is_dsn("host=h and more")
    assert redact("host=h password='a b' dbname=d") == "host=h password=*** dbname=d"


def test_ls_on_a_key_value_dsn_that_does_not_answer_says_one_line_without_the_password(
    tmp_path: Path, closed_port: int
) -> None:
    dsn = f"host=127.0.0.1 port={closed_port} user=postgres password=x dbname=test"
    for command in (["ls", dsn], ["show", "r1", "--store", dsn]):
        line = refused(agentor(*command, cwd=tmp_path))
        assert line.startswith(
            f"agentor {command[0]}: cannot connect to host=127.0.0.1 port={closed_port} "
            "user=postgres password=*** dbname=test: "
        ), line
        assert "password=x" not in line and "no such directory" not in line
    tui = run_cli(dsn, cwd=tmp_path)
    assert tui.stdout == "" and len(tui.stderr.splitlines()) == 1, tui.stderr
    assert "password=***" in tui.stderr and "password=x" not in tui.stderr
    assert os.listdir(tmp_path) == []  # no directory named after the DSN


def test_open_store_on_a_key_value_dsn_is_a_postgres_store_and_makes_no_directory(
    pg_stores: PgStores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    params = conninfo.conninfo_to_dict(pg_stores.dsn)  # the test server, as key=value pairs
    dsn = conninfo.make_conninfo(**params)
    assert "://" not in dsn and "dbname=" in dsn
    monkeypatch.chdir(tmp_path)
    with open_store(dsn, schema=pg_stores.schema) as store:
        assert isinstance(store, PostgresStore)
        assert store.schema == pg_stores.schema
        assert store.list_runs() == []
    assert os.listdir(tmp_path) == []
