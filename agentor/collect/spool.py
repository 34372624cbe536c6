"""Every span received, kept until its trace is quiet, so a run is always derived whole.

A run's spans arrive over many requests (a span is sent when it ends), and a later span can
change what an earlier one meant (the agent span names the agent; a step that started earlier
arrives later). So the receiver keeps each trace's spans here, durably, before it answers, and
derives the trace's runs from all of them each time (agentor.collect.mapping). A receiver that
is killed and started again reads them back: a span that arrives after the restart joins the
spans of its trace received before it.

In a runs directory the spool is `.collect/<trace id>.jsonl` beside the logs (a name no run
log can have), one span a line, each append fsynced. A span received twice is stored once.
"""

from __future__ import annotations

import os
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson

from agentor.collect.spans import LogRecord, Span, SpanEvent

SPOOL_DIR = ".collect"


class DirectorySpool:
    """The spans of each trace, in `<directory>/.collect/`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory / SPOOL_DIR
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._traces: dict[str, tuple[dict[str, Span], list[LogRecord]]] = {}
        self._mutex = threading.Lock()

    def add(self, spans: list[Span], logs: list[LogRecord]) -> set[str]:
        """Keep spans and log records not kept yet; return the traces that gained any."""
        fresh: dict[str, list[bytes]] = {}
        with self._mutex:
            for span in spans:
                held, _ = self._trace(span.trace_id)
                if held.get(span.span_id) == span:
                    continue
                held[span.span_id] = span
                fresh.setdefault(span.trace_id, []).append(_span_line(span))
            for record in logs:
                _, records = self._trace(record.trace_id)
                if record in records:
                    continue
                records.append(record)
                fresh.setdefault(record.trace_id, []).append(_log_line(record))
            for trace_id, lines in fresh.items():
                self._write(trace_id, b"".join(lines))
        return set(fresh)

    def trace(self, trace_id: str) -> tuple[list[Span], list[LogRecord]]:
        with self._mutex:
            held, records = self._trace(trace_id)
            return list(held.values()), list(records)

    def _trace(self, trace_id: str) -> tuple[dict[str, Span], list[LogRecord]]:
        found = self._traces.get(trace_id)
        if found is None:
            found = self._read(trace_id)
            self._traces[trace_id] = found
        return found

    def _path(self, trace_id: str) -> Path:
        if len(trace_id) != 32 or not all(c in "0123456789abcdef" for c in trace_id):
            raise ValueError(f"not a trace id: {trace_id!r}")
        return self.directory / f"{trace_id}.jsonl"

    def _read(self, trace_id: str) -> tuple[dict[str, Span], list[LogRecord]]:
        spans: dict[str, Span] = {}
        records: list[LogRecord] = []
        try:
            data = self._path(trace_id).read_bytes()
        except FileNotFoundError:
            return spans, records
        for line in data.splitlines():
            try:
                item = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # a line a kill cut short: its request was never answered
            if item.get("kind") == "log":
                records.append(_record_of(item))
            else:
                span = _span_of(item)
                spans[span.span_id] = span
        return spans, records

    def _write(self, trace_id: str, data: bytes) -> None:
        fd = os.open(self._path(trace_id), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)


def _default(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$bytes": value.hex()}
    raise TypeError


def _span_line(span: Span) -> bytes:
    item = asdict(span)
    item["kind"] = "span"
    return orjson.dumps(item, default=_default) + b"\n"


def _log_line(record: LogRecord) -> bytes:
    item = asdict(record)
    item["kind"] = "log"
    return orjson.dumps(item, default=_default) + b"\n"


def _restore(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return bytes.fromhex(value["$bytes"])
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def _span_of(item: dict[str, Any]) -> Span:
    item = _restore(item)
    item.pop("kind", None)
    item["events"] = tuple(SpanEvent(**e) for e in item.get("events", ()))
    return Span(**item)


def _record_of(item: dict[str, Any]) -> LogRecord:
    item = _restore(item)
    item.pop("kind", None)
    return LogRecord(**item)


def spool_for(store: object) -> DirectorySpool:
    """The spool of a store's receiver: beside a runs directory's logs; for a database, in this
    machine's state directory, named for the database and schema."""
    directory = getattr(store, "directory", None)
    if isinstance(directory, Path):
        return DirectorySpool(directory)
    import hashlib

    name = f"{getattr(store, 'where', repr(store))}|{getattr(store, 'schema', '')}"
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    place = state / "agentor" / "collect" / hashlib.sha256(name.encode()).hexdigest()[:16]
    place.mkdir(mode=0o700, parents=True, exist_ok=True)
    return DirectorySpool(place)
