"""Every span received, kept until its trace is quiet, so a run is always derived whole.

A run's spans arrive over many requests (a span is sent when it ends), and a later span can
change what an earlier one meant (the agent span names the agent; a step that started earlier
arrives later). So the receiver keeps each trace's spans here, durably, before it answers, and
derives the trace's runs from all of them each time (agentor.collect.mapping). A receiver that
is killed and started again reads them back: a span that arrives after the restart joins the
spans of its trace received before it.

In a runs directory the spool is `.collect/` beside the logs (a name no run log can have):
segment files of one line a span (or log record), a request's spans appended to the current
segment with one write and one fsync. A span received twice is stored once. Segments older
than `keep` seconds are removed when a receiver starts. Traces quiet for a while are dropped
from memory and read back from the segments if a span of theirs comes again.

Cost model: a request costs one write and one fsync here, whatever its number of traces; a
receiver's start reads the trace ids of every kept segment once (a scan at C speed); a span
of a trace dropped from memory costs a read of the segments to bring the trace back.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import orjson

from agentor.collect.spans import LogRecord, Span, SpanEvent
from agentor.engine.log.file_io import write_all
from agentor.engine.store.api import DirectoryStore, ServerStore, Store

SPOOL_DIR = ".collect"
DEFAULT_KEEP = 7 * 24 * 3600.0
# Traces held in memory; the least recently touched beyond this are dropped (and read back).
_HELD_TRACES = 2048

_Trace = tuple[dict[str, Span], list[LogRecord]]


class DirectorySpool:
    """The spans of each trace, in segment files under `<directory>/.collect/`."""

    def __init__(self, directory: Path, keep: float = DEFAULT_KEEP) -> None:
        self.directory = directory / SPOOL_DIR
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._mutex = threading.Lock()
        self._traces: OrderedDict[str, _Trace] = OrderedDict()
        self._known = self._forget_old(keep)  # trace ids with spans in a kept segment
        self._segment = self.directory / f"spool-{time.time_ns()}-{os.getpid()}.jsonl"

    def add(self, spans: list[Span], logs: list[LogRecord]) -> set[str]:
        """Keep spans and log records not kept yet; return the traces that gained any."""
        lines: list[bytes] = []
        touched: set[str] = set()
        with self._mutex:
            for span in spans:
                held, _ = self._trace(span.trace_id)
                if held.get(span.span_id) == span:
                    continue
                held[span.span_id] = span
                lines.append(_span_line(span))
                touched.add(span.trace_id)
            for record in logs:
                _, records = self._trace(record.trace_id)
                if record in records:
                    continue
                records.append(record)
                lines.append(_log_line(record))
                touched.add(record.trace_id)
            if lines:
                self._write(b"".join(lines))
                self._known.update(touched)
            self._drop_quiet()
        return touched

    def trace(self, trace_id: str) -> tuple[list[Span], list[LogRecord]]:
        with self._mutex:
            held, records = self._trace(trace_id)
            return list(held.values()), list(records)

    def _trace(self, trace_id: str) -> _Trace:
        found = self._traces.get(trace_id)
        if found is None:
            found = self._read(trace_id) if trace_id in self._known else ({}, [])
            self._traces[trace_id] = found
        else:
            self._traces.move_to_end(trace_id)
        return found

    def _drop_quiet(self) -> None:
        while len(self._traces) > _HELD_TRACES:
            self._traces.popitem(last=False)

    def _segments(self) -> list[Path]:
        return sorted(self.directory.glob("spool-*.jsonl"))

    def _forget_old(self, keep: float) -> set[str]:
        """Remove segments last written over `keep` seconds ago; the trace ids of the rest."""
        known: set[str] = set()
        now = time.time()
        for path in self._segments():
            try:
                if now - path.stat().st_mtime > keep:
                    path.unlink()
                    continue
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            for line in data.splitlines():
                at = line.find(b'"trace_id":"')
                if at >= 0:
                    known.add(line[at + 12 : at + 44].decode("ascii", "replace"))
        return known

    def _read(self, trace_id: str) -> _Trace:
        spans: dict[str, Span] = {}
        records: list[LogRecord] = []
        needle = f'"trace_id":"{trace_id}"'.encode()
        for path in self._segments():
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue
            for line in data.splitlines():
                if needle not in line:
                    continue
                try:
                    item = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue  # a line a kill cut short: its request was never answered
                if item.get("trace_id") != trace_id:
                    continue
                if item.get("kind") == "log":
                    records.append(_record_of(item))
                else:
                    span = _span_of(item)
                    spans[span.span_id] = span
        return spans, records

    def _write(self, data: bytes) -> None:
        fd = os.open(self._segment, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)


def spool_for(store: Store) -> DirectorySpool:
    """The spool of a store's receiver: beside a runs directory's logs (a `DirectoryStore`);
    for a database, in this machine's state directory, named for the database and schema."""
    if isinstance(store, DirectoryStore):
        return DirectorySpool(store.directory)
    name = f"{store.where}|{store.schema}" if isinstance(store, ServerStore) else f"{store!r}|"
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    place = state / "agentor" / "collect" / hashlib.sha256(name.encode()).hexdigest()[:16]
    place.mkdir(mode=0o700, parents=True, exist_ok=True)
    return DirectorySpool(place)


def _default(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$bytes": value.hex()}
    raise TypeError


def _span_line(span: Span) -> bytes:
    item = {
        "trace_id": span.trace_id,
        "kind": "span",
        "span_id": span.span_id,
        "parent_id": span.parent_id,
        "name": span.name,
        "start_ns": span.start_ns,
        "end_ns": span.end_ns,
        "attributes": span.attributes,
        "events": [[e.name, e.time_ns, e.attributes] for e in span.events],
        "status_code": span.status_code,
        "status_message": span.status_message,
        "resource": span.resource,
        "scope": span.scope,
        "scope_version": span.scope_version,
    }
    return orjson.dumps(item, default=_default) + b"\n"


def _log_line(record: LogRecord) -> bytes:
    item = {
        "trace_id": record.trace_id,
        "kind": "log",
        "span_id": record.span_id,
        "name": record.name,
        "time_ns": record.time_ns,
        "attributes": record.attributes,
        "body": record.body,
    }
    return orjson.dumps(item, default=_default) + b"\n"


def _restore(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and "$bytes" in value:
            return bytes.fromhex(value["$bytes"])
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def _span_of(item: dict[str, Any]) -> Span:
    return Span(
        trace_id=item["trace_id"],
        span_id=item["span_id"],
        parent_id=item["parent_id"],
        name=item["name"],
        start_ns=item["start_ns"],
        end_ns=item["end_ns"],
        attributes=_restore(item["attributes"]),
        events=tuple(SpanEvent(n, t, _restore(a)) for n, t, a in item["events"]),
        status_code=item["status_code"],
        status_message=item["status_message"],
        resource=_restore(item["resource"]),
        scope=item["scope"],
        scope_version=item["scope_version"],
    )


def _record_of(item: dict[str, Any]) -> LogRecord:
    return LogRecord(
        trace_id=item["trace_id"],
        span_id=item["span_id"],
        name=item["name"],
        time_ns=item["time_ns"],
        attributes=_restore(item["attributes"]),
        body=_restore(item["body"]),
    )
