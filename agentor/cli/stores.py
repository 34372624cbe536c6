"""The store a command works on, and the run it names.

`--store DIR|DSN` names the store: a directory (a FileStore) or a PostgreSQL DSN, a
`postgresql://` URL or libpq's `key=value` pairs (`pg.dsn.is_dsn` tells which; a PostgresStore,
in the schema `--schema`, default `agentor`). `--dir DIR` is its older name for
a directory, and `agentor ls` takes the store as its argument too. A command never creates a
directory or a log: a missing directory is refused (`FileStore` would make it, and taking a
run's lock would create its file); only `agentor copy` makes its destination. Nor a schema: one
that holds no store is refused (`SchemaNotFoundError`), except by the commands that write new
runs (`submit`, `worker`, `copy` into it). A DSN libpq cannot parse is a usage error. A
database is named by its DSN without the password (`PostgresStore.where`): a password is
never printed.

`RUN` is a run id, a unique prefix of one (`agentor show 3f2a`), or the path of a log
(`runs/<run id>.jsonl`: a directory store).
"""

from __future__ import annotations

import os
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentor.cli.lines import Refusal, UsageError
from agentor.engine.events import Event
from agentor.engine.log.format import BadLine
from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from agentor.engine.store.pg.dsn import is_dsn
from agentor.engine.store.run_ids import RUN_ID_RE, RUN_ID_RULE, SUFFIX

if TYPE_CHECKING:
    from agentor.sources.source import RunSource

DEFAULT_STORE = "runs"
DEFAULT_SCHEMA = "agentor"
_opened: list[Any] = []  # stores and sources with connections, closed when the command ends


def store_spec(args: Namespace) -> str:
    """The store the arguments name: `--store`, `--dir` or ls's DIR (one of them), or `runs`."""
    given = {
        flag: value
        for flag, value in (
            ("DIR", getattr(args, "dir_arg", None)),
            ("--dir", getattr(args, "dir", None)),
            ("--store", getattr(args, "store", None)),
        )
        if value is not None
    }
    if len(set(given.values())) > 1:
        raise UsageError(f"{' and '.join(given)} name different stores: give one")
    return next(iter(given.values()), DEFAULT_STORE)


def open_store(
    spec: str,
    schema: str | None,
    *,
    create: bool = False,
    make_schema: bool = False,
    pool_size: int | None = None,
) -> Store:
    """The store `spec` names (see the module); refused in one line when it cannot be used.
    `create`: make what is missing (a directory, a schema); `make_schema`: a schema only (a
    command that writes new runs into a directory that must be there)."""
    if is_dsn(spec):
        return _open_database(spec, schema or DEFAULT_SCHEMA, pool_size, create or make_schema)
    if schema is not None:
        raise UsageError(f"--schema is for a PostgreSQL store; {spec} is a directory")
    return _open_directory(spec, create)


def store_of(args: Namespace, *, pool_size: int | None = None, make_schema: bool = False) -> Store:
    """The store the arguments name; `make_schema`: the command writes new runs (a database's
    schema is made then, if missing)."""
    schema = getattr(args, "schema", None)
    return open_store(store_spec(args), schema, pool_size=pool_size, make_schema=make_schema)


def source_of(args: Namespace) -> RunSource:
    """The read side of the store the arguments name (`agentor.sources.opening`), for the
    commands that show runs as the TUI lists them (`ls`, `show`); refused as `open_store`
    refuses, and nothing is made."""
    from agentor.errors import MalformedDsnError, PostgresStoreError, StoreSpecError
    from agentor.sources.opening import open_source

    spec, schema = store_spec(args), getattr(args, "schema", None)
    if schema == "" and is_dsn(spec):
        schema = None  # as `open_store` takes it: the default schema
    try:
        source = open_source(spec, schema)
    except StoreSpecError as exc:
        raise UsageError(str(exc)) from None
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise Refusal(_not_there(spec, exc.strerror)) from None
    except ImportError:
        from agentor.engine.store.postgres import DRIVER_HINT

        raise Refusal(DRIVER_HINT) from None
    except MalformedDsnError as exc:
        raise UsageError(str(exc)) from None
    except PostgresStoreError as exc:
        raise Refusal(str(exc)) from None
    _opened.append(source)
    return source


def _not_there(directory: str, why: str | None) -> str:
    """Why a directory cannot be used: "no such directory: runs (in /home/me)"."""
    where = "" if Path(directory).is_absolute() else f" (in {Path.cwd()})"
    return f"{why}: {directory}{where}"


def _open_directory(directory: str, create: bool) -> FileStore:
    path = Path(directory)
    if path.exists() and not path.is_dir():  # a file: never a store, even one to be made
        raise Refusal(_not_there(directory, "not a directory"))
    if not create and not path.is_dir():
        raise Refusal(_not_there(directory, "no such directory"))
    try:
        return FileStore(path)
    except OSError as exc:
        raise Refusal(f"cannot use {directory}: {exc.strerror or exc}") from None


def _open_database(dsn: str, schema: str, pool_size: int | None, create: bool) -> Store:
    from agentor.engine.store.pg.dsn import validate_schema
    from agentor.engine.store.postgres import DRIVER_HINT
    from agentor.errors import MalformedDsnError, PostgresStoreError

    try:
        validate_schema(schema)
    except ValueError as exc:
        raise UsageError(f"--schema: {exc}") from None
    try:
        from agentor.engine.store.pg.store import PostgresStore
    except ImportError:
        raise Refusal(DRIVER_HINT) from None
    try:
        if pool_size is None:
            store = PostgresStore(dsn, schema=schema, create=create)
        else:
            store = PostgresStore(dsn, schema=schema, pool_size=pool_size, create=create)
    except MalformedDsnError as exc:
        raise UsageError(str(exc)) from None
    except PostgresStoreError as exc:
        raise Refusal(str(exc)) from None
    _opened.append(store)
    return store


def close_all() -> None:
    """Let go of the connections of every store and source a command opened."""
    while _opened:
        _opened.pop().close()


def where(store: Store) -> str:
    """The store as a command names it: its directory, or its DSN (no password) and schema."""
    if isinstance(store, FileStore):
        return str(store.directory)
    schema = getattr(store, "schema", None)
    name = getattr(store, "where", None) or repr(store)
    return f"{name} (schema {schema})" if schema else name


def the_run(args: Namespace) -> tuple[Store, str]:
    """The store and run id that `RUN` and the store arguments name (see the module)."""
    given = run_named(args)
    store = store_of(args)
    return store, run_in(store, given)


def run_named(args: Namespace) -> str:
    """What `RUN` names: a run id or a prefix of one; the path of a log names its directory
    as the store too (`args` say so from now on)."""
    given: str = args.run_id
    if os.sep in given:  # the path of a log
        path = Path(given)
        spec = store_spec(args) if (args.dir or args.store) else None
        if spec is not None and (is_dsn(spec) or Path(spec).resolve() != path.parent.resolve()):
            raise UsageError(f"{given} is not in the store {spec}")
        args.dir, args.store, given = str(path.parent), None, path.name
    return given.removesuffix(SUFFIX)


def run_in(store: Store, given: str) -> str:
    """The run of `store` that `given` (`run_named`) names: that id, or the one run whose id
    starts so."""
    if not RUN_ID_RE.fullmatch(given):
        raise UsageError(f"{given!r} is not a run id ({RUN_ID_RULE})")
    if _has(store, given):
        return given
    matches = [r for r in store.list_runs() if r.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise Refusal(f"no run {given} in {where(store)}")
    shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
    raise Refusal(f"{len(matches)} runs start with {given}: {shown}; give more of the id")


def _has(store: Store, run_id: str) -> bool:
    if isinstance(store, FileStore):
        return store.path(run_id).exists()
    listing = getattr(store, "list_summaries", None)
    if listing is not None:
        return bool(listing(run_ids=[run_id]))
    return run_id in store.list_runs()


def load_with_errors(store: Store, run_id: str) -> tuple[list[Event], list[BadLine]]:
    """A run's events and its unreadable lines (a store that keeps none: no bad lines)."""
    from agentor.engine.store.holding import load_lines  # asyncio: not for every command

    lines = load_lines(store, run_id)
    events = [x for x in lines if isinstance(x, Event)]
    return events, [x for x in lines if isinstance(x, BadLine)]
