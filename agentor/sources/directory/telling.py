"""`TellingFileStore`: the FileStore of a `DirectorySource`, telling when this process has
taken a run (`RunSource.resume_store`)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from agentor.engine.store.file import FileStore


class TellingFileStore(FileStore):
    """The directory's store, saying when a resume has taken a run (`RunSource.resume_store`)."""

    def __init__(self, directory: Path, held: Callable[[str], None]) -> None:
        super().__init__(directory)
        self._held_hook = held

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        with super().lock(run_id):
            self._held_hook(run_id)  # from the thread taking the lock
            yield
