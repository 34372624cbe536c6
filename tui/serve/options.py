"""The command line of `agentor-tui serve` beyond the app's own arguments, and the rules for
its values. argparse and the standard library only: `agentor-tui serve --help` and a refused
option load no web server."""

from __future__ import annotations

import argparse
import os

from agentor.access import TOKEN_RULE, checked_token, is_loopback, token_problem

__all__ = ["TOKEN_ENV", "TOKEN_RULE", "add_serve_arguments", "is_loopback", "token_problem"]

TOKEN_ENV = "AGENTOR_TUI_TOKEN"


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default: 127.0.0.1, this machine only); any other "
        "needs a token",
    )
    p.add_argument(
        "--port", type=int, default=8000, help="the port to listen on (default: 8000; 0: any)"
    )
    p.add_argument(
        "--token",
        help=f"the token a browser must bring (?token=...), {TOKEN_RULE}; default: "
        f"${TOKEN_ENV}, which other users cannot read in the process list as they can this",
    )
    p.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers use, when a proxy stands in front (e.g. https://runs.example)",
    )


def app_argv(argv: list[str]) -> list[str]:
    """`argv` without the options above: the app's arguments, as they were written, for the
    app of each tab."""
    serve_only = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    add_serve_arguments(serve_only)
    return serve_only.parse_known_args(argv)[1]


def serve_token(args: argparse.Namespace) -> str | None:
    """Check `serve`'s own options; the token (None: none given). ValueError saying in one line
    what is wrong, never with the token. Takes the token out of the environment, which every
    tab's app inherits."""
    from_env = os.environ.pop(TOKEN_ENV, None)
    token, named = (args.token, "--token") if args.token is not None else (from_env, TOKEN_ENV)
    why = " and textual-serve has no authentication"
    checked_token(token, named, args.host, TOKEN_ENV, why=why, verb="serve")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port {args.port}: a port is from 0 to 65535")
    if args.public_url is not None and not args.public_url.startswith(("http://", "https://")):
        raise ValueError(f"--public-url {args.public_url}: an address starts with https://")
    return token
