"""Watching a run directory: which directory is at a path now, and batches of the paths that
change in it (watchfiles).

watchfiles gives no sign of when its watch is set up (inside `awatch`'s first step), and a
change made before that is never reported. So the watch proves itself: a probe file is written
to until a batch reports it; `None` says so, first, in the stream of batches.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import AsyncGenerator
from pathlib import Path

# watchfiles polls its queue every `step` ms and yields once a step brings nothing new, or
# after `debounce` ms of steady changes: an append shows within ~2 steps, and a run writing
# without pause is still shown every `debounce` ms (a batch, however many events it holds).
WATCH_STEP_MS = 10
WATCH_DEBOUNCE_MS = 40
# How often the probe file is written to until the watcher reports it.
PROBE_EVERY_S = 0.05
_probes = itertools.count()


def identity(directory: Path) -> tuple[int, int] | None:
    """Which directory is at that path now, (device, inode) (None: none is)."""
    try:
        st = directory.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


async def changed_paths(directory: Path) -> AsyncGenerator[list[Path] | None, None]:
    """`None` once the watch is set up (proved by a probe file; at once in a directory we may
    not write to), then each batch of paths that changed, until the directory is gone.
    OSError or RuntimeError when watching fails."""
    import asyncio  # here: a listing that watches nothing does not load it

    from watchfiles import awatch

    # Hidden, and not a run log's name: every reader of the directory passes it by.
    probe = directory / f".agentor-tui-{os.getpid()}-{next(_probes)}.probe"
    try:
        # Made here (O_EXCL), never followed if a link or a FIFO took its name.
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        prober = None  # nothing can prove the watch: take it as set up
        yield None
    else:
        prober = asyncio.ensure_future(_write_probe(fd))
    try:
        async for batch in awatch(
            directory,
            step=WATCH_STEP_MS,
            debounce=WATCH_DEBOUNCE_MS,
            recursive=False,
            ignore_permission_denied=True,
        ):
            paths = [Path(p) for _, p in batch]
            if prober is not None and any(p.name == probe.name for p in paths):
                prober.cancel()
                prober = None
                _remove(probe)
                yield None
            yield paths
            if not directory.is_dir():
                return
    finally:
        if prober is not None:
            prober.cancel()
            _remove(probe)


async def _write_probe(fd: int) -> None:
    """Write a byte every PROBE_EVERY_S until cancelled (the watcher saw it); then close."""
    import asyncio

    try:
        while True:
            os.write(fd, b".")
            await asyncio.sleep(PROBE_EVERY_S)
    except OSError:
        return  # a full disk, say: the watch stays unproved (and works as well)
    finally:
        os.close(fd)


def _remove(probe: Path) -> None:
    with contextlib.suppress(OSError):
        probe.unlink()
