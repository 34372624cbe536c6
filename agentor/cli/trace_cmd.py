"""Runs as OpenTelemetry spans (agentor.telemetry), sent to an OTLP/HTTP collector:

    agentor export RUN... --format otlp [--endpoint URL] [--header K=V] [--content]
    agentor export --all [--status S,...] [--older-than AGE] --format otlp ...
    agentor trace [DIR|DSN] [--endpoint URL] [--header K=V] [--content] [--state FILE] [--once]

`export` sends runs that are in the store now and says, a line a run, what it sent; `trace`
follows the store and sends each span as the log closes it, until SIGINT or SIGTERM (`--once`:
what is there, then exit). A collector that does not take the spans is refused in one line
(exit 1); header values are never printed.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import signal
import time
from argparse import Namespace
from pathlib import Path
from typing import TYPE_CHECKING

from agentor.backends import backend_for, open_source
from agentor.cli.lines import Refusal, UsageError, plural
from agentor.cli.stores import store_of, store_spec, the_run, where
from agentor.engine.events import Event
from agentor.engine.statuses import INCOMPLETE, INTERRUPTED, RUNNING
from agentor.engine.store.api import Store
from agentor.engine.store.holding import load_lines
from agentor.errors import StoreSpecError, TelemetryUnavailableError
from agentor.literal import literal_line
from agentor.ops import retention

if TYPE_CHECKING:  # loaded only when used: OpenTelemetry is an extra
    from agentor.sources.source import RunSource
    from agentor.telemetry.follow import Follower
    from agentor.telemetry.sending import Collector


def export_otlp(args: Namespace) -> int:
    if args.output is not None:
        raise UsageError("-o is not for --format otlp: spans go to the collector (--endpoint)")
    collector = _collector(args)
    from agentor.telemetry.export import run_trace
    from agentor.telemetry.sending import _SendError

    store, run_ids = _runs(args)
    for run_id in run_ids:
        try:
            trace = run_trace(store, run_id, content=args.content)
            collector.send(trace.spans)
        except KeyError:  # deleted since it was listed
            raise Refusal(f"no run {run_id} to export") from None
        except OSError as exc:
            raise Refusal(f"cannot read run {run_id}: {exc.strerror or exc}") from None
        except _SendError as exc:
            raise Refusal(str(exc)) from None
        line = (
            f"sent {plural(len(trace.spans), 'span')} of run {run_id} ({trace.status}, "
            f"{plural(trace.segments, 'segment')}) to {collector.url}"
        )
        if trace.open:
            line += f"; {plural(trace.open, 'span')} still open, sent by agentor trace once closed"
        print(literal_line(line))
    if not run_ids:
        print(literal_line(f"no run to export in {where(store)}"))
    return 0


def _runs(args: Namespace) -> tuple[Store, list[str]]:
    """The store, and the runs RUN... or --all (with its filters) name."""
    filters = args.status is not None or args.older_than is not None
    if args.all and args.run_ids:
        raise UsageError("give RUN... or --all, not both")
    if filters and not args.all:
        raise UsageError("--status and --older-than choose among --all")
    if not args.all:
        if not args.run_ids:
            raise UsageError("name a RUN (or several), or --all")
        named: list[str] = []
        store: Store | None = None
        for given in args.run_ids:
            args.run_id = given
            store, run_id = the_run(args)
            named.append(run_id)
        assert store is not None
        return store, list(dict.fromkeys(named))
    try:
        wanted = retention.parse_statuses(args.status) if args.status else None
        age = retention.parse_age(args.older_than) if args.older_than else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    store = store_of(args)
    now = time.time()
    chosen = []
    for run_id in sorted(store.list_runs()):
        events = [x for x in load_lines(store, run_id) if isinstance(x, Event)]
        facts = retention.facts_of(store, run_id, events)  # its status with its liveness
        if wanted is not None and not _matches(facts.status, wanted):
            continue
        if age is not None:
            last = retention.last_active(events)
            if last is None or now - last < age.total_seconds():
                continue
        chosen.append(run_id)
    return store, chosen


def _matches(run_status: str, wanted: frozenset[str]) -> bool:
    return run_status in wanted or (INCOMPLETE in wanted and run_status in (RUNNING, INTERRUPTED))


def _collector(args: Namespace) -> Collector:
    try:
        from agentor.telemetry.sending import Collector, parse_header, traces_url
    except TelemetryUnavailableError as exc:
        raise Refusal(str(exc)) from None
    try:
        headers = dict(parse_header(h) for h in args.header)
    except ValueError as exc:
        raise UsageError(f"--header: {exc}") from None
    try:
        if args.endpoint is not None:
            traces_url(args.endpoint)
    except ValueError as exc:
        raise UsageError(f"--endpoint: {exc}") from None
    return Collector(args.endpoint, headers)


def trace(args: Namespace) -> int:
    spec = store_spec(args)
    collector = _collector(args)
    from agentor.telemetry.follow import Follower
    from agentor.telemetry.sent import SentFile, _StateError

    source = _source(spec, args.schema)
    try:
        state = SentFile(_state_path(args, spec), collector.url)
    except _StateError as exc:
        raise Refusal(str(exc)) from None
    follower = Follower(
        source,
        collector,
        state,
        content=args.content,
        idle=args.idle,
        said=_say,
        once=args.once,
    )
    try:
        if args.once:
            follower.catch_up()
            if follower.error is not None:  # what it took was sent (and said); the rest waits
                raise Refusal(follower.error)
            return 0
        _say(f"following {source.where}: spans go to {collector.url} (sent: {state.path})")
        asyncio.run(_follow(follower))
    except _StateError as exc:
        raise Refusal(str(exc)) from None
    finally:
        follower.close()
        source.close()
    return 0


async def _follow(follower: Follower) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await follower.follow(stop)


def _source(spec: str, schema: str | None) -> RunSource:
    backend = backend_for(spec)
    if backend.default_schema is not None:
        schema = schema or None  # `--schema ""`: the default
    try:
        return open_source(spec, schema)
    except StoreSpecError as exc:
        raise UsageError(str(exc)) from None
    except (FileNotFoundError, NotADirectoryError):
        raise Refusal(f"no such directory: {spec}") from None
    except ImportError as exc:
        raise Refusal(str(exc)) from None


def _state_path(args: Namespace, spec: str) -> Path:
    """--state, else beside the runs (a directory), else in the user's state directory."""
    if args.state:
        return Path(args.state)
    backend = backend_for(spec)
    directory = backend.local_directory(spec)
    if directory is not None:
        return directory / ".agentor-trace-sent"
    key = hashlib.sha256(backend.state_name(spec, args.schema).encode()).hexdigest()
    home = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    home = home / "agentor"
    home.mkdir(parents=True, exist_ok=True)
    return home / f"trace-sent-{key[:16]}"


def _say(text: str) -> None:
    print(literal_line(text), flush=True)
