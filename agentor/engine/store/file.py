"""Where runs are saved: `FileStore`, one append-only JSONL file per run.

The protocols it implements are in `store.api` (a `Store`, and the capabilities `BatchStore`,
`LockingStore`, `DeletingStore`, `PinningStore`, `ExperimentStore`, `LineKeepingStore`,
`LookupStore`, `DirectoryStore`); run ids and log names in `store.run_ids`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from agentor.engine.events import TRANSIENT_TYPES, Event
from agentor.engine.log.file_io import (
    READ_FLAGS,
    encoder_for,
    open_log,
    open_to_read,
    remove_log,
    repair_tail,
    require_regular,
    same_file,
    write_all,
)
from agentor.engine.log.format import BadLine, LogDecoder, LogEncoder, skipped_lines, split_lines
from agentor.engine.store.experiment_files import append_record, experiment_ids, load_records
from agentor.engine.store.flock import holder, take_exclusive
from agentor.engine.store.pins import add_pin, pin_names, remove_pin
from agentor.engine.store.run_ids import RUN_ID_RE, SUFFIX, run_id_of, validate_run_id
from agentor.errors import RunLockedError, RunNotFoundError

__all__ = ["FileStore"]

log = logging.getLogger("agentor")

# How long a lock attempt retries before refusing: long enough to ride over a reader's
# momentary probe (see `FileStore.is_locked`), far shorter than any real run.
LOCK_PATIENCE = 0.2
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class FileStore:
    """One append-only JSONL file per run in `directory`; each append is flushed and fsynced.

    `compact=True` (the default) writes each generation as a delta against the previous one,
    so a log grows linearly with the conversation; `load()` always returns full messages.

    Symlinks: `directory` is made if missing and resolved once, here (a symlink given, or on
    the way, is followed now, like any path; `self.directory` is the real directory). After
    that no link is followed: each use opens that directory refusing a symlink in its place
    (one swapped in later is an `OSError`, nothing is written through it), and every file in
    it is opened relative to that descriptor, refusing a symlink too (a log, a `.torn` file).
    A directory deleted and made again at the same place is simply used.
    """

    def __init__(self, directory: str | os.PathLike[str] = "runs", compact: bool = True) -> None:
        Path(directory).mkdir(mode=0o700, parents=True, exist_ok=True)
        self.directory = Path(os.path.realpath(directory))
        self.compact = compact
        self._encoders: dict[str, LogEncoder] = {}
        self._held: dict[str, int] = {}  # run id -> fd of the locked log, owned by `lock`
        # Held runs whose log ends in a newline where their encoder left it: run id -> (fd,
        # encoder). Their appends need no check of the file (append's short path).
        self._ready: dict[str, tuple[int, LogEncoder]] = {}
        self._mutex = threading.Lock()
        os.close(self._open_directory())  # refuse now what would be refused at every use

    def __repr__(self) -> str:
        return f"FileStore({str(self.directory)!r})"

    def path(self, run_id: str) -> Path:
        return self.directory / (validate_run_id(run_id) + SUFFIX)

    def _open_directory(self) -> int:
        """A descriptor of the runs directory, which must still be a directory, not a symlink."""
        try:
            return os.open(self.directory, _DIRECTORY_FLAGS)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise OSError(
                    exc.errno,
                    f"refusing to use {self.directory}: it is no longer a directory (a symlink "
                    "or a file took its place); nothing is written through it",
                ) from None
            raise

    @contextlib.contextmanager
    def _in_directory(self) -> Iterator[int]:
        fd = self._open_directory()
        try:
            yield fd
        finally:
            os.close(fd)

    def _open_log(self, run_id: str) -> int:
        with self._in_directory() as dir_fd:
            return open_log(dir_fd, self.path(run_id))

    # -- writing -------------------------------------------------------------------------------

    def append(self, run_id: str, event: Event) -> None:
        # The common case, an event of a ready run, takes the shortest path: each step here
        # runs between two fsyncs (bench/append.py), where a cold CPU cache makes it cost about
        # three times what it costs warm. Anything else goes the long way (append_many).
        with self._mutex:
            try:
                ready = self._ready.get(run_id)
            except TypeError:  # not a string: the long way says what is wrong with it
                ready = None
            if ready is not None and event.type not in TRANSIENT_TYPES:
                fd, encoder = ready
                try:
                    data = encoder.encode(event)
                    written = os.write(fd, data)
                    if written != len(data):
                        write_all(fd, data[written:])
                    os.fsync(fd)
                except BaseException:
                    self._forget(run_id)
                    raise
                encoder.offset += len(data)
                return
        self.append_many(run_id, [event])

    def append_many(self, run_id: str, events: Iterable[Event]) -> None:
        # Every microsecond here is spent between two fsyncs (bench/append.py): run ids are
        # validated once (an encoder exists only for a valid id) and the path built only
        # when needed.
        if not isinstance(run_id, str) or run_id not in self._encoders:
            validate_run_id(run_id)
        todo = [e for e in events if not e.transient]
        if not todo:
            return
        with self._mutex:
            encoder = self._encoders.get(run_id)
            held = self._held.get(run_id)
            fd = held if held is not None else self._open_log(run_id)
            try:
                # While we hold the lock nobody else writes: once checked, and after each of
                # our whole writes, the log ends in a newline; skip re-checking it.
                if run_id in self._ready and encoder is not None:
                    size = encoder.offset  # ours alone while held: it is where we left it
                else:
                    with self._in_directory() as dir_fd:
                        repair_tail(fd, self.path(run_id), dir_fd)
                    size = os.fstat(fd).st_size
                if encoder is None or encoder.offset != size:
                    # A delta names its base by its place in the file: learn what is there (a
                    # log this store has not read, or one that changed since).
                    encoder = self._encoders[run_id] = encoder_for(fd, size, self.compact)
                data = b"".join([encoder.encode(e) for e in todo])
                write_all(fd, data)
                os.fsync(fd)
                encoder.offset = size + len(data)
                if held is not None:
                    self._ready[run_id] = (held, encoder)
            except BaseException:
                self._forget(run_id)
                raise
            finally:
                if held is None:
                    os.close(fd)

    def _forget(self, run_id: str) -> None:
        """After a failed write, what reached the file is unknown: the next append reads it."""
        self._ready.pop(run_id, None)
        self._encoders.pop(run_id, None)

    # -- reading -------------------------------------------------------------------------------

    def load(self, run_id: str) -> list[Event]:
        """Every whole event of the run. Torn or corrupt lines are skipped with a warning (one
        for the file).

        Raises `RunNotFoundError` (a KeyError) for an unknown run, OSError for a log that cannot
        be read (a symlink, a directory, a FIFO, no permission).
        """
        events, bad = self.load_with_errors(run_id)
        if bad:
            log.warning("run %s: %s", run_id, skipped_lines(bad))
        return events

    def load_with_errors(self, run_id: str) -> tuple[list[Event], list[BadLine]]:
        path = self.path(run_id)
        try:
            with self._in_directory() as dir_fd:
                fd = open_to_read(dir_fd, path)
        except FileNotFoundError:
            raise RunNotFoundError(run_id, self) from None
        try:
            require_regular(fd, path)  # before fdopen, which names a directory by its fd
        except OSError:
            os.close(fd)
            raise
        with os.fdopen(fd, "rb") as f:
            data = f.read()
        lines, rest = split_lines(data)
        if rest:
            lines.append(rest)
        decoder = LogDecoder()
        encoder = LogEncoder(self.compact)
        events: list[Event] = []
        bad: list[BadLine] = []
        for line in lines:
            item = decoder.decode(line)
            if isinstance(item, BadLine):
                bad.append(item)
            else:
                events.append(item)
                encoder.follow(item)
        encoder.offset = len(data)
        with self._mutex:
            # Kept only for a run we hold (about to be appended to: a resume reads it under its
            # lock): an encoder keeps the run's last request, and a reader of many runs (prune,
            # export) must not keep them all. While we hold the run and have written to it, our
            # encoder is the truth (the append fast path trusts its offset); this read may
            # predate our latest append.
            if run_id in self._held and run_id not in self._ready:
                self._encoders[run_id] = encoder
        return events, bad

    def has_run(self, run_id: str) -> bool:
        """Whether the run's log is there (`LookupStore`: no listing of the directory)."""
        return self.path(run_id).exists()

    def list_runs(self) -> list[str]:
        runs = []
        # A descriptor of its own: scandir reads from the descriptor's offset.
        with self._in_directory() as dir_fd, os.scandir(dir_fd) as it:
            for entry in it:
                run_id = run_id_of(entry.name)
                if run_id is not None:
                    runs.append(run_id)
        return sorted(runs)

    # -- locking -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        """Hold the run exclusively (`flock`; the kernel frees it if this process dies)."""
        validate_run_id(run_id)
        with self._mutex:
            if run_id in self._held:
                raise RunLockedError(run_id, os.getpid())
        fd = self._take(run_id)
        with self._mutex:
            self._held[run_id] = fd
        try:
            yield
        finally:
            with self._mutex:
                del self._held[run_id]
                self._ready.pop(run_id, None)
            os.close(fd)  # closing the only descriptor releases the flock

    def _take(self, run_id: str) -> int:
        """The run's log, open and locked. A log deleted (or replaced) while we waited for its
        lock is opened again: writing into a removed file would lose the run."""
        path = self.path(run_id)
        while True:
            fd = self._open_log(run_id)
            try:
                _flock_patiently(fd, run_id)
                with self._in_directory() as dir_fd:
                    if same_file(fd, dir_fd, path.name):
                        return fd
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)

    def is_locked(self, run_id: str) -> bool:
        """Whether some process holds the run (is running or resuming it) right now."""
        return bool(self.locked_among([run_id]))

    def locked_among(self, run_ids: Iterable[str]) -> set[str]:
        """The runs among these that some process holds right now: `is_locked` of many, the
        directory opened once (a listing of 100,000 runs asks about thousands)."""
        # Names, not `path()`s: a Path costs more than the probe (10,000 of them at a listing).
        names = {run_id: validate_run_id(run_id) + SUFFIX for run_id in run_ids}
        with self._mutex:
            held = {run_id for run_id in names if run_id in self._held}
        try:
            dir_fd = self._open_directory()
        except OSError:
            return held
        try:
            held.update(r for r, name in names.items() if r not in held and _held(dir_fd, name))
        finally:
            os.close(dir_fd)
        return held

    def lock_holder(self, run_id: str) -> int | None:
        """The pid holding the run's lock, when it can be told."""
        path = self.path(run_id)
        with self._mutex:
            if run_id in self._held:
                return os.getpid()
        try:
            with self._in_directory() as dir_fd:
                st = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            return None
        return holder(st)

    # -- deleting and pinning ------------------------------------------------------------------

    @contextlib.contextmanager
    def _regular_log(self, dir_fd: int, path: Path, run_id: str) -> Iterator[int]:
        """The run's log (`path`) open to read, checked to be a regular file (no directory, no
        symlink named like a run); RunNotFoundError when there is none. Closed after."""
        try:
            fd = open_to_read(dir_fd, path)
        except FileNotFoundError:
            raise RunNotFoundError(run_id, self) from None
        try:
            require_regular(fd, path)
            yield fd
        finally:
            os.close(fd)

    def delete(self, run_id: str, check: Callable[[list[Event]], None] | None = None) -> int:
        """Remove the run's log, its `.torn` leftovers and its pin; return the bytes freed.

        Held while it deletes (a run another process holds is a `RunLockedError`); an unknown
        run is a `RunNotFoundError`; `check` as in `DeletingStore`.
        """
        path = self.path(run_id)
        with self._mutex:
            if run_id in self._held:
                raise RunLockedError(run_id, os.getpid())
        with self._in_directory() as dir_fd:
            with self._regular_log(dir_fd, path, run_id) as fd:
                _flock_patiently(fd, run_id)  # a shared-lock reader probe is ridden over
                if check is not None:
                    check(self.load_with_errors(run_id)[0])
                freed = remove_log(fd, dir_fd, path)
            remove_pin(dir_fd, run_id)
        with self._mutex:
            self._forget(run_id)
        return freed

    def pin(self, run_id: str) -> bool:
        """Pin the run (see `PinningStore`); OSError when its entry is no log (a directory or a
        symlink named like a run): a pin names a run, as a read would find it."""
        path = self.path(run_id)
        with self._in_directory() as dir_fd:
            with self._regular_log(dir_fd, path, run_id):
                pass  # there, and a log
            return add_pin(dir_fd, run_id)

    def unpin(self, run_id: str) -> bool:
        validate_run_id(run_id)
        with self._in_directory() as dir_fd:
            return remove_pin(dir_fd, run_id)

    def pinned(self) -> set[str]:
        with self._in_directory() as dir_fd:
            return {name for name in pin_names(dir_fd) if RUN_ID_RE.fullmatch(name)}

    # -- experiments (agentor.engine.store.experiment_files) -------------------------------------

    def append_experiment(self, experiment_id: str, record: Mapping[str, object]) -> None:
        with self._in_directory() as dir_fd:
            append_record(dir_fd, experiment_id, record)

    def load_experiment(self, experiment_id: str) -> list[dict[str, object]]:
        with self._in_directory() as dir_fd:
            return load_records(dir_fd, experiment_id, self)

    def list_experiments(self) -> list[str]:
        with self._in_directory() as dir_fd:
            return experiment_ids(dir_fd)


def _flock_patiently(fd: int, run_id: str) -> None:
    if not take_exclusive(fd, LOCK_PATIENCE):
        raise RunLockedError(run_id, holder(os.fstat(fd)))


def _held(dir_fd: int, name: str) -> bool:
    """Whether a process holds the log's lock (False when it cannot be opened)."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)  # as `open_to_read`: no symlink followed
    except OSError:
        return False
    try:
        # A shared probe fails only against an exclusive holder; it is held for a moment,
        # which `lock` rides over (LOCK_PATIENCE).
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
