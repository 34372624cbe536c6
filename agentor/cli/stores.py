"""The store a command works on, and the run it names.

`--store DIR|DSN` names the store: a directory (a FileStore) or a PostgreSQL DSN, a
`postgresql://` URL or libpq's `key=value` pairs (a PostgresStore, in the schema `--schema`,
default `agentor`); which one is the registry's to tell (`agentor.backends`). `--dir DIR` is its
older name for a directory, and `agentor ls` takes the store as its argument too. A command
never creates a directory or a log: a missing directory is refused (`FileStore` would make it,
and taking a run's lock would create its file); only `agentor copy` makes its destination. Nor a
schema: one that holds no store is refused (`SchemaNotFoundError`), except by the commands that
write new runs (`submit`, `worker`, `copy` into it). A DSN libpq cannot parse is a usage error.
A database is named by its DSN without the password (`PostgresStore.where`): a password is
never printed.

`RUN` is a run id, a unique prefix of one (`agentor show 3f2a`), or the path of a log
(`runs/<run id>.jsonl`: a directory store).
"""

from __future__ import annotations

import os
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentor import backends
from agentor.cli.lines import Refusal, UsageError
from agentor.engine.events import Event
from agentor.engine.log.format import BadLine
from agentor.engine.store.api import ClosingStore, DirectoryStore, LookupStore, ServerStore, Store
from agentor.engine.store.run_ids import RUN_ID_RE, RUN_ID_RULE, SUFFIX
from agentor.errors import MalformedDsnError, PostgresStoreError, StoreSpecError

if TYPE_CHECKING:
    from agentor.sources.source import RunSource

DEFAULT_STORE = "runs"
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


def open_named(
    spec: str,
    schema: str | None,
    *,
    create: bool = False,
    make_schema: bool = False,
    pool_size: int | None = None,
) -> Store:
    """The store `spec` names (see the module; `agentor.backends.store_named`), refused in one
    line when it cannot be used. `create`: make what is missing (a directory, a schema);
    `make_schema`: the command writes new runs (a database's schema is made then; a directory
    must be there)."""
    try:
        store = backends.store_named(
            spec, _schema(spec, schema), create=create, writer=make_schema, pool_size=pool_size
        )
    except (StoreSpecError, MalformedDsnError) as exc:
        raise UsageError(str(exc)) from None
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise Refusal(_not_there(spec, exc.strerror)) from None
    except OSError as exc:
        raise Refusal(f"cannot use {spec}: {exc.strerror or exc}") from None
    except ImportError as exc:  # a database, and no driver to reach it
        raise Refusal(str(exc)) from None
    except PostgresStoreError as exc:
        raise Refusal(str(exc)) from None
    if isinstance(store, ClosingStore):
        _opened.append(store)
    return store


def _schema(spec: str, schema: str | None) -> str | None:
    """`--schema ""` is the default schema, for a store that has schemas."""
    if schema == "" and backends.backend_for(spec).default_schema is not None:
        return None
    return schema


def store_of(args: Namespace, *, pool_size: int | None = None, make_schema: bool = False) -> Store:
    """The store the arguments name; `make_schema`: the command writes new runs (a database's
    schema is made then, if missing)."""
    schema = getattr(args, "schema", None)
    return open_named(store_spec(args), schema, pool_size=pool_size, make_schema=make_schema)


def source_of(args: Namespace) -> RunSource:
    """The read side of the store the arguments name (`agentor.backends.open_source`), for the
    commands that show runs as the TUI lists them (`ls`, `show`); refused as `open_named`
    refuses, and nothing is made."""
    spec = store_spec(args)
    try:
        source = backends.open_source(spec, _schema(spec, getattr(args, "schema", None)))
    except (StoreSpecError, MalformedDsnError) as exc:
        raise UsageError(str(exc)) from None
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise Refusal(_not_there(spec, exc.strerror)) from None
    except ImportError as exc:
        raise Refusal(str(exc)) from None
    except PostgresStoreError as exc:
        raise Refusal(str(exc)) from None
    _opened.append(source)
    return source


def _not_there(directory: str, why: str | None) -> str:
    """Why a directory cannot be used: "no such directory: runs (in /home/me)"."""
    where = "" if Path(directory).is_absolute() else f" (in {Path.cwd()})"
    return f"{why}: {directory}{where}"


def close_all() -> None:
    """Let go of the connections of every store and source a command opened."""
    while _opened:
        _opened.pop().close()


def where(store: Store) -> str:
    """The store as a command names it: its directory, or its DSN (no password) and schema."""
    if isinstance(store, DirectoryStore):
        return str(store.directory)
    if isinstance(store, ServerStore):
        return f"{store.where} (schema {store.schema})"
    return repr(store)


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
        if spec is not None and not _holds(spec, path):
            raise UsageError(f"{given} is not in the store {spec}")
        args.dir, args.store, given = str(path.parent), None, path.name
    return given.removesuffix(SUFFIX)


def _holds(spec: str, log: Path) -> bool:
    """Whether the log's directory is the store `spec` names."""
    directory = backends.backend_for(spec).local_directory(spec)
    return directory is not None and directory.resolve() == log.parent.resolve()


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
    if isinstance(store, LookupStore):
        return store.has_run(run_id)
    return run_id in store.list_runs()


def load_with_errors(store: Store, run_id: str) -> tuple[list[Event], list[BadLine]]:
    """A run's events and its unreadable lines (a store that keeps none: no bad lines)."""
    from agentor.engine.store.holding import load_lines  # asyncio: not for every command

    lines = load_lines(store, run_id)
    events = [x for x in lines if isinstance(x, Event)]
    return events, [x for x in lines if isinstance(x, BadLine)]
