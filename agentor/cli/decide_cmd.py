"""`agentor approve RUN [CALL] [--args JSON | --result TEXT] [--note TEXT] [--by NAME]` and
`agentor reject RUN [CALL] --reason TEXT [--by NAME]`.

`--result` is for a call a crash interrupted while it ran: the text it had for a result,
recorded as the tool's result when the run is resumed; the tool is not run again.

A decision is recorded at once, under the run's lock (`agentor.approve` / `agentor.reject`);
the run goes on when it is resumed (`agentor resume`, the TUI, a worker). Edited arguments are
checked against the parameters the run recorded as offered to the model, as the TUI's editor
checks them: a bad edit is a usage error and nothing is written.
"""

from __future__ import annotations

import json
import time
from argparse import Namespace
from collections.abc import Callable
from typing import Any

from agentor.cli.lines import Refusal, UsageError, compact, plural
from agentor.cli.stores import load_with_errors, the_run
from agentor.engine.approval.decisions import approve as approve_call
from agentor.engine.approval.decisions import reject as reject_call
from agentor.engine.approval.pending import Decision, pending_calls
from agentor.engine.store.api import Store
from agentor.errors import (
    ApprovalError,
    InvalidArgsError,
    InvalidResultError,
    RunLockedError,
    RunNotFoundError,
    UnreadableRunError,
)
from agentor.literal import literal_line


def approve(args: Namespace) -> int:
    store, run_id = the_run(args)
    edit = _edit(args.args)
    given = args.result
    made = _deciding(
        lambda: approve_call(
            store, run_id, args.call_id, args=edit, by=args.by, note=args.note, result=given
        )
    )
    _report(store, run_id, made)
    return 0


def reject(args: Namespace) -> int:
    store, run_id = the_run(args)
    if not args.reason.strip():
        raise UsageError("--reason must say why: the model is told it")
    made = _deciding(
        lambda: reject_call(store, run_id, args.call_id, reason=args.reason, by=args.by)
    )
    _report(store, run_id, made)
    return 0


def _edit(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"--args is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError('--args must be a JSON object, such as \'{"city": "Oslo"}\'')
    return value


def _deciding(decide: Callable[[], list[Decision]]) -> list[Decision]:
    try:
        return decide()
    except (InvalidArgsError, InvalidResultError) as exc:
        raise UsageError(str(exc)) from None
    except UnreadableRunError as exc:  # as every command says it
        raise Refusal(f"cannot read run {exc.run_id}: {exc.reason}") from None
    except (ApprovalError, RunNotFoundError, RunLockedError) as exc:
        raise Refusal(str(exc)) from None
    except ValueError as exc:  # a blank --by
        raise UsageError(str(exc)) from None


def _report(store: Store, run_id: str, made: list[Decision]) -> None:
    for d in made:
        line = f"{d.decision} {d.call_id} ({d.name}) of run {run_id} as {d.by}"
        if d.edited:
            line += f", with {compact(d.args)}"
        if d.given:
            line += f", with the result it had: {compact(d.result)}"
        print(literal_line(line, 400))
    events, _ = load_with_errors(store, run_id)  # its bad lines were warned of once already
    waiting = pending_calls(events, time.time())
    if waiting:
        names = ", ".join(f"{p.call_id} ({p.name})" for p in waiting)
        print(literal_line(f"{plural(len(waiting), 'call')} still waiting: {names}", 400))
    else:
        print(f"every call is decided: agentor resume {run_id} --agent SPEC continues the run")
