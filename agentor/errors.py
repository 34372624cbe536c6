"""Every error agentor raises to its caller, each an `AgentorError`.

`except AgentorError` catches whatever the library refuses; each class also derives from the
builtin a caller would have caught before (`RunNotFoundError` is a `KeyError`, `ModelError` a
`RuntimeError`, ...), so older handlers keep working. Messages are one line, never carry a
secret (an API key, a database password), and name what was refused and why.

This module imports nothing of agentor's: every layer may raise these.
"""

from __future__ import annotations

import time
from typing import Protocol


class AgentorError(Exception):
    """The base of every error agentor raises."""


# -- runs in a store --------------------------------------------------------------------------


class RunLockedError(AgentorError, RuntimeError):
    """Another process (or task) is already running or resuming this run."""

    def __init__(self, run_id: str, pid: int | None, host: str | None = None) -> None:
        self.run_id = run_id
        self.pid = pid
        self.host = host  # named when the holder may be on another machine (a database store)
        holder = f"process {pid}" if pid else "another process"
        if host:
            holder += f" on {host}"
        super().__init__(f"run {run_id} is locked by {holder}: it is being run or resumed there")


class RunLostError(AgentorError, RuntimeError):
    """A writer that held a run lost it (its database session ended, or another process took
    the run since): the write was refused and nothing of it was written. Whoever holds the run
    now goes on from what is in the store."""

    def __init__(self, run_id: str, why: str) -> None:
        self.run_id = run_id
        super().__init__(f"run {run_id} was lost by this process ({why}): nothing was written")


class RunNotFoundError(AgentorError, KeyError):
    """The store holds no run with this id. A `KeyError`, so `except KeyError` still works;
    its message names the id and the store."""

    def __init__(self, run_id: str, store: object = None) -> None:
        super().__init__(run_id)
        self.run_id = run_id
        self.store = store

    def __str__(self) -> str:  # KeyError's own would print only the quoted id
        where = f" in {self.store!r}" if self.store is not None else ""
        return f"no run {self.run_id!r}{where}"


class NothingToResumeError(AgentorError, ValueError):
    """The run's log records no prompt (no `run_start` with messages): there is nothing to send
    the model, so nothing to resume."""

    def __init__(self, run_id: str, reason: str) -> None:
        self.run_id = run_id
        self.reason = reason
        super().__init__(f"run {run_id}: nothing to resume: no prompt recorded ({reason})")


class UnreadableRunError(AgentorError, ValueError):
    """The store holds an entry under this run id that cannot be read as a run; `reason` says
    why ("not a regular file: ...", "no event; skipped 81 bad lines; ...")."""

    def __init__(self, run_id: str, reason: str) -> None:
        super().__init__(f"run {run_id} is unreadable ({reason})")
        self.run_id = run_id
        self.reason = reason


class DeleteRefusedError(AgentorError, RuntimeError):
    """`delete_run` will not remove this run: `reason` (HELD, AWAITING) and why, for people."""

    def __init__(self, run_id: str, reason: str, detail: str) -> None:
        super().__init__(f"run {run_id} is kept: {detail}")
        self.run_id = run_id
        self.reason = reason
        self.detail = detail


class RunIdTakenError(AgentorError, ValueError):
    """A run named by its id (`run(input, run_id=...)`, `submit`) is already in the store and
    was started with another input: nothing was written. Resume it, or choose another id."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(
            f"run {run_id} exists and was started with a different input; "
            f"resume({run_id!r}) continues it, or choose another run id"
        )


class StoreSpecError(AgentorError, ValueError):
    """A store named in a way that cannot be taken (the caller's usage error): a schema given
    with a directory, a schema name PostgreSQL cannot take."""


# -- the database store -------------------------------------------------------------------------


class PostgresStoreError(AgentorError, RuntimeError):
    """The database cannot be used as a store. The message is one line, with no password."""


class StoreUnavailableError(PostgresStoreError):
    """A bad DSN, a server that cannot be reached, refused credentials, a missing database; or a
    connection lost in the middle of an operation."""


class SchemaVersionError(PostgresStoreError):
    """The schema was made by a newer agentor than this one: refused, nothing is changed."""


class MalformedDsnError(StoreUnavailableError):
    """A DSN libpq cannot parse: the caller's mistake (a command's usage error), not the
    server's."""


class SchemaNotFoundError(PostgresStoreError):
    """The schema holds no store and the store was opened to read (`create=False`): nothing
    was made. Only a writer makes a schema, so that a mistyped `--schema` creates none."""


# -- the model and the tools --------------------------------------------------------------------


class ModelError(AgentorError, RuntimeError):
    """The model endpoint failed; the message never carries the API key."""


class ToolArgumentsError(AgentorError, ValueError):
    """The model's arguments are not valid JSON or do not fit the tool's parameters."""


class MCPToolError(AgentorError):
    """An MCP tool's result marked `isError`: its text is the error the model gets (recorded as
    `MCPToolError: <its text>`, as a function tool's exception is)."""


class MCPServerError(AgentorError):
    """An MCP server that cannot be reached, or that a call could not get an answer from: a
    tool error in the run, never a crash of it."""


class AgentSpecError(AgentorError, ValueError):
    """An `--agent` spec that cannot be loaded; the message is one line naming the cause."""

    def __init__(self, spec: str, cause: str) -> None:
        self.spec = spec
        self.cause = cause
        super().__init__(f"--agent {spec}: {cause}")


class Failed(Protocol):
    """What an error says of a failed run (`agentor.RunResult` is one). Read-only members, so
    a frozen dataclass conforms too."""

    @property
    def run_id(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...


class RunFailedError(AgentorError, RuntimeError):
    """A run of a batch ended failed (`result` is its RunResult; resume it by its id)."""

    def __init__(self, result: Failed) -> None:
        super().__init__(f"run {result.run_id} failed: {result.error}")
        self.result = result


class OutputValidationError(AgentorError, ValueError):
    """A run's answer did not match its `output_type` and no retry was left (or a finished
    run's recorded answer does not match this agent's `output_type`)."""

    def __init__(self, message: str, run_id: str | None = None, raw: str | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.raw = raw


# -- tracing ------------------------------------------------------------------------------------


class TelemetryUnavailableError(AgentorError, ImportError):
    """Tracing was asked for (`Agentor(tracing=True)`, `agentor trace`, `agentor export`) and
    the OpenTelemetry packages are not installed; the message says how to install them. An
    `ImportError`, as the missing package itself would be."""


# -- a person's decisions -----------------------------------------------------------------------


class Decided(Protocol):
    """What an error says of a decision (`agentor.engine.approval.pending.Decision`)."""

    @property
    def call_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def decision(self) -> str: ...
    @property
    def by(self) -> str: ...
    @property
    def note(self) -> str | None: ...
    @property
    def at(self) -> float | None: ...


class Expired(Protocol):
    """What an error says of a call whose deadline passed (`pending.PendingCall`)."""

    @property
    def call_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def deadline(self) -> float | None: ...

    def timed_out(self) -> Decided: ...


def _when(at: float | None) -> str:
    if at is None:
        return "at an unknown time"
    return time.strftime("at %Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


class ApprovalError(AgentorError):
    """A decision that cannot be recorded; nothing was written. `call_id` is None when the
    decision was for every pending call of the run."""

    def __init__(self, run_id: str, call_id: str | None, message: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.call_id = call_id


class AlreadyDecidedError(ApprovalError):
    """The call was decided before: `decision` ("approved" / "rejected"), `by`, `at` (seconds
    since the epoch), `note`, and the tool's `name`. The first decision on a call counts."""

    def __init__(self, run_id: str, decided: Decided, message: str | None = None) -> None:
        self.decision = decided.decision
        self.by = decided.by
        self.at = decided.at
        self.note = decided.note
        self.name = decided.name
        if message is None:
            note = f" ({decided.note})" if decided.note else ""
            message = (
                f"call {decided.call_id} ({decided.name}) of run {run_id} was already "
                f"{decided.decision} by {decided.by} {_when(decided.at)}{note}"
            )
        super().__init__(run_id, decided.call_id, message)


class ApprovalTimedOutError(AlreadyDecidedError):
    """The call's deadline passed before anyone decided: it counts as rejected (`by` is
    "timeout", `at` the deadline)."""

    def __init__(self, run_id: str, call: Expired) -> None:
        message = (
            f"call {call.call_id} ({call.name}) of run {run_id} timed out "
            f"{_when(call.deadline)}, undecided: it counts as rejected"
        )
        super().__init__(run_id, call.timed_out(), message)


class NotRequestedError(ApprovalError, LookupError):
    """The call never asked for approval (no such call, or its tool is not gated), or the run
    has no call waiting for one (`call_id` None)."""


class InvalidResultError(ApprovalError, ValueError):
    """A result given for a call that cannot take one (it did not run: only a call a crash
    interrupted can be given the result it had), or one that is not JSON; `reason` says
    which."""

    def __init__(self, run_id: str, call_id: str | None, reason: str) -> None:
        super().__init__(run_id, call_id, f"result for call {call_id}: {reason}")
        self.reason = reason


class InvalidArgsError(ApprovalError, ValueError):
    """Edited arguments that are not a JSON object, or do not fit the tool's parameters;
    `reason` says what is wrong."""

    def __init__(self, run_id: str, call_id: str | None, reason: str) -> None:
        super().__init__(run_id, call_id, f"edited arguments for call {call_id}: {reason}")
        self.reason = reason


class SpanDecodeError(AgentorError, ValueError):
    """A body or file that is not an OTLP request `agentor collect` or `agentor import` can
    read (agentor.collect): the reason in one line, and nothing of it is written."""


class ScorerSpecError(AgentorError, ValueError):
    """An experiment's scorer spec that names no scorer: an unknown built-in, or a
    `module:function` that does not import (agentor.experiments.scorers)."""


class ExperimentNotFoundError(AgentorError, KeyError):
    """An experiment id the store holds no experiment under (agentor.experiments)."""

    def __init__(self, experiment_id: str, where: object = None) -> None:
        self.experiment_id = experiment_id
        place = f" in {where}" if where is not None else ""
        super().__init__(f"no experiment {experiment_id}{place}")

    def __str__(self) -> str:
        return str(self.args[0])


class ExperimentError(AgentorError, ValueError):
    """An experiment that cannot start or go on: a baseline that cannot be replayed, a store
    that keeps no experiments, a definition that does not match the one recorded
    (agentor.experiments). Said in one line; nothing is written."""
