"""Keeping the screen in step with the directory: the rows the first scan could only sketch are
completed in the background, watchfiles reports what changes, and a timer re-checks which runs
are alive (running vs interrupted comes from the store's lock).

Workers and timers are started in `start`, and watching only when the app is live (tests and
snapshots turn it off, as Posting does).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.css.query import NoMatches

from .literal import literal_line

if TYPE_CHECKING:
    from .app import RunsApp

FILL_BATCH = 64
FILL_REDRAW_S = 0.25
WATCH_STEP_MS = 20
WATCH_DEBOUNCE_MS = 200
LIVENESS_EVERY_S = 1.0


def start(app: RunsApp) -> None:
    # Complete the quick rows after the first frame is on screen.
    fill = functools.partial(fill_rows, app)
    app.call_after_refresh(app.run_worker, fill, name="fill_rows", group="fill", exclusive=True)
    if app.live:
        watch = functools.partial(watch_directory, app)
        app.run_worker(watch, name="watch_directory", group="watch", exclusive=True)
        app.set_interval(LIVENESS_EVERY_S, functools.partial(check_liveness, app))


async def fill_rows(app: RunsApp) -> None:
    """Complete the summaries the scan could only sketch (turns, tokens), a batch a time."""
    last_draw = 0.0
    # RunIndex is thread-safe: whole files are read off the event loop.
    with contextlib.suppress(NoMatches):  # the app closed while a batch was read
        while await asyncio.to_thread(app.index.fill, FILL_BATCH):
            if time.monotonic() - last_draw > FILL_REDRAW_S:
                last_draw = time.monotonic()
                app.show_rows()
            await asyncio.sleep(0.005)  # the reading thread holds the GIL: let keys in
        app.show_rows()


async def watch_directory(app: RunsApp) -> None:
    """Apply what changes in the directory, as it changes (watchfiles)."""
    from watchfiles import awatch

    directory = app.directory
    try:
        async for batch in awatch(
            directory,
            step=WATCH_STEP_MS,
            debounce=WATCH_DEBOUNCE_MS,
            recursive=False,
            ignore_permission_denied=True,
        ):
            apply_paths(app, (Path(p) for _, p in batch))
            if not directory.is_dir():
                break
    except NoMatches:  # the app closed while a batch was being applied
        return
    except (OSError, RuntimeError) as exc:
        if directory.is_dir():
            app.tell(
                f"Stopped watching {literal_line(str(directory))}: {literal_line(str(exc), 300)}",
                severity="error",
            )
    if not directory.is_dir():
        with contextlib.suppress(NoMatches):
            directory_deleted(app)


def apply_paths(app: RunsApp, paths: Iterable[Path]) -> None:
    wanted = [p for p in paths if p != app.directory]
    if wanted:
        app.apply_changes(app.index.refresh(wanted))


def check_liveness(app: RunsApp) -> None:
    if app.index.refresh_liveness():
        app.show_rows()
    else:
        app.run_list.redraw()  # "3m ago" moves on


def directory_deleted(app: RunsApp) -> None:
    app.directory_gone = True
    app.run_list.empty_message = (
        f"The directory {app.directory} was deleted: there is nothing left to show."
    )
    apply_paths(app, (r.path for r in app.index.rows()))
    app.show_rows()
    app.timeline.clear("The run directory was deleted.")
    app.tell(f"{literal_line(str(app.directory))} was deleted.", severity="warning")
