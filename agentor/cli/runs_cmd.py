"""`agentor ls [DIR|DSN] [--status S] [--agent NAME] [--since AGE] [--limit N] [--json]` and
`agentor show RUN [--store S] [--json]`.

Both read through the run sources (`agentor.sources`), as the TUI lists runs: the same rows,
statuses (one rule, `statuses.live_status`) and reasons ("not a valid run id: ...", "is a
directory", "empty file", "2 bad lines; first at byte 812: ..."); `show` prints the run's
events as the engine's loader reads them. A listing of a directory reads its rows from the run
index, as the TUI does, and saves the index when it read logs (`listing.list_rows`); nothing
else is written, no lock is taken and no model is called. The JSON they print is documented in
docs/cli.md ("JSON output"); fields are only ever added to it.
"""

from __future__ import annotations

import json
import math
import time
from argparse import Namespace
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import eq, ge, sub
from typing import Any

import orjson

from agentor.cli.lines import (
    Refusal,
    compact,
    event_line,
    finite,
    plural,
    print_json,
    print_utf8,
    span,
    stamp,
)
from agentor.cli.stores import load_with_errors, run_in, run_named, source_of, where
from agentor.collect.origin import collected_source, origin_words
from agentor.durations import duration
from agentor.engine.approval.pending import Decision, PendingCall, approval_history
from agentor.engine.events import RUN_START, TOOL_RESULT, Event
from agentor.engine.fork.recording import DRIFT, SERVED, answered
from agentor.engine.fork_mark import MODEL, ForkMark
from agentor.engine.history import RunSummary
from agentor.engine.log.format import BadLine
from agentor.engine.mcp_record import record_notes
from agentor.engine.statuses import RUNNING
from agentor.engine.store.api import Store
from agentor.literal import literal, literal_line
from agentor.ops.pins import pinned
from agentor.sources.gated import GatedCall
from agentor.sources.lineage import edit_of, fork_point, lineage_of
from agentor.sources.listing import read_row, table_listed, waiting_by_run, waiting_of
from agentor.sources.logfile import gc_paused
from agentor.sources.runrow import RunRow
from agentor.sources.runtable import RunTable
from agentor.sources.source import RunSource


@dataclass
class Run:
    """One run as the commands show it: its row (status and reasons as the TUI lists it), the
    calls a person can decide now, and (`show`) its events and unreadable lines."""

    row: RunRow
    pending: list[PendingCall] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    pinned: bool = False  # prune keeps it (agentor pin)
    summary: RunSummary = field(init=False)  # the row's; an empty one for an unreadable entry

    def __post_init__(self) -> None:
        self.summary = self.row.summary or RunSummary(self.row.run_id, status=self.row.status)

    @property
    def run_id(self) -> str:
        return self.row.run_id

    @property
    def status(self) -> str:
        return self.row.status

    @property
    def error(self) -> str | None:
        """What went wrong: the run's own error (a failed run's), else why its entry cannot
        be read or what of it cannot (the row's reason)."""
        return self.summary.error or self.row.error


def run_json(run: Run, now: float) -> dict[str, Any]:
    """A run as `agentor ls --json` gives it (and `agentor show --json` under "run")."""
    s = run.summary
    started = finite(s.started_at)
    return {
        "run_id": run.run_id,
        "status": run.status,
        "agent": s.agent,
        "model": s.model,
        "started_at": started,
        "last_event_at": finite(s.last_event_at),
        "age": None if started is None else round(now - started, 3),
        "pending": len(run.pending),
        "turns": s.turns,
        "tool_calls": s.tool_calls,
        "total_tokens": s.usage.total_tokens,
        "first_prompt": s.first_prompt,
        "error": run.error,
        "pinned": run.pinned,
    }


def ls(args: Namespace) -> int:
    with gc_paused():  # 100,000 rows: no cycle among them, and each collection walks them all
        return _ls(args)


def _ls(args: Namespace) -> int:
    source = source_of(args)
    now = time.time()
    # Newest first, as the TUI lists them; a large index saved meanwhile (another process).
    with table_listed(source) as table:
        return _print_listing(source, table, args, now)


def _print_listing(source: RunSource, table: RunTable, args: Namespace, now: float) -> int:
    if source.error is not None:
        raise Refusal(source.error)
    table = chosen(table, args, now)
    pins = pins_of(source.store)
    waiting = waiting_by_run(source, list(compress(table.run_id, table.may_wait)), now)
    if args.json:
        print_runs_json(listing_json(table, waiting, pins, now))
        return 0
    if not len(table):
        which = f" {args.status}" if args.status else ""
        print(f"no{which} runs{_asked_for(args)} in {literal_line(where_of(source))}")
        return 0
    _print_table(table, waiting, pins, now)
    return 0


def chosen(table: RunTable, args: Namespace, now: float) -> RunTable:
    """The rows `ls` was asked for (they come newest first): of a status, of an agent, started
    since an age ago (a run with no start recorded: last changed since), the newest N."""
    masks = []
    if args.status:
        masks.append(list(map(eq, table.status, repeat(args.status))))
    if args.agent is not None:
        masks.append(list(map(eq, table.agent, repeat(args.agent))))
    if args.since is not None:
        cutoff = now - args.since.total_seconds()
        masks.append(list(map(ge, table.sort_key, repeat(cutoff))))
    if masks:
        table = table.keep(list(map(all, zip(*masks, strict=True))))
    if args.limit is not None and args.limit < len(table):
        table = table.take(list(range(args.limit)))
    return table


def _asked_for(args: Namespace) -> str:
    """What an empty listing was narrowed to, as `ls` says it (the status is said before)."""
    said = f" of agent {literal_line(args.agent, 60)}" if args.agent is not None else ""
    if args.since is not None:
        said += f" started in the last {span(args.since.total_seconds())}"
    return said


_SHOWN = 1e11  # `finite`: a time a clock can show is under this


def listing_json(
    table: RunTable, waiting: dict[str, list[GatedCall]], pins: set[str], now: float
) -> list[dict[str, Any]]:
    """`run_json` of each row of the table (its waiting calls, whether pinned), made a column
    at a time in C loops, then each row's object (`_run_object`): 100,000 runs in ~0.15 s,
    where a `Run` a row, then its JSON, cost 6 µs a row."""
    n = len(table)
    started, last = _shown(table.started_at), _shown(table.last_event_at)
    if None in started:
        age = [None if t is None else round(now - t, 3) for t in started]
    else:
        age = list(map(round, map(sub, repeat(now), started), repeat(3)))
    pending = [len(waiting.get(r, ())) for r in table.run_id] if waiting else [0] * n
    pinned = list(map(pins.__contains__, table.run_id)) if pins else [False] * n
    return list(
        map(
            _run_object,
            table.run_id,
            table.status,
            table.agent,
            table.model,
            started,
            last,
            age,
            pending,
            table.turns,
            table.tool_calls,
            table.total_tokens,
            table.first_prompt,
            table.error,
            pinned,
        )
    )


def _run_object(
    run_id: str,
    status: str,
    agent: str | None,
    model: str | None,
    started_at: float | None,
    last_event_at: float | None,
    age: float | None,
    pending: int,
    turns: int,
    tool_calls: int,
    total_tokens: int,
    first_prompt: str | None,
    error: str | None,
    pinned: bool,
) -> dict[str, Any]:
    """A row of `ls --json` from its values (one dict display: the cheapest way to make one)."""
    return {
        "run_id": run_id,
        "status": status,
        "agent": agent,
        "model": model,
        "started_at": started_at,
        "last_event_at": last_event_at,
        "age": age,
        "pending": pending,
        "turns": turns,
        "tool_calls": tool_calls,
        "total_tokens": total_tokens,
        "first_prompt": first_prompt,
        "error": error,
        "pinned": pinned,
    }


def _shown(times: list[Any]) -> list[float | None]:
    """`finite` of each time; the list itself when every one is a plain float a clock shows
    (their sum is finite: no NaN nor infinity among them)."""
    plain = times and set(map(type, times)) == {float} and math.isfinite(sum(times))
    if plain and min(times) > -_SHOWN and max(times) < _SHOWN:
        return times
    return list(map(finite, times))


def print_runs_json(runs: list[dict[str, Any]]) -> None:
    """`print_json` of a listing, by orjson: its values are strings, whole numbers, finite
    times and null, which orjson writes as `json` does (the same text, but for the exponent of
    a float under 1e-4: same number); `json`'s indenting encoder is pure Python, 4 s over
    100,000 runs. `json` for what orjson refuses (a name that is not UTF-8). Written as the
    bytes orjson made (`print_utf8`): 40 MB is not decoded to be encoded again."""
    try:
        data = orjson.dumps(runs, option=orjson.OPT_INDENT_2)
    except (TypeError, orjson.JSONEncodeError):
        print_json(runs)
        return
    print_utf8(data)


def where_of(source: RunSource) -> str:
    """The store as a command names it (`stores.where`: a directory's real path)."""
    return where(source.store) if source.store is not None else source.where


def pins_of(store: Store | None) -> set[str]:
    """The pinned runs; none when the store keeps none or its pins cannot be read."""
    try:
        return pinned(store) if store is not None else set()
    except OSError:
        return set()


def _print_table(
    table: RunTable, waiting: dict[str, list[GatedCall]], pins: set[str], now: float
) -> None:
    header = ("STATUS", "RUN", "AGENT", "MODEL", "AGE", "PENDING", "PINNED", "PROMPT")
    rows = [header]
    for run_id, status, agent, model, started_at, prompt, error in zip(
        table.run_id,
        table.status,
        table.agent,
        table.model,
        table.started_at,
        table.first_prompt,
        table.error,
        strict=True,
    ):
        started = finite(started_at)
        pending = len(waiting.get(run_id, ()))
        rows.append(
            (
                literal_line(status),  # a `run_end` may name any status
                literal_line(run_id),  # a row of a log named with no run id: its file name
                literal_line(agent or "-", 24),
                literal_line(model or "-", 24),
                "-" if started is None else span(now - started),
                str(pending) if pending else "-",
                "yes" if run_id in pins else "-",
                literal_line(prompt or error or "", 60),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]).rstrip())


def show(args: Namespace) -> int:
    given = run_named(args)
    source = source_of(args)
    store = source.store
    if store is None:  # a directory that cannot be opened
        raise Refusal(source.error or f"cannot read {source.where}")
    run_id = run_in(store, given)
    now = time.time()
    row = read_row(source, run_id)
    if row is None:
        raise Refusal(f"no run {run_id} in {where(store)}")  # deleted meanwhile
    waiting = [gated.call for gated in waiting_of(source, row, now)]
    run = Run(row, waiting, pinned=run_id in pins_of(store))
    run.events, run.bad = _events(store, row)
    if args.json:
        print_json(show_json(run, now))
        return 0
    _print_summary(run, now)
    _print_timeline(run)
    _print_pending(run, now)
    return 0


def _events(store: Store, row: RunRow) -> tuple[list[Event], list[BadLine]]:
    """The run's events and unreadable lines as the engine's loader reads them; none when its
    entry cannot be read (the row says why)."""
    try:
        events, bad = load_with_errors(store, row.run_id)
    except KeyError:  # `RunNotFoundError`: deleted since its row was read
        raise Refusal(f"no run {row.run_id} in {where(store)}") from None
    except OSError:
        return [], []
    if bad and not bad[-1].raw.endswith(b"\n") and row.status == RUNNING:
        bad = bad[:-1]  # the line its writer is writing now (no newline yet): not a bad line
    return events, bad


def show_json(run: Run, now: float) -> dict[str, Any]:
    """A run as `agentor show --json` gives it."""
    s = run.summary
    return {
        "run": run_json(run, now),
        "ended_at": finite(s.ended_at),
        "final_output": s.final_output,
        "usage": s.usage.to_dict(),
        "segments": s.segments,
        "pending": [pending_json(p) for p in run.pending],
        "approvals": [
            {**pending_json(request), "decision": decision_json(decided)}
            for request, decided in approval_history(run.events)
        ],
        "events": [e.to_dict() for e in run.events],
        "bad_lines": [{"line": b.lineno, "offset": b.offset, "reason": b.reason} for b in run.bad],
        **structured_output(run.events, s.final_output),
        "fork": fork_json(run),
        "tool_results": tool_results_json(run.events),
    }


def fork_json(run: Run) -> dict[str, Any] | None:
    """What a fork was made from (null for a run that is none): `forked_from`, `at` (the
    parent's line, null for a whole run) and, for a replay, `replay`: the `model` it asked,
    `match`, `novel` and the `experiment` it is a candidate of (null when none)."""
    parent, mark = lineage_of(run.run_id, run.events)
    if parent is None:
        return None
    replay = None
    if mark is not None and mark.replay is not None:
        model = mark.edit.get(MODEL)
        replay = {
            "model": model if isinstance(model, str) else None,
            "match": mark.match,
            "novel": mark.novel,
            "experiment": mark.experiment,
        }
    return {"forked_from": parent, "at": None if mark is None else mark.at, "replay": replay}


def tool_results_json(events: list[Event]) -> list[dict[str, Any]]:
    """Each tool result, how it was answered: `event` (its index in `events`), `call_id`,
    `name`, `turn`, `served` (true: from a record, nothing ran), `answered` ("served",
    "executed", "refused": a replay's call with no recorded answer, nothing ran; "given": by
    a person), `replayed_from` (the recorded call served), `drift` (the recorded call's
    arguments when a fifo replay served it to other arguments; else null)."""
    out = []
    for i, e in enumerate(events):
        if e.type != TOOL_RESULT:
            continue
        how = answered(e)
        out.append(
            {
                "event": i,
                "call_id": e.call_id,
                "name": e.name,
                "turn": e.turn,
                "served": how == SERVED,
                "answered": how,
                "replayed_from": e.replayed_from,
                "drift": e.extra.get(DRIFT),
            }
        )
    return out


def structured_output(events: list[Event], final_output: str | None) -> dict[str, Any]:
    """`output_type`: the structured output a run asked for (its last run_start's record);
    `parsed_output`: its final output as JSON (null when it has none or it is not JSON)."""
    starts = [e for e in events if e.type == RUN_START]
    output = starts[-1].output if starts else None
    parsed = None
    if output is not None and final_output is not None:
        try:
            parsed = json.loads(final_output)
        except (ValueError, RecursionError):
            parsed = None
    return {"output_type": None if output is None else output.get("type"), "parsed_output": parsed}


def pending_json(p: PendingCall) -> dict[str, Any]:
    return {
        "call_id": p.call_id,
        "name": p.name,
        "args": p.args,
        "turn": p.turn,
        "requested_at": finite(p.requested_at),
        "deadline": finite(p.deadline),
        "server": p.server,
        "reason": p.reason,
        "started_at": finite(p.started_at),
        "host": p.host,
        "pid": p.pid,
    }


def decision_json(d: Decision | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {
        "decision": d.decision,
        "by": d.by,
        "note": d.note,
        "args": d.args,
        "at": finite(d.at),
        "result": d.result,
    }


def _print_summary(run: Run, now: float) -> None:
    s = run.summary
    started = finite(s.started_at)
    ago = "" if started is None else f" ({span(now - started)} ago)"
    took = s.active_time()
    facts = [
        f"{stamp(started)}{ago}",
        f"took {duration(took)}" if took is not None else None,
        plural(s.turns, "turn"),
        plural(s.tool_calls, "tool call"),
        f"{s.usage.total_tokens} tokens",
    ]
    print(f"run      {run.run_id}")
    print(f"status   {literal_line(run.status.replace('_', ' '))}")
    print(f"agent    {literal_line(' · '.join(x for x in (s.agent, s.model) if x) or '-')}")
    source = collected_source(next((e for e in run.events if e.type == RUN_START), None))
    if source is not None:
        print(f"from     {origin_words(source)}")
    _print_lineage(run)
    print(f"started  {' · '.join(f for f in facts if f)}")
    if s.first_prompt:
        print(f"prompt   {literal_line(s.first_prompt, 300)}")
    if s.final_output is not None:
        print(f"output   {_indented(literal(s.final_output))}")
    if run.error:
        print(f"error    {literal_line(run.error, 300)}")
    if run.pinned:
        print("pinned   yes: prune keeps it (agentor unpin lets it go)")


def _print_lineage(run: Run) -> None:
    """A fork's parent and what changed; a replay's matching, its novel calls, and how its
    tool results were answered."""
    parent, mark = lineage_of(run.run_id, run.events)
    if parent is None:
        return
    where = "" if mark is None else " " + fork_point(mark.at, edit_of(mark))
    print(f"fork     of {literal_line(parent, 128)}{where}")
    if mark is None or mark.replay is None:
        return
    print(f"replay   {_replay_words(mark, run.events[mark.index + 1 :])}")


def _replay_words(mark: ForkMark, own: list[Event]) -> str:
    """`match fifo · novel calls stop · 3 served (1 with other arguments) · 1 executed`."""
    results = [e for e in own if e.type == TOOL_RESULT]
    how = [answered(e) for e in results]
    words = [f"match {mark.match}", f"novel calls {mark.novel}"]
    served = how.count(SERVED)
    drifted = sum(1 for e in results if DRIFT in e.extra)
    words.append(f"{served} served" + (f" ({drifted} with other arguments)" if drifted else ""))
    words += [f"{n} {kind}" for kind in ("executed", "refused", "given") if (n := how.count(kind))]
    return " · ".join(words)


def _print_timeline(run: Run) -> None:
    print()
    print(f"timeline ({plural(len(run.events), 'event')})")
    for e in run.events:
        print("  " + event_line(e))
        if e.type == RUN_START:  # what its MCP servers warn of, whole
            for note in record_notes(e.mcp):
                print(f"            ⚠ {literal_line(note, 400)}")
    for b in run.bad:
        print(f"  unreadable  {literal_line(str(b), 160)}")


def _print_pending(run: Run, now: float) -> None:
    if not run.pending:
        return
    print()
    print(f"waiting for approval ({len(run.pending)})")
    for p in run.pending:
        requested = finite(p.requested_at)
        when = f"requested {stamp(requested)}"
        if requested is not None:
            when += f" ({span(now - requested)} ago)"
        deadline = finite(p.deadline)
        if deadline is not None:
            when += f", times out {stamp(deadline)}"
        via = f" @{p.server}" if p.server else ""
        print(f"  {literal_line(p.call_id)}  {literal_line(p.name + via)}  {when}")
        if p.interrupted:
            ran = f"started {stamp(finite(p.started_at))} in process {p.pid} on {p.host}"
            print(f"    {literal_line(p.reason or '')}: {literal_line(ran)}")
        print("    " + _indented(literal(_pretty(p.args)), "    "))
    print()
    print(f"  agentor approve {run.run_id} [CALL] [--args JSON] [--note TEXT]")
    if any(p.interrupted for p in run.pending):
        print(f"  agentor approve {run.run_id} CALL --result TEXT   (an interrupted call: it ran)")
    print(f"  agentor reject {run.run_id} [CALL] --reason TEXT")


def _pretty(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError, RecursionError):
        return compact(value)


def _indented(text: str, indent: str = "         ") -> str:
    return text.replace("\n", "\n" + indent)
