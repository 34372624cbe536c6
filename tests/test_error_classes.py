"""Every error agentor lets reach its caller is an `AgentorError`, defined in `agentor.errors` and
exported from `agentor`; an exception class that is internal control flow (caught again inside
agentor) is underscore-named, so nobody mistakes it for something to catch.

The one exemption is the `agentor` command's own `Refusal` family (agentor.cli.lines): each
carries an exit status (1, or 2 for a usage error) from a command to `agentor.cli.main`, which
prints its one line and exits with it. It never leaves the command, as argparse's own
`ArgumentError` never leaves a parser; the test holds every class under agentor/cli/ to it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import agentor
from agentor.cli.lines import Refusal
from agentor.errors import AgentorError
from tests.conftest import ROOT


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of agentor, by `module.Name`."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(agentor.__path__, "agentor."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_exception_class_is_an_agentor_error_or_underscore_named() -> None:
    classes = exception_classes()
    assert len(classes) > 30  # the walk found the modules (agentor.errors alone holds more)
    stray = []
    for where, cls in classes.items():
        if where.startswith("agentor.cli."):
            if not issubclass(cls, Refusal):
                stray.append(where)
        elif not (issubclass(cls, AgentorError) or cls.__name__.startswith("_")):
            stray.append(where)
    assert stray == []


def test_every_agentor_error_is_defined_in_agentor_errors_and_exported() -> None:
    public = {
        where: cls for where, cls in exception_classes().items() if issubclass(cls, AgentorError)
    }
    elsewhere = [where for where in public if not where.startswith("agentor.errors.")]
    assert elsewhere == []
    for cls in public.values():
        assert getattr(agentor, cls.__name__) is cls, cls.__name__
        assert cls.__name__ in agentor.__all__


def test_the_errors_that_reach_user_code_keep_their_builtin_bases() -> None:
    assert issubclass(agentor.TelemetryUnavailableError, ImportError)
    for name in ("MCPToolError", "MCPServerError", "TelemetryUnavailableError"):
        assert issubclass(getattr(agentor, name), AgentorError), name


def test_tracing_without_opentelemetry_raises_an_agentor_error_that_is_an_import_error() -> None:
    """In a child process where OpenTelemetry cannot be imported, as on an install without the
    extra: `Agentor(tracing=True)` is refused with one line saying how to install it."""
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if not installed: importing it fails\n"
        "from agentor import Agentor, AgentorError\n"
        "from agentor.testing import ScriptedModel\n"
        "try:\n"
        "    Agentor('x', model=ScriptedModel([]), tracing=True)\n"
        "except AgentorError as exc:\n"
        "    print(type(exc).__name__, isinstance(exc, ImportError), exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.stderr == ""
    assert done.stdout == (
        "TelemetryUnavailableError True "
        "OpenTelemetry is not installed: pip install 'agentor-tui[otel]'\n"
    )
