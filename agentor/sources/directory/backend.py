"""The directory backend's entry in the registry (`agentor.backends`): a `--store` value that is
no other backend's is a runs directory, its write store a FileStore and its read side a
`DirectorySource`. What a reader needs is imported when it is opened."""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import TYPE_CHECKING

from agentor.engine.store.file import FileStore
from agentor.errors import StoreSpecError

if TYPE_CHECKING:
    from agentor.sources.directory.source import DirectorySource


class DirectoryBackend:
    """Runs as log files in a directory (see the registry for what each method promises)."""

    name = "directory"
    default_schema: str | None = None  # a directory has no schemas

    def names(self, spec: str | os.PathLike[str]) -> bool:
        return True  # any path: listed last, after the backends a spec names by its form

    def check_schema(self, spec: str, schema: str | None) -> None:
        if schema is not None:
            raise StoreSpecError(f"--schema is for a PostgreSQL store; {spec} is a directory")

    def open_store(
        self,
        spec: str | os.PathLike[str],
        schema: str | None = None,
        *,
        create: bool = False,
        writer: bool = False,
        pool_size: int | None = None,
    ) -> FileStore:
        path = Path(spec)
        if path.exists() and not path.is_dir():  # a file: never a store, even one to be made
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(spec))
        if not create and not path.is_dir():  # FileStore would make it
            raise FileNotFoundError(errno.ENOENT, "no such directory", str(spec))
        return FileStore(path)

    def open_source(
        self, spec: str, schema: str | None = None, *, clock: Callable[[], float] = time.time
    ) -> DirectorySource:
        if not os.path.isdir(spec):
            if os.path.exists(spec):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", spec)
            raise FileNotFoundError(errno.ENOENT, "no such directory", spec)
        from agentor.sources.directory.source import DirectorySource

        return DirectorySource(spec, clock)

    def shown(self, spec: str) -> str:
        return spec

    def key(self, spec: str, schema: str | None) -> Hashable:
        return (self.name, Path(spec).resolve())

    def local_directory(self, spec: str) -> Path | None:
        return Path(spec)

    def state_name(self, spec: str, schema: str | None) -> str:
        return str(Path(spec).resolve())


DIRECTORY = DirectoryBackend()
