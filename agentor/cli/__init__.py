"""`agentor`: the scriptable twin of the TUI's actions, for shells, CI jobs and chat-ops bots.

    agentor ls [DIR] [--status S] [--json]
    agentor show RUN [--dir DIR] [--json]
    agentor approve RUN [CALL] [--args JSON] [--note TEXT] [--by NAME] [--dir DIR]
    agentor reject RUN [CALL] --reason TEXT [--by NAME] [--dir DIR]
    agentor resume RUN --agent SPEC [--dir DIR] [--any-agent]

Exit status: 0 done, 1 refused (not found, already decided, locked, a run that failed), 2 a
usage error; every refusal and usage error is one line on stderr. Each subcommand group is a
module (runs_cmd: ls/show, decide_cmd: approve/reject, resume_cmd: resume), imported only when
its command runs: `agentor --help` loads neither the engine nor the model client.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from ..engine.statuses import (  # a module of names only: --help stays fast
    AWAITING_APPROVAL,
    COMPLETED,
    FAILED,
    INTERRUPTED,
    MAX_TURNS,
    RUNNING,
    UNREADABLE,
)

# What `agentor ls --status` takes: the statuses a listed run can have.
STATUSES = (COMPLETED, FAILED, MAX_TURNS, AWAITING_APPROVAL, RUNNING, INTERRUPTED, UNREADABLE)


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentor-tui")
    except PackageNotFoundError:  # a source tree that is not installed
        from agentor import __version__

        return __version__


def build_parser() -> Parser:
    p = Parser(
        prog="agentor",
        description="List, show, approve, reject and resume durable agentor runs.",
        epilog="Exit status: 0 done, 1 refused, 2 usage error. DIR defaults to runs.",
    )
    p.add_argument("--version", action="version", version=f"agentor {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    ls = sub.add_parser("ls", help="list runs: status, agent, model, age, pending approvals")
    ls.add_argument("dir", nargs="?", default="runs", metavar="DIR", help="default: runs")
    ls.add_argument("--status", choices=STATUSES, metavar="S", help=", ".join(STATUSES))
    ls.add_argument("--json", action="store_true", help="a JSON array (README: agentor ls)")
    ls.set_defaults(run="runs_cmd:ls")

    show = sub.add_parser("show", help="a run's summary, timeline and pending calls")
    _run_args(show)
    show.add_argument("--json", action="store_true", help="a JSON object (README: agentor show)")
    show.set_defaults(run="runs_cmd:show")

    approve = sub.add_parser("approve", help="approve a pending call (all, without CALL)")
    _run_args(approve, call=True)
    approve.add_argument("--args", metavar="JSON", help="run the call with these arguments")
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
    return p


def _run_args(p: argparse.ArgumentParser, call: bool = False) -> None:
    p.add_argument("run_id", metavar="RUN", help="a run id, a unique prefix of one, or its log")
    if call:
        p.add_argument("call_id", nargs="?", metavar="CALL", help="a call id (default: all)")
    p.add_argument("--dir", metavar="DIR", help="the runs directory (default: runs)")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module, _, name = args.run.partition(":")
    command = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    from .lines import Refusal, say

    try:
        return int(command(args))
    except Refusal as exc:
        return say(args.command, exc)
    except BrokenPipeError:  # `agentor ls | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return 0
