"""`agentor`: the scriptable twin of the TUI's actions, for shells, CI jobs and chat-ops bots,
and the worker of a fleet.

    agentor ls [DIR|DSN] [--status S] [--agent NAME] [--since AGE] [--limit N] [--json]
    agentor show RUN [--json]
    agentor approve RUN [CALL] [--args JSON | --result TEXT] [--note TEXT] [--by NAME]
    agentor reject RUN [CALL] --reason TEXT [--by NAME]
    agentor resume RUN --agent SPEC [--any-agent]
    agentor submit PROMPT --agent SPEC [--run-id ID]
    agentor worker --agent SPEC [--agent SPEC]... [--concurrency N] [--retry-failed]
    agentor copy SRC DST [--run RUN]...
    agentor fork RUN [--at N] [--result TEXT | --input TEXT] [--model M] --agent SPEC
    agentor replay RUN [--model M] [--agent SPEC] [--novel error|stop|run] [--match strict|fifo]
                   [--instructions FILE] [--set KEY=VALUE]...
    agentor diff RUN_A RUN_B [--json]
    agentor prune [DIR|DSN] --older-than 30d [--keep-last N] [--status S,...] [--dry-run] [--json]
    agentor pin RUN / agentor unpin RUN
    agentor export RUN [--format md|json|html] [-o FILE]
    agentor export RUN... --format otlp [--endpoint URL] [--header K=V] [--content] (or --all)
    agentor trace [DIR|DSN] --endpoint URL [--header K=V] [--content] [--state FILE]
    agentor search [DIR|DSN] QUERY [--regex] [--json]
    agentor experiment run|ls|show|resume|export ... (experiment_cmd)

Each takes `--store DIR|DSN` (a runs directory or a PostgreSQL DSN, default `runs`) and
`--schema NAME` (agentor.cli.stores); those that took `--dir DIR` still do. Exit status: 0 done, 1
refused (not found, already decided, locked, a run that failed), 2 a usage error; every
refusal and usage error is one line on stderr. Each subcommand group is a module (runs_cmd:
ls/show, decide_cmd: approve/reject, resume_cmd: resume, fleet_cmd: submit/worker, copy_cmd:
copy, fork_cmd: fork/replay, diff_cmd: diff, ops_cmd: prune/pin/unpin, export_cmd: export,
search_cmd: search, trace_cmd: trace and export's otlp, experiment_cmd: experiment),
imported only when its command runs: `agentor --help` loads neither the engine nor the model
client. `agentor search` exits as grep does: 0 found, 1 none, 2 an error.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from agentor.access import port
from agentor.engine.statuses import (  # a module of names only: --help stays fast
    AWAITING_APPROVAL,
    COMPLETED,
    DIVERGED,
    FAILED,
    INCOMPLETE,
    INTERRUPTED,
    MAX_TURNS,
    RUNNING,
    UNREADABLE,
)

# What the store arguments say (agentor.cli.stores has the rest: it imports the engine).
STORE_HELP = (
    "a runs directory or a PostgreSQL DSN, postgresql://... or 'host=... dbname=...' "
    "(default: runs)"
)
SCHEMA_HELP = "the schema of a PostgreSQL store (default: agentor)"

# What `agentor ls --status` takes: the statuses a listed run can have.
STATUSES = (
    COMPLETED,
    FAILED,
    MAX_TURNS,
    DIVERGED,
    AWAITING_APPROVAL,
    RUNNING,
    INTERRUPTED,
    UNREADABLE,
)
# What `agentor prune --status` names (agentor.ops.retention.STATUSES; a test checks).
PRUNABLE = (
    COMPLETED,
    FAILED,
    MAX_TURNS,
    INTERRUPTED,
    RUNNING,
    AWAITING_APPROVAL,
    INCOMPLETE,
    DIVERGED,
)


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class CommandParser(Parser):
    """A command's parser: an argument it does not know is its own usage error
    (`agentor approve: error: unrecognized arguments: --json`). Plain argparse hands what a
    subparser leaves over to the top parser, which would blame `agentor`."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


class Intermixed(CommandParser):
    """A parser whose positionals and options may come in any order: `agentor search DSN
    --schema S QUERY` (plain argparse takes DSN for QUERY there: the first positionals it meets
    are all it assigns). The arguments are put in order first, options then positionals after
    a `--`; what followed a `--` given stays a positional (`agentor search -- -x`)."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        given = list(args or [])
        cut = given.index("--") if "--" in given else len(given)
        options, positionals = [], []
        todo = iter(given[:cut])
        for arg in todo:
            action = self._option_string_actions.get(arg)
            if action is not None:
                options.append(arg)
                value = next(todo, None) if action.nargs is None else None
                if value is not None:  # it takes one value: the next argument
                    options.append(value)
            elif arg.startswith("-") and len(arg) > 1:
                options.append(arg)  # --opt=value, or one argparse says it does not know
            else:
                positionals.append(arg)
        return super().parse_known_args(
            [*options, "--", *positionals, *given[cut + 1 :]], namespace
        )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentor-tui")
    except PackageNotFoundError:  # a source tree that is not installed
        from agentor._version import __version__

        return __version__


class _Version(argparse.Action):
    """`--version`, its number looked up only when asked: `importlib.metadata` costs every
    command ~0.1 s to import (`agentor ls` of 100,000 runs takes about a second)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        parser.exit(0, f"agentor {_version()}\n")


def build_parser() -> Parser:
    p = Parser(
        prog="agentor",
        description=(
            "List, show, approve, reject, resume, submit, copy, fork, replay, diff, prune, pin, "
            "export, trace and search durable agentor runs; run a worker of a fleet; import other "
            "frameworks' runs from their OpenTelemetry spans."
        ),
        epilog=(
            "Exit status: 0 done, 1 refused, 2 usage error (search: 0 found, 1 none, 2 error). "
            "The store (--store DIR|DSN) defaults to the directory runs."
        ),
    )
    p.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    sub.required = True

    _add_run_commands(sub)
    _add_fleet_commands(sub)
    _add_fork_commands(sub)
    _add_ops_commands(sub)
    _add_collect_commands(sub)
    _add_experiment_commands(sub)
    return p


def _add_experiment_commands(sub: Any) -> None:
    """Recorded runs replayed against a change, compared in pairs (docs/experiments.md)."""
    experiment = sub.add_parser(
        "experiment", help="replay recorded runs against a change; compare the pairs"
    )
    verbs = experiment.add_subparsers(
        dest="verb", metavar="VERB", parser_class=CommandParser, required=True
    )
    run = verbs.add_parser("run", help="start an experiment (or go on with the same one)")
    _experiment_run_args(run)
    run.set_defaults(run="experiment_cmd:run")

    ls = verbs.add_parser("ls", help="the experiments of a store")
    _store_args(ls)
    ls.add_argument("--json", action="store_true", help="a JSON array")
    ls.set_defaults(run="experiment_cmd:ls")

    show = verbs.add_parser("show", help="an experiment's summary and pairs")
    show.add_argument("experiment_id", metavar="ID", help="the experiment's id")
    _store_args(show)
    show.add_argument("--json", action="store_true", help="a JSON object (docs/experiments.md)")
    show.set_defaults(run="experiment_cmd:show")

    resume = verbs.add_parser("resume", help="finish what an experiment is missing")
    resume.add_argument("experiment_id", metavar="ID", help="the experiment's id")
    resume.add_argument(
        "--agent", metavar="SPEC", help="the candidates' agent (default: the one it started with)"
    )
    _experiment_options(resume)
    resume.set_defaults(run="experiment_cmd:resume")

    export = verbs.add_parser("export", help="an experiment as Markdown, HTML or JSON")
    export.add_argument("experiment_id", metavar="ID", help="the experiment's id")
    _store_args(export)
    export.add_argument(
        "--format", choices=("md", "html", "json"), default="md", help="md (default), html, json"
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    export.set_defaults(run="experiment_cmd:export")


def _experiment_run_args(run: argparse.ArgumentParser) -> None:
    """What `agentor experiment run` takes: the runs, the change, how calls are answered, the
    scorers."""
    run.add_argument("runs", nargs="*", metavar="RUN", help="the baselines: run ids or prefixes")
    run.add_argument("--status", choices=STATUSES, metavar="S", help="select runs of a status")
    run.add_argument("--search", metavar="TEXT", help="select runs whose events hold TEXT")
    run.add_argument("--since", type=_age, metavar="AGE", help="select runs started since AGE")
    run.add_argument("--agent-name", metavar="NAME", help="select runs of this agent name")
    run.add_argument("--limit", type=_whole(1), metavar="N", help="at most the N newest selected")
    run.add_argument("--model", metavar="M", help="the model the candidates ask")
    run.add_argument(
        "--agent",
        metavar="SPEC",
        help="the candidates' agent (its instructions, settings, tools): path/to/file.py:name "
        "or package.module:name (default: each run's recorded tools, none of them run)",
    )
    run.add_argument(
        "--instructions", metavar="FILE", help="the candidates' system message, from FILE"
    )
    run.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help='a model setting for the candidates (VALUE as JSON: 0.2, true, "x")',
    )
    run.add_argument(
        "--match",
        choices=("strict", "fifo"),
        default="strict",
        help="a call gets the recorded result of an equal call (strict, default), or of that "
        "tool in recorded order whatever its arguments (fifo)",
    )
    run.add_argument(
        "--novel",
        choices=("error", "stop", "run"),
        default="error",
        help="a call with no recorded answer: an error to the model (default), the candidate "
        "ends diverged (stop), or it runs (run, needs --agent)",
    )
    run.add_argument(
        "--scorer",
        action="append",
        metavar="SPEC",
        help="same_output, same_tools, output_contains:TEXT, judge[:MODEL] or module:function",
    )
    run.add_argument("--rubric", metavar="FILE", help="the judge's rubric, from FILE")
    run.add_argument("--name", metavar="NAME", help="the experiment's name")
    _experiment_options(run)


def _experiment_options(p: argparse.ArgumentParser) -> None:
    _store_args(p)
    p.add_argument(
        "--concurrency", type=_whole(1), default=4, metavar="N", help="candidates at once (4)"
    )
    p.add_argument("--json", action="store_true", help="a JSON object (docs/experiments.md)")
    p.add_argument(
        "--fail-on",
        choices=("regression",),
        metavar="regression",
        help="exit 1 when any pair regressed (a CI gate)",
    )


def _add_collect_commands(sub: Any) -> None:
    """Runs of other frameworks, from their OpenTelemetry spans (docs/collect.md)."""
    imp = sub.add_parser("import", help="runs from OTLP files of any framework's GenAI spans")
    imp.add_argument(
        "files", nargs="+", metavar="FILE", help="OTLP JSON lines, a JSON document or protobuf"
    )
    _store_args(imp)
    imp.set_defaults(run="import_cmd:import_files")

    collect = sub.add_parser("collect", help="receive OTLP spans of any framework as runs")
    _store_positional(collect)
    collect.add_argument("--host", default="127.0.0.1", help="listen here (default: 127.0.0.1)")
    collect.add_argument(
        "--port", type=port, default=4318, help="OTLP/HTTP port (default 4318; 0: a free one)"
    )
    collect.add_argument(
        "--grpc-port",
        type=port,
        metavar="PORT",
        help="OTLP/gRPC too, on this port (0: a free one; needs agentor-tui[collect-grpc])",
    )
    collect.add_argument(
        "--token",
        metavar="T",
        help="required as Authorization: Bearer T (default: AGENTOR_COLLECT_TOKEN); "
        "any host but loopback needs one",
    )
    collect.add_argument(
        "--max-body", type=_whole(1), default=16, metavar="MB", help="the largest body taken"
    )
    collect.add_argument(
        "--idle",
        type=_whole(1),
        default=600,
        metavar="SECONDS",
        help="an unfinished run no span came for this long is interrupted (default 600)",
    )
    collect.set_defaults(run="collect_cmd:collect")


def _add_run_commands(sub: Any) -> None:
    """What the TUI does, from a shell: ls, show, approve, reject, resume."""
    ls = sub.add_parser("ls", help="list runs: status, agent, model, age, pending approvals")
    ls.add_argument("dir_arg", nargs="?", metavar="DIR|DSN", help=STORE_HELP)
    ls.add_argument("--store", metavar="DIR|DSN", help="the same as DIR|DSN")
    ls.add_argument("--schema", metavar="NAME", help=SCHEMA_HELP)
    ls.add_argument("--status", choices=STATUSES, metavar="S", help=", ".join(STATUSES))
    ls.add_argument("--agent", metavar="NAME", help="only the runs of this agent (its name)")
    ls.add_argument(
        "--since", type=_age, metavar="AGE", help="only runs started since: 30m, 2h, 7d, 2w"
    )
    ls.add_argument("--limit", type=_whole(1), metavar="N", help="only the N newest runs")
    ls.add_argument("--json", action="store_true", help="a JSON array (fields: docs/cli.md)")
    ls.set_defaults(run="runs_cmd:ls")

    show = sub.add_parser("show", help="a run's summary, timeline and pending calls")
    _run_args(show)
    show.add_argument("--json", action="store_true", help="a JSON object (fields: docs/cli.md)")
    show.set_defaults(run="runs_cmd:show")

    approve = sub.add_parser("approve", help="approve a pending call (all, without CALL)")
    _run_args(approve, call=True)
    approve.add_argument("--args", metavar="JSON", help="run the call with these arguments")
    approve.add_argument(
        "--result",
        metavar="TEXT",
        help="an interrupted call's result: recorded as what it returned, never run again",
    )
    approve.add_argument("--note", metavar="TEXT", help="a note kept with the decision")
    approve.add_argument("--by", metavar="NAME", help="who decides (default: user@host)")
    approve.set_defaults(run="decide_cmd:approve")

    reject = sub.add_parser("reject", help="reject a pending call (all, without CALL)")
    _run_args(reject, call=True)
    reject.add_argument("--reason", required=True, metavar="TEXT", help="told to the model")
    reject.add_argument("--by", metavar="NAME", help="who decides (default: user@host)")
    reject.set_defaults(run="decide_cmd:reject")

    resume = sub.add_parser("resume", help="resume a run, its events as lines on stdout")
    _run_args(resume)
    resume.add_argument(
        "--agent",
        required=True,
        metavar="SPEC",
        help="path/to/file.py:name or package.module:name (an Agentor or a function returning one)",
    )
    resume.add_argument(
        "--any-agent",
        action="store_true",
        help="resume with the agent even if another agent name wrote the run",
    )
    resume.set_defaults(run="resume_cmd:resume")


def _add_fleet_commands(sub: Any) -> None:
    """Runs for workers: submit, worker, copy."""
    submit = sub.add_parser("submit", help="record a new run for the workers, not run here")
    submit.add_argument("prompt", metavar="PROMPT", help="the user's message (- reads stdin)")
    _agent_arg(submit, "the agent whose run it is (its name picks the workers)")
    submit.add_argument("--run-id", metavar="ID", help="name the run (default: a new uuid)")
    _store_args(submit)
    submit.set_defaults(run="fleet_cmd:submit")

    worker = sub.add_parser("worker", help="finish free incomplete runs until SIGTERM")
    _agent_arg(worker, "an agent to run its runs with (repeat: runs are matched by name)")
    worker.add_argument(
        "--concurrency", type=_whole(1), default=4, metavar="N", help="runs at once (default 4)"
    )
    worker.add_argument(
        "--retry-failed", action="store_true", help="take failed and max_turns runs too"
    )
    worker.add_argument(
        "--max-attempts",
        type=_whole(1),
        default=3,
        metavar="K",
        help="end a run as failed once K attempts died with their worker (default 3)",
    )
    worker.add_argument(
        "--poll",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="look for runs freed by a dead worker this often (default 1)",
    )
    worker.add_argument("--name", metavar="NAME", help="sign claims with this (default host:pid)")
    _store_args(worker)
    worker.set_defaults(run="fleet_cmd:worker")

    copy = sub.add_parser("copy", help="copy runs between stores (a directory, a database)")
    copy.add_argument("src", metavar="SRC", help="a runs directory or a PostgreSQL DSN")
    copy.add_argument("dst", metavar="DST", help="the same; a missing directory is made")
    copy.add_argument(
        "--run",
        dest="run_ids",
        action="append",
        default=[],
        metavar="RUN",
        help="copy this run (repeat; default: every run)",
    )
    copy.add_argument("--schema", metavar="NAME", help=SCHEMA_HELP + ", for both")
    copy.add_argument("--src-schema", metavar="NAME", help="SRC's schema (default: --schema)")
    copy.add_argument("--dst-schema", metavar="NAME", help="DST's schema (default: --schema)")
    copy.set_defaults(run="copy_cmd:copy")


def _add_fork_commands(sub: Any) -> None:
    """What if: fork, replay, diff (docs/forks.md)."""
    fork = sub.add_parser("fork", help="a new run from a recorded one, changed at one step")
    _run_args(fork)
    fork.add_argument(
        "--at", type=_whole(1), metavar="N", help="the line to fork at (default: the whole run)"
    )
    edit = fork.add_mutually_exclusive_group()
    edit.add_argument(
        "--result", metavar="TEXT", help="at a tool_result: the result to use (- reads stdin)"
    )
    edit.add_argument(
        "--input",
        metavar="TEXT",
        help="a user message to add; at the run_start, the new prompt (- reads stdin)",
    )
    fork.add_argument("--model", metavar="M", help="the model the fork asks (default: the agent's)")
    fork.add_argument("--max-turns", type=_whole(1), metavar="N", help="at most N new turns")
    _fork_args(fork, "fork")
    fork.set_defaults(run="fork_cmd:fork")
    _add_replay_command(sub)
    diff = sub.add_parser("diff", help="how two runs differ: first divergence, differences")
    diff.add_argument("run_a", metavar="RUN_A", help="a run id, a unique prefix, or its log")
    diff.add_argument("run_b", metavar="RUN_B", help="the same, for the other run")
    diff.add_argument("--json", action="store_true", help="a JSON object (fields: docs/forks.md)")
    _store_args(diff, dir_option=True)
    diff.set_defaults(run="diff_cmd:diff")


def _add_replay_command(sub: Any) -> None:
    """`agentor replay` (docs/forks.md#replays)."""
    replay = sub.add_parser(
        "replay", help="ask a run's conversation again: another model, prompt or settings"
    )
    _run_args(replay)
    replay.add_argument(
        "--model", metavar="M", help="the model to ask (default: --agent's; without it, the run's)"
    )
    replay.add_argument(
        "--novel",
        choices=("error", "stop", "run"),
        default="error",
        help="a call with no recorded answer: answered with an error (default), the replay "
        "ended there as diverged, or run (needs --agent)",
    )
    replay.add_argument(
        "--match",
        choices=("strict", "fifo"),
        default="strict",
        help="recorded results answer calls of the same tool and arguments (default), or of "
        "the same tool in recorded order, whatever the arguments (drift reported)",
    )
    replay.add_argument(
        "--instructions",
        metavar="FILE",
        help="replace the recorded system message with this file's text (- reads stdin)",
    )
    replay.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="settings",
        help="a model setting for this replay (temperature=0, max_tokens=200; VALUE as JSON, "
        "else text)",
    )
    _fork_args(replay, "replay", required=False)
    replay.set_defaults(run="fork_cmd:replay")


def _add_ops_commands(sub: Any) -> None:
    """Operating a store for months (docs/operations.md): prune, pin, unpin, export, search."""
    prune = sub.add_parser("prune", help="delete old runs; held, awaiting, pinned runs stay")
    _store_positional(prune)
    prune.add_argument(
        "--older-than", metavar="AGE", help="runs last active longer ago: 30d, 12h, 90m, 45s, 2w"
    )
    prune.add_argument(
        "--keep-last", type=_whole(0), metavar="N", help="keep the N newest of the matched runs"
    )
    prune.add_argument("--status", metavar="S,...", help="only these: " + ", ".join(PRUNABLE))
    prune.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    prune.add_argument("--json", action="store_true", help="a JSON object (docs/operations.md)")
    prune.set_defaults(run="ops_cmd:prune")
    for verb, what in (("pin", "keep a run whatever prune is asked"), ("unpin", "undo a pin")):
        p = sub.add_parser(verb, help=what)
        _run_args(p)
        p.set_defaults(run=f"ops_cmd:{verb}")

    _add_export_command(sub)

    search = sub.add_parser("search", help="search every event of every run (exit 1: no hit)")
    _store_positional(search)
    search.add_argument(
        "query",
        metavar="QUERY",
        help="the text to find (without a capital, in any case), or with --regex a regex",
    )
    search.add_argument("--regex", action="store_true", help="QUERY is a regular expression")
    search.add_argument("--json", action="store_true", help="a JSON array (docs/operations.md)")
    search.set_defaults(run="search_cmd:search")
    search.__class__ = Intermixed  # [DIR|DSN] QUERY, with options anywhere


def _add_export_command(sub: Any) -> None:
    """export (a document, or OpenTelemetry spans) and trace (spans as runs are written)."""
    export = sub.add_parser("export", help="a run as Markdown, JSON, HTML, or spans (OTLP)")
    export.add_argument(
        "run_ids", nargs="*", metavar="RUN", help="a run id, a unique prefix of one, or its log"
    )
    _store_args(export, dir_option=True)
    export.add_argument(
        "--format",
        choices=("md", "json", "html", "otlp"),
        help="md, json or html (default: from -o's suffix, else md), or otlp: send spans",
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write FILE (default: stdout)")
    export.add_argument("--all", action="store_true", help="otlp: every run (see --status)")
    export.add_argument("--status", metavar="S,...", help="with --all: " + ", ".join(PRUNABLE))
    export.add_argument(
        "--older-than", metavar="AGE", help="with --all: runs last active longer ago: 30d, 12h"
    )
    _otlp_args(export)
    export.set_defaults(run="export_cmd:export")

    trace = sub.add_parser("trace", help="send each run's spans as they are written (OTLP)")
    _store_positional(trace)
    _otlp_args(trace)
    trace.add_argument(
        "--state", metavar="FILE", help="what was sent (default: DIR/.agentor-trace-sent)"
    )
    trace.add_argument(
        "--idle",
        type=_seconds,
        default=300.0,
        metavar="SECONDS",
        help="a run written without a lock (upstream Agentor) that is quiet this long ended",
    )
    trace.add_argument("--once", action="store_true", help="send what is there, then exit")
    trace.set_defaults(run="trace_cmd:trace")


def _otlp_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--endpoint",
        metavar="URL",
        help="the collector (http://127.0.0.1:6006; default: OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="K=V",
        help="send this header (repeat; added to OTEL_EXPORTER_OTLP_HEADERS)",
    )
    p.add_argument(
        "--content",
        action="store_true",
        help="include messages, tool arguments and results (off by default)",
    )


def _store_positional(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir_arg", nargs="?", metavar="DIR|DSN", help=STORE_HELP)
    p.add_argument("--store", metavar="DIR|DSN", help="the same as DIR|DSN")
    p.add_argument("--schema", metavar="NAME", help=SCHEMA_HELP)


def _fork_args(p: argparse.ArgumentParser, verb: str, required: bool = True) -> None:
    p.add_argument(
        "--agent",
        required=required,
        metavar="SPEC",
        help=f"the agent to {verb} with: path/to/file.py:name or package.module:name"
        + ("" if required else " (default: the run's recorded tools, none of them run)"),
    )
    p.add_argument("--fork-id", metavar="ID", help="the new run's id (default: a new uuid)")
    p.add_argument(
        "--any-agent",
        action="store_true",
        help=f"{verb} with the agent even if another agent name wrote the run",
    )


def _run_args(p: argparse.ArgumentParser, call: bool = False) -> None:
    p.add_argument("run_id", metavar="RUN", help="a run id, a unique prefix of one, or its log")
    if call:
        p.add_argument("call_id", nargs="?", metavar="CALL", help="a call id (default: all)")
    _store_args(p, dir_option=True)


def _store_args(p: argparse.ArgumentParser, dir_option: bool = False) -> None:
    p.add_argument("--store", metavar="DIR|DSN", help=STORE_HELP)
    if dir_option:
        p.add_argument("--dir", metavar="DIR", help="the runs directory (as --store DIR)")
    p.add_argument("--schema", metavar="NAME", help=SCHEMA_HELP)


def _agent_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--agent",
        required=True,
        action="append",
        metavar="SPEC",
        help=f"{what}: path/to/file.py:name or package.module:name",
    )


def _whole(least: int) -> Callable[[str], int]:
    """argparse's `type=` for a whole number of `least` or more."""
    floor = "0 or more" if least == 0 else f"at least {least}"

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be {floor}: {value}")
        return value

    return whole


def _age(text: str) -> Any:
    from agentor.durations import parse_age  # a small module: --help stays fast

    try:
        return parse_age(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _seconds(text: str) -> float:
    """A number of seconds, 0 or more (finite)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < float("inf"):  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 seconds or more: {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module, _, name = args.run.partition(":")
    command = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    from agentor.cli.lines import Refusal, say
    from agentor.cli.stores import close_all
    from agentor.errors import PostgresStoreError

    try:
        return int(command(args))
    except Refusal as exc:
        return say(args.command, exc)
    except PostgresStoreError as exc:  # one line, never the password
        return say(args.command, Refusal(str(exc)))
    except BrokenPipeError:  # `agentor ls | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return 0
    finally:
        close_all()
