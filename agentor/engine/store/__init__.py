"""Where runs are saved: the store protocols (`api`), `FileStore` (`file`), `MemoryStore`
(`memory`), `PostgresStore` (`postgres`, with its parts in `pg/`), and what every store shares:
run ids, pins, holding a run, copying runs between stores.

This package's own names are upstream Agentor's import path (`from agentor.engine.store import
FileStore`), kept so code written for upstream runs unchanged; `agentor` exports the same names.
"""

from agentor.engine.store.api import Store
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore

__all__ = ["FileStore", "MemoryStore", "Store"]
