"""`agentor.cli.agent_spec`: the `--agent SPEC` loader of the `agentor` command (textual-free;
the TUI's `--agent` is meant to load through it too)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentor import Agentor
from agentor.cli.agent_spec import AgentSpecError, agent_mismatch, load_agent
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


def cause(spec: str) -> str:
    with pytest.raises(AgentSpecError) as info:
        load_agent(spec)
    assert "\n" not in str(info.value) and str(info.value).startswith(f"--agent {spec}: ")
    return info.value.cause


def test_files_modules_factories_and_dotted_names_load(
    agent_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = load_agent(f"{agent_file}:agent")
    assert isinstance(agent, Agentor) and agent.name == "Weather Agent"
    assert load_agent(f"{agent_file}:agent") is agent, "a file is executed once"
    assert load_agent(f"{agent_file}:make_agent").name == "Made"
    assert load_agent(f"{agent_file}:Holder.inner").name == "Inner"
    package = tmp_path / "spec_pkg_x1"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "travel.py").write_text(AGENT_FILE)
    monkeypatch.chdir(tmp_path)
    assert load_agent("spec_pkg_x1.travel:make_agent").name == "Made"


def test_a_spec_that_cannot_load_says_why_in_one_line(agent_file: Path, tmp_path: Path) -> None:
    assert cause(f"{tmp_path / 'nope.py'}:agent") == f"no such file: {tmp_path / 'nope.py'}"
    assert cause(f"{agent_file}:missing") == f"no attribute 'missing' in {agent_file}"
    assert cause(f"{agent_file}:number") == "not an Agentor: number is a int"
    assert cause(f"{agent_file}:explodes") == "calling explodes() failed: RuntimeError: no key set"
    assert cause("no_such_module_x2:agent") == "no module named 'no_such_module_x2'"
    (tmp_path / "syntax_x3.py").write_text("agent = (\n")
    assert cause(f"{tmp_path / 'syntax_x3.py'}:agent").startswith("import error: SyntaxError: ")
    for spec in ("agent", "file.py", ":agent", "file.py:"):
        assert cause(spec) == "expected path/to/file.py:name or package.module:name"


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
