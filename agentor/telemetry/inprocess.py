"""Tracing in process: `Agentor(tracing=True)` / `run(..., tracing=True)`.

A run's recorder hands each event to its listeners once the store has it (save before
announce); `RunTracing` is such a listener, so the spans are made from recorded events, by
the same `RunSpans` as `agentor export` and `agentor trace` (same ids, same times). They go:

- with `tracing=True`, to the collector the standard variables name
  (`OTEL_EXPORTER_OTLP_ENDPOINT` or `..._TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`), through
  one `SpanQueue` per process: a collector that is down never slows or fails a run (see
  agentor.telemetry.sending: bounded, dropped spans counted and said once);
- with `tracing=tracer`, an `opentelemetry.sdk.trace.Tracer`, to that tracer's span
  processors (and so its exporters), with its resource.

A resume traces what this process records, and what others recorded since the log's last
segment (a person's decision), and closes what the segment before left open (its writer
died): the spans a run's earlier processes could not send. A run stopped in this process
(cancelled) is closed as interrupted when its run is let go.

At exit (`_at_exit`, an atexit hook) the process waits, EXIT_WAIT_S at most in all, for the
tracing thread to make the spans of every event it was handed, then for the queues to send
them: a script that exits right after `run()` still sends its spans. The hook is registered
again as each run is traced, so it runs before the exit hooks registered before it (a
`TracerProvider`'s shutdown, which would refuse the spans still to come).
"""

from __future__ import annotations

import atexit
import collections
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from agentor.engine.events import Event
from agentor.engine.log.format import BadLine
from agentor.engine.store.api import Store
from agentor.engine.store.holding import load_lines
from agentor.telemetry.spans import RunSpans, SpanRecord, is_work

log = logging.getLogger("agentor")
Sink = Callable[[Sequence[SpanRecord]], None]
WORK_LIMIT = 100_000  # events waiting to be made into spans, at most
EXIT_WAIT_S = 3.0  # at exit, the longest wait for the spans of what was recorded (in all)
_queue_lock = threading.Lock()
_queues: dict[tuple[str, ...], Any] = {}  # SpanQueues for tracing=True, by what the variables say
_VARIABLES = (
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_HEADERS",
)


def check_tracing(value: object) -> object:
    """`tracing=` as given, once checked: False, None, True (OpenTelemetry must be installed)
    or an `opentelemetry.sdk.trace.Tracer`; TypeError for anything else."""
    if value is None or isinstance(value, bool):
        if value:
            import agentor.telemetry.otel  # noqa: F401 (TelemetryUnavailableError says how to install)
        return value
    if _is_sdk_tracer(value):
        return value
    raise TypeError(
        "tracing= takes True, False, None or an opentelemetry.sdk.trace.Tracer "
        f"(TracerProvider().get_tracer(...)), not {type(value).__name__}"
    )


def _is_sdk_tracer(value: object) -> bool:
    try:
        from opentelemetry.sdk.trace import Tracer
    except ImportError:
        return False
    return isinstance(value, Tracer)


def run_tracing(
    tracing: object, store: Store | None, run_id: str | None, *, content: bool = False
) -> RunTracing | None:
    """The listener that traces run `run_id` (None: not traced)."""
    if not tracing:
        return None
    # The queue and the thread are made here, in the run's caller: at exit no thread can be
    # started any more (Python 3.12), and the last events are made into spans then.
    sink = _tracer_sink(tracing) if tracing is not True else _queue_sink(_variables())
    _worker()
    atexit.unregister(_at_exit)
    atexit.register(_at_exit)
    tracer = RunTracing(sink, run_id or uuid.uuid4().hex, content)
    if store is not None and run_id is not None:
        try:  # read before the run writes anything: its events are numbered after these lines
            lines = load_lines(store, run_id)
        except KeyError:
            lines = []  # a new run
        tracer.line = len(lines)
        if lines:
            _worker().submit(tracer.prime, lines)
    return tracer


class RunTracing:
    """A recorder's listener: the spans of the events it is handed, to `sink`. The run's
    thread only queues each event: spans are made (and priced) and handed on in a thread of
    their own, in order."""

    def __init__(self, sink: Sink, run_id: str, content: bool) -> None:
        self.sink = sink
        self.spans = RunSpans(run_id, content=content)
        self.line = 0

    def __call__(self, event: Event) -> None:
        if not event.transient:
            _worker().submit(self._add, event)

    def finish(self) -> None:
        """The run is let go: what it left open was interrupted."""
        _worker().submit(self._finish)

    def prime(self, lines: Sequence[Event | BadLine]) -> None:
        """What the log held when the run began: what its earlier processes traced is not
        sent again, what came after its last segment is (see the module)."""
        last_work = max(
            (i for i, x in enumerate(lines) if isinstance(x, Event) and is_work(x)), default=-1
        )
        self.spans.feed(enumerate(lines[: last_work + 1], 1))
        self._send(self.spans.feed(enumerate(lines[last_work + 1 :], last_work + 2)))

    def _add(self, event: Event) -> None:
        self.line += 1
        self._send(self.spans.add(self.line, event))

    def _finish(self) -> None:
        if self.spans.segment is not None:
            self._send(self.spans.interrupted())

    def _send(self, records: list[SpanRecord]) -> None:
        if records:
            self.sink(records)


class _Worker:
    """One thread that makes the spans of every traced run, task after task. Bounded: a task
    that does not fit is dropped and counted with the spans (`SpanQueue.dropped`)."""

    def __init__(self, limit: int = WORK_LIMIT) -> None:
        self.limit = limit
        self._tasks: collections.deque[tuple[Callable[..., None], tuple[Any, ...]]]
        self._tasks = collections.deque()
        self._cond = threading.Condition()
        self._idle = True
        threading.Thread(target=self._run, name="agentor-tracing", daemon=True).start()

    def submit(self, task: Callable[..., None], *args: Any) -> None:
        with self._cond:
            if len(self._tasks) >= self.limit:
                dropped = True
            else:
                dropped = False
                self._tasks.append((task, args))
                self._cond.notify()
        if dropped:
            log.warning("tracing: %d events wait to be traced already; one is dropped", self.limit)

    def wait(self, timeout: float) -> bool:
        """Until every task submitted so far is done (at most `timeout` s)."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._tasks and self._idle, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._tasks))
                task, args = self._tasks.popleft()
                self._idle = False
            try:
                task(*args)
            except Exception:  # tracing never breaks anything: said, and the next task runs
                log.warning("tracing: could not make spans", exc_info=True)
            finally:
                with self._cond:
                    self._idle = True
                    self._cond.notify_all()


_worker_lock = threading.Lock()
_the_worker: _Worker | None = None


def _worker() -> _Worker:
    global _the_worker
    with _worker_lock:
        if _the_worker is None:
            _the_worker = _Worker()
        return _the_worker


def flush(timeout: float = 5.0) -> bool:
    """Wait until the spans of what runs traced with `tracing=True` recorded so far were made
    and sent (or dropped), at most `timeout` seconds; True when nothing is left."""
    deadline = time.monotonic() + timeout
    if _the_worker is not None and not _the_worker.wait(timeout):
        return False
    with _queue_lock:
        queues = list(_queues.values())
    return all(q.flush(max(0.0, deadline - time.monotonic())) for q in queues)


def _at_exit() -> None:
    """The spans of what was recorded are made and sent: EXIT_WAIT_S at most in all, and no
    wait for a collector known to be down (its queue drops what it holds)."""
    flush(EXIT_WAIT_S)


def shared_queue() -> Any:
    """The process's `SpanQueue` to the collector the variables name now."""
    return _queue_for(_variables())


def _variables() -> tuple[str, ...]:
    return tuple(os.environ.get(name, "") for name in _VARIABLES)


def _queue_for(variables: tuple[str, ...]) -> Any:
    """The `SpanQueue` to the collector `variables` (values of _VARIABLES) name."""
    with _queue_lock:
        queue = _queues.get(variables)
        if queue is None:
            from opentelemetry.util.re import parse_env_headers

            from agentor.telemetry.sending import Collector, SpanQueue, traces_url

            traces, base, traces_headers, headers = variables
            endpoint = traces or (traces_url(base) if base else None)
            header_map = parse_env_headers(traces_headers or headers, liberal=True)
            queue = _queues[variables] = SpanQueue(Collector(endpoint, header_map))
        return queue


def _queue_sink(variables: tuple[str, ...]) -> Sink:
    """Spans to the queue of the collector the variables named when the run began."""
    queue = _queue_for(variables)

    def sink(records: Sequence[SpanRecord]) -> None:
        queue.put(records)

    return sink


def _tracer_sink(tracer: Any) -> Sink:
    """Spans to an SDK tracer's processors, with its resource and our scope."""
    from agentor.telemetry.otel import readable_spans

    def sink(records: Sequence[SpanRecord]) -> None:
        for span in readable_spans(records, tracer.resource):
            tracer.span_processor.on_end(span)

    return sink
