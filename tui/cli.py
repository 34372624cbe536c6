"""`agentor-tui [DIR] [--agent SPEC]... [--no-watch]`: argument parsing and `main()`."""

from __future__ import annotations

import argparse
import sys

from agentor import __version__


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentor-tui",
        description="Browse, follow and resume durable agentor runs in the terminal.",
    )
    p.add_argument("dir", nargs="?", default="runs", help="a FileStore directory (default: runs)")
    p.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="SPEC",
        help="agent to resume runs with: path/to/file.py:name or package.module:name",
    )
    p.add_argument("--no-watch", action="store_true", help="do not watch the directory")
    p.add_argument("--version", action="version", version=f"agentor-tui {__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    print("agentor-tui: the TUI is not built yet", file=sys.stderr)
    return 1
