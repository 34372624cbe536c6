"""`agentor ls [DIR|DSN] [--status S] [--json]` and `agentor show RUN [--store S] [--json]`.

Both read logs and locks only: they write nothing, take no lock and never call a model. The
JSON they print is documented in docs/cli.md ("JSON output"); fields are only ever
added to it. A PostgreSQL store is listed from its runs table (one query), not run by run.
"""

from __future__ import annotations

import json
import time
from argparse import Namespace
from dataclasses import dataclass, field
from typing import Any

from agentor.cli.lines import compact, event_line, finite, plural, print_json, span, stamp
from agentor.cli.stores import load_with_errors, status_of, store_of, the_run, where
from agentor.durations import duration
from agentor.engine.approval.pending import Decision, PendingCall, approval_history, pending_calls
from agentor.engine.events import RUN_START, Event
from agentor.engine.history import RunSummary, fold
from agentor.engine.log.format import BadLine
from agentor.engine.mcp_record import record_notes
from agentor.engine.statuses import INCOMPLETE, RUNNING, UNREADABLE
from agentor.engine.store.api import Store
from agentor.literal import literal, literal_line
from agentor.ops.pins import pinned


@dataclass
class Run:
    """One run as the commands show it: its log read whole, its status with liveness."""

    run_id: str
    status: str
    summary: RunSummary
    events: list[Event] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    pending: list[PendingCall] = field(default_factory=list)
    error: str | None = None
    waiting: int = 0  # calls waiting for a decision, when `pending` was not read (a listing)
    pinned: bool = False  # prune keeps it (agentor pin)

    @property
    def n_pending(self) -> int:
        return len(self.pending) or self.waiting


def read_run(store: Store, run_id: str, now: float) -> Run:
    summary = RunSummary(run_id=run_id, status=UNREADABLE)
    try:
        events, bad = load_with_errors(store, run_id)
    except OSError as exc:
        return Run(run_id, UNREADABLE, summary, error=f"cannot read: {exc.strerror or exc}")
    if bad and not bad[-1].raw.endswith(b"\n") and _held(store, run_id):
        bad = bad[:-1]  # the line its writer is writing now (no newline yet): not a bad line
    if not events:
        if _held(store, run_id):
            return Run(run_id, RUNNING, summary, bad=bad)  # created by a run starting now
        why = f"no events ({bad[0]})" if bad else "no events"
        return Run(run_id, UNREADABLE, summary, bad=bad, error=why)
    fold(summary, events)
    summary.bad_lines = len(bad)
    error = summary.error
    if bad and error is None:
        error = f"{plural(len(bad), 'bad line')}; first: {bad[0]}"
    status = status_of(store, run_id, summary.status)
    return Run(run_id, status, summary, events, bad, pending_calls(events, now), error)


def _held(store: Store, run_id: str) -> bool:
    return status_of(store, run_id, INCOMPLETE) == RUNNING


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
        "pending": run.n_pending,
        "turns": s.turns,
        "tool_calls": s.tool_calls,
        "total_tokens": s.usage.total_tokens,
        "first_prompt": s.first_prompt,
        "error": run.error,
        "pinned": run.pinned,
    }


def ls(args: Namespace) -> int:
    store = store_of(args)
    now = time.time()
    runs = _listed(store, now)
    pins = pins_of(store)
    for r in runs:
        r.pinned = r.run_id in pins
    runs.sort(key=lambda r: (finite(r.summary.started_at) or 0.0, r.run_id), reverse=True)
    if args.status:
        runs = [r for r in runs if r.status == args.status]
    if args.json:
        print_json([run_json(r, now) for r in runs])
        return 0
    if not runs:
        which = f" {args.status}" if args.status else ""
        print(f"no{which} runs in {literal_line(where(store))}")
        return 0
    _print_table(runs, now)
    return 0


def _listed(store: Store, now: float) -> list[Run]:
    listing = getattr(store, "list_summaries", None)
    if listing is None:
        return [read_run(store, run_id, now) for run_id in store.list_runs()]
    runs = []
    for row in listing():
        s = row.summary
        error = s.error or (f"{plural(s.bad_lines, 'bad line')}" if s.bad_lines else None)
        runs.append(Run(row.run_id, row.status, s, error=error, waiting=row.pending_approvals))
    return runs


def pins_of(store: Store) -> set[str]:
    """The pinned runs; none when the store keeps none or its pins cannot be read."""
    try:
        return pinned(store)
    except OSError:
        return set()


def _print_table(runs: list[Run], now: float) -> None:
    header = ("STATUS", "RUN", "AGENT", "MODEL", "AGE", "PENDING", "PINNED", "PROMPT")
    rows = [header]
    for r in runs:
        s = r.summary
        started = finite(s.started_at)
        rows.append(
            (
                r.status,
                r.run_id,
                literal_line(s.agent or "-", 24),
                literal_line(s.model or "-", 24),
                "-" if started is None else span(now - started),
                str(r.n_pending) if r.n_pending else "-",
                "yes" if r.pinned else "-",
                literal_line(s.first_prompt or r.error or "", 60),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[-1]]).rstrip())


def show(args: Namespace) -> int:
    store, run_id = the_run(args)
    now = time.time()
    run = read_run(store, run_id, now)
    run.pinned = run_id in pins_of(store)
    if args.json:
        print_json(show_json(run, now))
        return 0
    _print_summary(run, now)
    _print_timeline(run)
    _print_pending(run, now)
    return 0


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
    }


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
    print(f"status   {run.status.replace('_', ' ')}")
    print(f"agent    {literal_line(' · '.join(x for x in (s.agent, s.model) if x) or '-')}")
    print(f"started  {' · '.join(f for f in facts if f)}")
    if s.first_prompt:
        print(f"prompt   {literal_line(s.first_prompt, 300)}")
    if s.final_output is not None:
        print(f"output   {_indented(literal(s.final_output))}")
    if run.error:
        print(f"error    {literal_line(run.error, 300)}")
    if run.pinned:
        print("pinned   yes: prune keeps it (agentor unpin lets it go)")


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
