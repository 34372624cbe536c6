"""The registry of store backends (`agentor.backends`): a spec names one backend, and nobody else
asks what kind of store a spec names or a store is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agentor import backends
from agentor.engine.store.file import FileStore
from agentor.errors import StoreSpecError
from agentor.sources.directory.backend import DIRECTORY
from agentor.sources.postgres.backend import POSTGRES
from tests.conftest import ROOT

DSNS = ["postgresql://u:secret@db/x", "postgres://db/x", "host=db dbname=x", "dbname = 'a b'"]
PATHS = ["runs", "./host=db", "runs/postgresql", "/tmp/x y", "a=b", "x host=db"]


@pytest.mark.parametrize("spec", DSNS)
def test_a_dsn_names_the_database_backend(spec: str) -> None:
    assert backends.backend_for(spec) is POSTGRES
    assert "secret" not in backends.shown(spec)


@pytest.mark.parametrize("spec", PATHS)
def test_any_other_spec_and_any_path_object_name_a_directory(spec: str) -> None:
    assert backends.backend_for(spec) is DIRECTORY
    assert backends.backend_for(Path(spec)) is DIRECTORY
    assert backends.shown(spec) == spec
    assert backends.backend_for(Path("host=db")) is DIRECTORY  # a path object is never a DSN


def test_one_store_is_told_from_another_whatever_its_spec_looks_like(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert backends.same_store(str(runs), None, str(tmp_path / "x" / ".." / "runs"), None)
    assert not backends.same_store(str(runs), None, str(tmp_path / "other"), None)
    dsn = "postgresql://db/x"
    assert backends.same_store(dsn, None, dsn, "agentor")  # None: the default schema
    assert not backends.same_store(dsn, "a", dsn, "b")
    assert not backends.same_store(dsn, None, str(runs), None)


def test_a_schema_goes_only_with_a_backend_that_has_schemas(tmp_path: Path) -> None:
    with pytest.raises(StoreSpecError, match="--schema is for a PostgreSQL store"):
        backends.check_schema(str(tmp_path), "agentor")
    with pytest.raises(StoreSpecError, match="--schema: invalid schema name"):
        backends.check_schema("postgresql://db/x", "no such name!")
    backends.check_schema("postgresql://db/x", None)
    backends.check_schema(str(tmp_path), None)


def test_opening_makes_nothing_unless_asked(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError):
        backends.store_named(str(missing))
    with pytest.raises(FileNotFoundError):
        backends.open_source(str(missing))
    assert not missing.exists()
    assert isinstance(backends.store_named(str(missing), create=True), FileStore)
    assert missing.is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError):
        backends.store_named(str(tmp_path / "file"), create=True)


# Who may tell backends apart: the registry, and each backend's own package.
ALLOWED = ("agentor/backends.py", "agentor/sources/postgres/", "agentor/sources/directory/")
STORE_CLASSES = ("FileStore", "PostgresStore", "MemoryStore")


def _python_files() -> list[Path]:
    return sorted([*(ROOT / "agentor").rglob("*.py"), *(ROOT / "tui").rglob("*.py")])


def test_nobody_outside_the_registry_asks_what_kind_of_store_a_spec_or_a_store_is() -> None:
    asking = []
    for path in _python_files():
        where = path.relative_to(ROOT).as_posix()
        if where.startswith(ALLOWED) or where.startswith("agentor/engine/store/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and any(a.name == "is_dsn" for a in node.names):
                asking.append(f"{where}:{node.lineno}: imports is_dsn")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "isinstance"
                and len(node.args) == 2
                and any(
                    isinstance(n, ast.Name) and n.id in STORE_CLASSES
                    for n in ast.walk(node.args[1])
                )
            ):
                asking.append(f"{where}:{node.lineno}: isinstance of a store class")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[0], ast.Name)
                and "store" in node.args[0].id
            ):
                asking.append(f"{where}:{node.lineno}: {node.func.id} on a store")
    assert not asking, "\n".join(asking)
