"""Keeping the screen in step with the directory: the rows the first scan could only sketch are
completed in the background, watchfiles reports what changes, and a timer re-checks which runs
are alive (running vs interrupted comes from the store's lock) and whether a deleted directory
came back.

Workers and timers are started in `start`, and watching only when the app is live (tests and
snapshots turn it off, as Posting does). Every worker stops quietly once the app is closing:
its widgets may already be gone when a batch it was reading comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ScreenStackError
from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.types import NoActiveAppError

from .literal import literal_line

if TYPE_CHECKING:
    from .app import RunsApp

FILL_BATCH = 64
FILL_REDRAW_S = 0.25
# watchfiles polls its queue every `step` ms and yields once a step brings nothing new, or
# after `debounce` ms of steady changes: an append shows within ~2 steps, and a run writing
# without pause is still shown every `debounce` ms (a batch, however many events it holds).
WATCH_STEP_MS = 10
WATCH_DEBOUNCE_MS = 40
LIVENESS_EVERY_S = 1.0
# How often the probe file is written to until the watcher reports it (see `watch_directory`).
PROBE_EVERY_S = 0.05
_probes = itertools.count()

# What touching a widget raises once the app has torn its screen down.
GONE = (NoMatches, NoScreen, ScreenStackError, NoActiveAppError)

# Incomplete runs whose lock the 1 s timer re-probes per tick besides the running ones
# (each probe is an open, a flock and a close on the UI thread).
LIVENESS_BUDGET = 256


def start(app: RunsApp) -> None:
    # Complete the quick rows after the first frame is on screen.
    app.call_after_refresh(want_fill, app)
    if app.live:
        if app.directory.is_dir():
            start_watching(app)
        else:
            app.directory_gone = True  # the timer looks for it to appear
        app.set_interval(LIVENESS_EVERY_S, functools.partial(tick, app))


def closing(app: RunsApp) -> bool:
    """The app is on its way out (`exit()` was called, or its loop stopped)."""
    return app.return_code is not None or not app.is_running


@contextlib.contextmanager
def unless_closing(app: RunsApp) -> Iterator[None]:
    """Widgets gone because the app is closing end the work quietly; at any other time a
    missing widget is a bug and is raised."""
    try:
        yield
    except GONE:
        if not closing(app):
            raise


# -- completing quick rows -------------------------------------------------------------------


def want_fill(app: RunsApp) -> None:
    """Rows need reading whole (at start, or a log over 64 KiB arrived or was replaced):
    (re)start the fill worker, or have the running one go round again."""
    if closing(app):
        return
    app.fill_again = True
    worker = app.fill_worker
    if worker is None or worker.is_finished:
        app.fill_worker = app.run_worker(
            functools.partial(fill_rows, app), name="fill_rows", group="fill", exclusive=True
        )


async def fill_rows(app: RunsApp) -> None:
    """Complete the summaries the scan could only sketch (turns, tokens), a batch a time."""
    with unless_closing(app):
        # The flag is cleared before each pass: rows that need filling while a pass runs
        # (a pass may already have gone by them) get a pass of their own.
        while app.fill_again:
            app.fill_again = False
            last_draw = time.monotonic()
            # RunIndex is thread-safe: whole files are read off the event loop.
            while await asyncio.to_thread(app.index.fill, FILL_BATCH):
                if closing(app):
                    return
                if time.monotonic() - last_draw > FILL_REDRAW_S:
                    last_draw = time.monotonic()
                    app.show_rows()
                await asyncio.sleep(0.005)  # the reading thread holds the GIL: let keys in
            if closing(app):
                return
            app.show_rows()


# -- watching the directory ------------------------------------------------------------------


def start_watching(app: RunsApp) -> None:
    app.watched_directory = identity(app.directory)
    app.watch_armed = False
    app.run_worker(
        functools.partial(watch_directory, app),
        name="watch_directory",
        group="watch",
        exclusive=True,
    )


async def watch_directory(app: RunsApp) -> None:
    """Apply what changes in the directory, as it changes (watchfiles).

    watchfiles gives no sign of when its watch is set up (inside `awatch`'s first step), and a
    change made before that is never reported. So the watcher proves itself: a probe file is
    written to until a batch reports it; then the watcher is armed (`armed`)."""
    from watchfiles import awatch

    directory = app.directory
    # Hidden, and not a run log's name: every reader of the directory passes it by.
    probe = directory / f".agentor-tui-{os.getpid()}-{next(_probes)}.probe"
    try:
        # Made here (O_EXCL), never followed if a link or a FIFO took its name.
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        # A directory we may not write to: nothing can prove the watch; take it as set up.
        prober = None
        await armed(app)
    else:
        prober = asyncio.ensure_future(write_probe(fd))
    with unless_closing(app):
        try:
            async for batch in awatch(
                directory,
                step=WATCH_STEP_MS,
                debounce=WATCH_DEBOUNCE_MS,
                recursive=False,
                ignore_permission_denied=True,
            ):
                if closing(app):
                    return
                paths = [Path(p) for _, p in batch]
                if prober is not None and any(p.name == probe.name for p in paths):
                    prober.cancel()
                    prober = None
                    remove(probe)
                    await armed(app)
                # One batch holds every change since the last (bursts come as one): each
                # file is read once, and the screen is drawn once for all of it.
                apply_paths(app, paths)
                if not directory.is_dir():
                    break
        except (OSError, RuntimeError) as exc:
            if directory.is_dir() and not closing(app):
                app.tell(
                    f"Stopped watching {literal_line(str(directory))}: "
                    f"{literal_line(str(exc), 300)}",
                    severity="error",
                )
        finally:
            if prober is not None:
                prober.cancel()
                remove(probe)
        if not directory.is_dir() and not closing(app):
            directory_deleted(app)


async def write_probe(fd: int) -> None:
    """Write a byte every PROBE_EVERY_S until cancelled (the watcher saw it); then close."""
    try:
        while True:
            os.write(fd, b".")
            await asyncio.sleep(PROBE_EVERY_S)
    except OSError:
        return  # a full disk, say: the watch stays unproved (and works as well)
    finally:
        os.close(fd)


def remove(probe: Path) -> None:
    with contextlib.suppress(OSError):
        probe.unlink()


async def armed(app: RunsApp) -> None:
    """The watch is set up: read the directory again, for what changed between the first
    scan and now (otherwise it would wait for its file's next change), then say so."""
    changes = await asyncio.to_thread(app.index.refresh)
    with unless_closing(app):
        if not closing(app):
            app.apply_changes(changes)
            app.watch_armed = True


def identity(directory: Path) -> tuple[int, int] | None:
    """Which directory is at that path now (None: none is)."""
    try:
        st = directory.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def apply_paths(app: RunsApp, paths: Iterable[Path]) -> None:
    wanted = [p for p in paths if p != app.directory]
    if wanted:
        app.apply_changes(app.index.refresh(wanted))


def directory_deleted(app: RunsApp) -> None:
    if app.directory_gone:
        return
    app.directory_gone = True
    app.run_list.empty_message = (
        f"The directory {app.directory} was deleted: there is nothing left to show. "
        "It is shown again if it comes back."
    )
    apply_paths(app, (r.path for r in app.index.rows()))
    app.show_rows()
    app.timeline.clear("The run directory was deleted.")
    app.tell(f"{literal_line(str(app.directory))} was deleted.", severity="warning")


def directory_back(app: RunsApp) -> None:
    """The directory exists again: list it from scratch and watch it again."""
    app.directory_gone = False
    app.run_list.empty_message = "No runs yet."
    app.index.scan()
    app.show_rows()
    if app.timeline.run_id is None and app.run_list.current is not None:
        app.open_run(app.run_list.current.run_id)
    want_fill(app)
    start_watching(app)  # in place of a watcher on the directory that was there before
    app.tell(f"{literal_line(str(app.directory))} is back.", timeout=4)


def reload(app: RunsApp) -> None:
    """ctrl+r, for a directory not watched: read it again; the selection stays."""
    changes = app.index.refresh()
    moved = app.index.refresh_liveness()
    app.apply_changes(changes)
    if moved:
        app.show_rows()
    counts = (
        (len(changes.added), "new"),
        (len(changes.updated | changes.appended.keys()), "changed"),
        (len(changes.removed), "gone"),
    )
    said = ", ".join(f"{n} {what}" for n, what in counts if n) or "nothing changed"
    app.tell(f"Reloaded {app.directory_label}: {said}.", timeout=3)


# -- the timer -------------------------------------------------------------------------------


def tick(app: RunsApp) -> None:
    """Every second: who holds which lock, "3m ago" moving on, a deleted directory back."""
    with unless_closing(app):
        # One stat a second: a directory deleted and made again at once (`rm -r runs && cp
        # -r saved runs`) leaves the watcher on the old one, which will never change again.
        now = identity(app.directory)
        if app.directory_gone:
            if now is not None:
                directory_back(app)
            return
        if now != app.watched_directory and app.watched_directory is not None:
            if now is None:
                directory_deleted(app)
            else:
                directory_back(app)
            return
        if app.index.refresh_liveness(budget=LIVENESS_BUDGET):
            app.show_rows()
        else:
            app.run_list.clock_moved()
