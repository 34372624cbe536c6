"""`agentor export RUN [--format md|json|html] [-o FILE]` (agentor.ops.run_export); with
`--format otlp`, runs as OpenTelemetry spans sent to a collector (agentor.cli.trace_cmd).

Without `-o` (or with `-o -`) the document goes to stdout, as UTF-8 whatever the terminal's
encoding. With `-o FILE` it is written to a new file beside FILE and renamed over it once
whole (and flushed to disk): FILE is either as it was or the whole export, never half of it
(and keeps its permissions), and a failure leaves no temporary file behind. The format is
`--format`, else FILE's suffix (.md, .json, .html), else Markdown. A run log of the store is
never written over.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from argparse import Namespace
from pathlib import Path

from agentor.cli.lines import Refusal, UsageError, human_bytes
from agentor.cli.stores import the_run
from agentor.engine.log.file_io import write_all
from agentor.engine.store.api import DirectoryStore, Store
from agentor.engine.store.run_ids import SUFFIX
from agentor.literal import literal_line
from agentor.ops.run_export import FORMATS
from agentor.ops.run_export import export as render

_SUFFIXES = {".md": "md", ".markdown": "md", ".json": "json", ".html": "html", ".htm": "html"}


def export(args: Namespace) -> int:
    if args.format == "otlp":
        from agentor.cli.trace_cmd import export_otlp

        return export_otlp(args)
    _one_run(args)
    output = None if args.output in (None, "-") else Path(args.output)
    fmt = args.format or (_SUFFIXES.get(output.suffix.lower()) if output else None) or "md"
    assert fmt in FORMATS
    if output is not None:
        _check_target(output)
    store, run_id = the_run(args)
    if output is not None and _is_a_log(store, output):
        raise UsageError(f"-o {output}: a run log of the store; it is never written over")
    try:
        data = render(store, run_id, fmt).encode("utf-8")
    except KeyError:  # deleted since it was named
        raise Refusal(f"no run {run_id} to export") from None
    except OSError as exc:
        raise Refusal(f"cannot read run {run_id}: {exc.strerror or exc}") from None
    if output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return 0
    _write_whole(output, data)
    print(literal_line(f"wrote run {run_id} as {fmt} to {output} ({human_bytes(len(data))})"))
    return 0


def _one_run(args: Namespace) -> None:
    """A document is of one run: RUN once, no option of the otlp format."""
    otlp = [
        f
        for f, v in (
            ("--all", args.all),
            ("--status", args.status),
            ("--older-than", args.older_than),
            ("--endpoint", args.endpoint),
            ("--header", args.header),
            ("--content", args.content),
        )
        if v
    ]
    if otlp:
        raise UsageError(f"{otlp[0]} is for --format otlp")
    if len(args.run_ids) != 1:
        raise UsageError("name one RUN (several, or --all, are for --format otlp)")
    args.run_id = args.run_ids[0]


def _check_target(output: Path) -> None:
    """Refuse, before anything is read, a FILE that cannot be written."""
    if output.is_dir():
        raise UsageError(f"-o {output}: is a directory; name a file")
    if not output.parent.is_dir():
        raise UsageError(f"-o {output}: no such directory: {output.parent}")


def _is_a_log(store: Store, output: Path) -> bool:
    if not isinstance(store, DirectoryStore) or not output.name.endswith(SUFFIX):
        return False
    return output.parent.resolve() == store.directory.resolve()


def _write_whole(output: Path, data: bytes) -> None:
    """`data` into `output` all at once: a temporary file in its directory, renamed over it."""
    temp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            with contextlib.suppress(FileNotFoundError):  # FILE keeps its permissions
                os.fchmod(fd, stat.S_IMODE(os.stat(output).st_mode))
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, output)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise Refusal(f"cannot write {output}: {exc.strerror or exc}") from None
