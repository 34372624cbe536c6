"""`TellingFileStore`: the FileStore of a `DirectorySource`, telling when this process has
taken a run (`RunSource.resume_store`, `agentor.sources.telling`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentor.engine.store.file import FileStore
from agentor.sources.telling import TellsWhenHeld


class TellingFileStore(TellsWhenHeld, FileStore):
    """The directory's store, saying when a resume has taken a run: one made for each resume
    (a FileStore holds nothing open between calls)."""

    def __init__(self, directory: Path, held: Callable[[str], None]) -> None:
        super().__init__(directory)
        self.held_hooks = [held]
