"""The agent a command resumes runs with, loaded from an `--agent` spec.

A spec is `path/to/file.py:name` or `package.module:name`; `name` (dots allowed, for an
attribute of an attribute) is an `Agentor` or a zero-argument callable returning one. Loading
runs the module's code, as `python path/to/file.py` would, so its imports of sibling modules
work: the file's directory (or, for a module, the current directory) goes on `sys.path`.

Textual-free, for the `agentor` command and the TUI alike.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from agentor.agent import Agentor


class AgentSpecError(ValueError):
    """An `--agent` spec that cannot be loaded; the message is one line naming the cause."""

    def __init__(self, spec: str, cause: str) -> None:
        self.spec = spec
        self.cause = cause
        super().__init__(f"--agent {spec}: {cause}")


def load_agent(spec: str) -> Agentor:
    """The `Agentor` a spec names. Raises `AgentSpecError`."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise AgentSpecError(spec, "expected path/to/file.py:name or package.module:name")
    if target.endswith(".py") or os.sep in target or "/" in target:
        module, where = _load_file(spec, Path(target)), target
    else:
        module, where = _load_module(spec, target), f"module {target}"
    value: Any = module
    for i, part in enumerate(attr.split(".")):
        try:
            value = getattr(value, part)
        except AttributeError:
            owner = where if i == 0 else ".".join(attr.split(".")[:i])
            raise AgentSpecError(spec, f"no attribute {part!r} in {owner}") from None
        except Exception as exc:
            raise AgentSpecError(spec, f"reading {attr}: {_one_line(exc)}") from None
    if isinstance(value, Agentor):
        return value
    if not callable(value):
        raise AgentSpecError(spec, f"not an Agentor: {attr} is a {type(value).__name__}")
    try:
        made = value()
    except Exception as exc:
        raise AgentSpecError(spec, f"calling {attr}() failed: {_one_line(exc)}") from None
    if not isinstance(made, Agentor):
        raise AgentSpecError(spec, f"not an Agentor: {attr}() returned a {type(made).__name__}")
    return made


def _load_file(spec: str, path: Path) -> ModuleType:
    if not path.is_file():
        cause = "is not a file" if path.exists() else "no such file"
        raise AgentSpecError(spec, f"{cause}: {path}")
    path = path.resolve()
    name = f"_agentor_agent_{path.stem}_{abs(hash(str(path))):x}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise AgentSpecError(spec, f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    _on_path(str(path.parent))
    sys.modules[name] = module  # as an import does: dataclasses and pickling look it up
    try:
        module_spec.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise AgentSpecError(spec, f"import error: {_one_line(exc)}") from None
    return module


def _load_module(spec: str, target: str) -> ModuleType:
    _on_path(os.getcwd())
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and (target == exc.name or target.startswith(exc.name + ".")):
            raise AgentSpecError(spec, f"no module named {exc.name!r}") from None
        raise AgentSpecError(spec, f"import error: {_one_line(exc)}") from None
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise AgentSpecError(spec, f"import error: {_one_line(exc)}") from None


def _on_path(directory: str) -> None:
    if directory not in sys.path:
        sys.path.insert(0, directory)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, SyntaxError) and exc.lineno:
        text = f"{exc.msg} ({Path(exc.filename or '?').name}, line {exc.lineno})"
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def agent_mismatch(agent: Agentor, run_agent: str | None) -> str | None:
    """Why `agent` should not resume a run written by the agent named `run_agent` (the new
    segment would be recorded under another agent's name, tools and model); None if it may."""
    if run_agent is None or run_agent == agent.name:
        return None
    return f"this run was written by {run_agent}; --agent gives {agent.name}"
