"""`agentor.agents`: the `--agent SPEC` loader of the `agentor` command (textual-free;
the TUI loads its `--agent`s through it too)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentor.agents import agent_mismatch, load_agent
from tests.conftest import ROOT

AGENT_FILE = """
from agentor import Agentor
agent = Agentor(name="Weather Agent", model="gpt-4o-mini")
def make_agent():
    return Agentor(name="Made", model="gpt-4o-mini")
class Holder:
    inner = Agentor(name="Inner", model="gpt-4o-mini")
number = 42
def explodes():
    raise RuntimeError("no\\nkey set")
"""


@pytest.fixture(autouse=True)
def restore_import_state(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Loading puts directories on sys.path and modules in sys.modules: undo it after."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "spec_agents.py"
    path.write_text(AGENT_FILE)
    return path


def test_an_agent_resumes_only_runs_of_its_name(agent_file: Path) -> None:
    agent = load_agent(f"{agent_file}:agent")
    assert agent_mismatch(agent, "Weather Agent") is None
    assert agent_mismatch(agent, None) is None  # a run that names no agent
    assert agent_mismatch(agent, "Travel Agent") == (
        "this run was written by Travel Agent; --agent gives Weather Agent"
    )


def test_the_command_modules_import_no_textual_tui_or_openai() -> None:
    code = (
        "import sys, pkgutil, importlib, agentor.cli\n"
        "for m in pkgutil.iter_modules(agentor.cli.__path__):\n"
        "    importlib.import_module('agentor.cli.' + m.name)\n"
        "import agentor.literal\n"
        "print(sorted({n.split('.')[0] for n in sys.modules} & {'textual', 'tui', 'openai'}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
