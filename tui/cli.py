"""`agentor-tui [DIR | RUN.jsonl | postgresql://... [--schema NAME]] [--agent SPEC]...
[--any-agent] [--by NAME] [--no-watch] [--collect [PORT]]`: the arguments and `main()`.
`agentor-tui serve ...` serves the same app to browsers (`serve`, `tui.serve`).

Imports stay lazy: `--version` and `--help` load neither the engine nor textual, and openai is
imported only when a resume makes a request.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentor.agents import AgentSet
    from agentor.collect.http import OtlpHttpServer
    from agentor.collect.receiver import Collector
    from agentor.sources.source import RunSource
    from tui.app import RunsApp

SERVE = "serve"
# How textual-serve runs each browser tab's app (`TEXTUAL_DRIVER` in the app's environment).
WEB_DRIVER = "textual.drivers.web_driver:WebDriver"


def _version() -> str:
    # The installed distribution's metadata is read in a few ms; importing `agentor` for its
    # __version__ would load pydantic and asyncio (~0.2 s). A test keeps the two equal.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentor-tui")
    except PackageNotFoundError:  # running from a source tree that is not installed
        from agentor._version import __version__

        return __version__


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        print(f"agentor-tui {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentor-tui",
        description="Browse, follow and resume durable agentor runs in the terminal.",
        epilog=f"agentor-tui {SERVE} [STORE] [--host HOST] [--port PORT] ...: the same app in "
        f"a browser (agentor-tui {SERVE} --help). A directory named {SERVE}: ./{SERVE}",
    )
    add_app_arguments(p)
    p.add_argument("--version", action=_VersionAction)
    return p


def add_app_arguments(p: argparse.ArgumentParser) -> None:
    """The store and the app's options: the terminal's, and the ones `serve` passes on to the
    app of each browser tab."""
    p.add_argument(
        "dir",
        nargs="?",
        default="runs",
        metavar="STORE",
        help="a FileStore directory (default: runs); one run's log, path/to/<run id>.jsonl: "
        "its directory is opened with that run selected; or a PostgreSQL database, "
        "postgresql://user@host/db or 'host=... dbname=...' (PostgresStore)",
    )
    p.add_argument(
        "--schema",
        metavar="NAME",
        help="with a PostgreSQL STORE: the schema its runs are in (default: agentor)",
    )
    p.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="SPEC",
        help="agent to resume runs with: path/to/file.py:name or package.module:name "
        "(an Agentor or a function returning one); repeat for several agents, matched to "
        "runs by agent name",
    )
    p.add_argument(
        "--any-agent",
        action="store_true",
        help="with a single --agent: resume runs written by any agent with it (by default a "
        "run is resumed only by an agent of the name that wrote it)",
    )
    p.add_argument(
        "--by",
        metavar="NAME",
        help="who the decisions on gated calls are recorded as (default: user@host)",
    )
    p.add_argument(
        "--no-watch",
        action="store_true",
        help="do not watch the store (ctrl+r reloads it)",
    )
    p.add_argument(
        "--collect",
        nargs="?",
        const=4318,
        type=_port,
        metavar="PORT",
        help="receive OTLP spans of any framework into STORE on 127.0.0.1:PORT (default "
        "4318; 0: a free port), as `agentor collect` does, and show their runs live",
    )
    p.add_argument(
        "--export-dir",
        metavar="DIR",
        help="where w writes a run's export (default: the current directory)",
    )


def _port(text: str) -> int:
    from agentor.access import port  # only when given: --help and --version load no agentor

    return port(text)


def fail(message: str, status: int = 2) -> int:
    """One line on stderr; exit status 2 unless told: a store or an option the app cannot use
    is a usage error, as argparse's own are (a receiver that cannot listen is refused: 1)."""
    print(f"agentor-tui: error: {message}", file=sys.stderr)
    return status


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [SERVE]:
        return serve(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        opened = open_app_arguments(args)
    except ValueError as exc:
        return fail(str(exc))

    receiver = None
    if getattr(args, "collect", None) is not None:
        try:
            receiver = start_receiver(args.dir, args.schema, args.collect)
        except ValueError as exc:
            return fail(str(exc), status=1)

    from tui.app import RunsApp  # textual loads only now

    if os.environ.get("TEXTUAL_DRIVER") == WEB_DRIVER:
        # A browser tab's app: the page's fonts have no control pictures (`␛` was an empty box).
        from agentor.literal import show_controls_as_escapes

        show_controls_as_escapes()
    app = RunsApp(
        source=opened.source,
        agents=opened.agents,
        watch=not args.no_watch,
        run_id=opened.run_id,
        by=args.by,
    )
    app.export_dir = args.export_dir
    if receiver is not None:
        app.source_label += f" ← OTLP {receiver.endpoint}"
    try:
        return run_app(app)
    finally:
        if receiver is not None:
            receiver.stop()


def start_receiver(spec: str, schema: str | None, port: int) -> Receiving:
    """`--collect`: an OTLP receiver writing into the store the app shows (agentor.collect), on
    loopback, in a thread of this process; ValueError when it cannot listen."""
    from agentor.backends import store_named
    from agentor.collect.http import OtlpHttpServer
    from agentor.collect.receiver import Collector
    from agentor.collect.spool import spool_for

    store = store_named(spec, schema or None, create=True)
    collector = Collector(store, spool_for(store))
    try:
        server = OtlpHttpServer(("127.0.0.1", port), collector)
    except OSError as exc:
        raise ValueError(f"--collect: cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    server.serve_in_thread()
    return Receiving(server, collector)


class Receiving:
    """A receiver running beside the app: its endpoint, and how to stop it. Runs no span came
    for a while are let go (interrupted) by a thread of its own, as `agentor collect` does."""

    def __init__(self, server: OtlpHttpServer, collector: Collector) -> None:
        self.server = server
        self.collector = collector
        self.endpoint = server.endpoint
        self._stopping = threading.Event()
        self._quiet = threading.Thread(target=self._let_go_quiet_runs, daemon=True)
        self._quiet.start()

    def _let_go_quiet_runs(self) -> None:
        while not self._stopping.wait(min(self.collector.idle / 4, 30.0)):
            self.collector.let_go_idle()

    def stop(self) -> None:
        self._stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.collector.close()


def serve(argv: list[str]) -> int:
    """`agentor-tui serve [STORE] [app options] [--host] [--port] [--token] [--public-url]`.
    The app's arguments are checked here, once, so a bad one is told on this terminal rather
    than in each browser tab; each tab's app then runs with them (`tui.serve`)."""
    from tui.serve.options import add_serve_arguments, app_argv, serve_token

    parser = argparse.ArgumentParser(
        prog=f"agentor-tui {SERVE}",
        description="Serve the app to browsers: each tab runs its own app (textual-serve).",
        allow_abbrev=False,
    )
    add_app_arguments(parser)
    add_serve_arguments(parser)
    args = parser.parse_args(argv)
    if args.collect is not None:  # each tab runs its own app: they cannot share one port
        return fail("--collect is for the terminal app; beside serve, run `agentor collect STORE`")
    try:
        token = serve_token(args)
    except ValueError as exc:
        return fail(str(exc))
    try:
        from tui.serve.serving import Serving
    except ImportError as exc:
        return fail(f"{SERVE} needs textual-serve: pip install 'agentor-tui[serve]' ({exc})")
    serving = Serving.from_arguments(args, token, app_argv(argv))
    try:
        opened = open_app_arguments(args)
        opened.source.close()  # it was opened to be checked; each tab opens its own
        serving.listen()
    except ValueError as exc:
        return fail(str(exc))
    return serving.run()


@dataclass
class AppArguments:
    """What the app's arguments name, checked and opened."""

    source: RunSource
    agents: AgentSet
    run_id: str | None


def open_app_arguments(args: argparse.Namespace) -> AppArguments:
    """Check the app's arguments and open what they name: ValueError saying in one line what is
    wrong with them. Sets `args.schema` to its default for a database."""
    from agentor.backends import backend_for  # no driver: a spec is told by its form
    from agentor.errors import StoreSpecError

    backend = backend_for(args.dir)
    local = backend.local_directory(args.dir)  # None: a store elsewhere (a database)
    spec, run_id = (args.dir if local is None else str(local)), None
    if local is None:
        if args.schema is None:
            args.schema = backend.default_schema
    elif args.schema is not None:
        try:
            backend.check_schema(args.dir, args.schema)
        except StoreSpecError as exc:
            raise ValueError(str(exc)) from None
    elif not local.is_dir():
        if not local.exists():
            raise ValueError(f"no such directory: {args.dir}")
        try:
            directory, run_id = run_log_target(local)
        except ValueError as exc:
            raise ValueError(f"not a run log: {args.dir}: {exc}") from None
        spec = str(directory)

    if args.export_dir is not None and not Path(args.export_dir).is_dir():
        raise ValueError(f"--export-dir: no such directory: {args.export_dir}")
    if args.by is not None and not args.by.strip():
        raise ValueError("--by names who decides; give a non-empty name or leave it out")
    if args.any_agent and len(args.agent) != 1:
        raise ValueError(
            "--any-agent needs exactly one --agent (the agent to resume every run with)"
        )

    from agentor.agents import AgentSet
    from agentor.errors import AgentSpecError

    try:
        agents = AgentSet.load(args.agent, any_agent=args.any_agent)
    except AgentSpecError as exc:
        raise ValueError(str(exc)) from None

    source = open_app_source(spec, args.schema)
    return AppArguments(source, agents, run_id)


def open_app_source(spec: str, schema: str | None) -> RunSource:
    """The source of the store `spec` names (`agentor.backends.open_source`); ValueError saying
    in one line why it cannot be used (a bad DSN or schema name, no server, refused credentials,
    a newer schema, a schema that holds no store (none is made), no driver; never with the
    password): the app's bad input, exit status 2."""
    from agentor.backends import open_source
    from agentor.errors import PostgresStoreError, StoreSpecError

    try:
        return open_source(spec, schema)
    except ImportError as exc:  # a database, and no driver to reach it: it says what to install
        raise ValueError(str(exc)) from None
    except (StoreSpecError, PostgresStoreError) as exc:
        raise ValueError(str(exc)) from None
    except OSError as exc:  # the directory went since it was looked at
        raise ValueError(f"{exc.strerror}: {exc.filename}") from None


def run_app(app: RunsApp) -> int:
    """Run the app; its exit status.

    `App.run` would end with `asyncio.run`'s clean-up, which waits for every task and thread:
    after a resume was abandoned (a second `q` while a tool's thread runs, which nothing can
    stop), that is until the tool returns. So the loop is run here, and an abandoned resume
    ends the process at once (`os._exit`, once the terminal is restored): the kernel frees the
    run's lock, and the tool's result is lost, as the warning says."""
    import asyncio

    with asyncio.Runner() as runner:
        try:
            warning = runner.run(app.run_async())
        except KeyboardInterrupt:  # SIGINT from outside (a key ^C reaches the app as a key)
            warning = app.resumer.abandon() if app.resumer.running else None
            leave(warning, 130)
            return 130
        leave(warning, app.return_code or 0)
    return app.return_code or 0


def leave(warning: str | None, status: int) -> None:
    """With a warning (an abandoned resume): print it, and end the process now."""
    if warning is None:
        return
    print(f"agentor-tui: warning: {warning}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(status)


def run_log_target(path: Path) -> tuple[Path, str]:
    """The directory and run id of one run's log, `path/to/<run id>.jsonl` (a symlink to one
    is taken for the file it points to); ValueError saying why another file is not one."""
    from agentor.engine.store.run_ids import RUN_ID_RULE, SUFFIX, run_id_of
    from agentor.sources.logfile import not_a_log

    real = path.resolve()
    if not real.name.endswith(SUFFIX):
        raise ValueError(f"a run log is named <run id>{SUFFIX}, in a FileStore directory")
    run_id = run_id_of(real.name)
    if run_id is None:
        raise ValueError(f"{real.name.removesuffix(SUFFIX)!r} is not a run id ({RUN_ID_RULE})")
    why = not_a_log(real)
    if why is not None:
        raise ValueError(why)
    return real.parent, run_id
