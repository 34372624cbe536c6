"""`agentor import FILE... [--store S]`: runs of any framework from OTLP files of its spans.

Every file is read and decoded before anything is written: a file that is not OTLP (or one
that cannot be read) is refused in one line naming it, and no run is written. The runs are then
written as ordinary run logs (agentor.collect.writing): importing the same file again changes
nothing, and a file holding more of a run than before (a later export) extends it. A progress
line on stderr, when it is a terminal and a file is big.
"""

from __future__ import annotations

import sys
from argparse import Namespace
from collections.abc import Callable
from pathlib import Path

from agentor.cli.lines import Refusal
from agentor.cli.stores import open_named, store_spec, where
from agentor.collect.files import read_otlp_file
from agentor.collect.mapping import runs_from_spans
from agentor.collect.spans import LogRecord, Span
from agentor.collect.writing import write_runs
from agentor.errors import SpanDecodeError
from agentor.literal import literal_line

# Files smaller than this are read without a progress line.
_PROGRESS_FROM = 4 << 20


def import_files(args: Namespace) -> int:
    spans: list[Span] = []
    logs: list[LogRecord] = []
    for name in args.files:
        file_spans, file_logs = _read(Path(name))
        spans.extend(file_spans)
        logs.extend(file_logs)
    runs, dropped = runs_from_spans(spans, logs)
    store = open_named(store_spec(args), args.schema, create=True)
    counts = write_runs(store, runs)
    line = (
        f"{counts.runs} runs from {len(spans)} spans ({counts.new} new, {counts.extended} grown, "
        f"{counts.rewritten} rewritten, {counts.unchanged} already there) into {where(store)}"
    )
    if dropped:
        line += f"; {dropped} spans were no agent's step"
    print(literal_line(line, 600))
    return 0


def _read(path: Path) -> tuple[list[Span], list[LogRecord]]:
    shown = literal_line(str(path), 200)
    try:
        size = path.stat().st_size
        progress = _bar(shown) if size >= _PROGRESS_FROM and sys.stderr.isatty() else None
        found = read_otlp_file(path, progress)
    except FileNotFoundError:
        raise Refusal(f"no such file: {shown}") from None
    except IsADirectoryError:
        raise Refusal(f"{shown} is a directory, not an OTLP file") from None
    except OSError as exc:
        raise Refusal(f"cannot read {shown}: {exc.strerror or exc}") from None
    except SpanDecodeError as exc:
        raise Refusal(f"{shown}: {exc}") from None
    if progress is not None:
        print(file=sys.stderr)
    return found


def _bar(name: str) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        percent = 100 * done // max(total, 1)
        bar = "#" * filled + "-" * (width - filled)
        print(f"\r{name} [{bar}] {percent:3d}%", end="", file=sys.stderr, flush=True)

    return show
