"""A worker's directory watch rests while the worker has no free slot: every append of every
run would otherwise cost its watch thread an inotify event (bench/fleet.py)."""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path

from agentor.engine.events import RUN_START, Event
from agentor.engine.store.file import FileStore
from agentor.fleet.claims import Wanted
from agentor.fleet.finders import ScanFinder
from tests.conftest import wait_for


def inotify_watches() -> int:
    """How many inotify instances this process has open."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            pass
    return count


def test_a_directory_watch_rests_while_the_worker_has_no_free_slot(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    finder = ScanFinder(store, Wanted(frozenset({"A"})))
    woken: queue.Queue[object] = queue.Queue()
    stop, slot_free = threading.Event(), threading.Event()
    before = inotify_watches()
    watch = threading.Thread(target=finder.watch, args=(woken.put, stop, slot_free))
    watch.start()
    try:
        for n in range(2):
            # No free slot: no watch is open, so no append can cost it anything.
            assert inotify_watches() == before
            store.append(f"rest{n}", Event(RUN_START, agent="A", messages=[]))
            # A slot frees: the directory is watched again and a new run wakes the worker.
            slot_free.set()
            wait_for(lambda: inotify_watches() == before + 1, what="the watch to start")
            # (appended again until it does: the watch's inotify may predate its directory's)
            wait_for(
                lambda n=n: (
                    store.append(f"new{n}", Event(RUN_START, agent="A", messages=[]))
                    or not woken.empty()
                ),
                what="a wake",
            )
            slot_free.clear()
            wait_for(lambda: inotify_watches() == before, what="the watch to rest")
    finally:
        stop.set()
        watch.join(10)
    assert not watch.is_alive()
