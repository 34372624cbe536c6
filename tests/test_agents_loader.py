"""`--agent SPEC` loading (`agentor.agents`): files and modules, factories, one-line
errors, and matching agents to runs by name."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentor import Agentor
from agentor.agents import AgentSet, load_agent
from agentor.errors import AgentSpecError

ROOT = Path(__file__).resolve().parent.parent

AGENT_FILE = textwrap.dedent(
    """
    from agentor import Agentor

    agent = Agentor(name="Weather Agent", model="gpt-4o-mini")
    calls = 0

    def make_agent():
        global calls
        calls += 1
        return Agentor(name="Made", model="gpt-4o-mini")

    class Holder:
        inner = Agentor(name="Inner", model="gpt-4o-mini")

    number = 42

    def not_an_agent():
        return "hello"

    def needs_args(x):
        return x

    def explodes():
        raise RuntimeError("no\\nkey set")
    """
)


@pytest.fixture(autouse=True)
def restore_import_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """Loading puts directories on sys.path and modules in sys.modules: undo it after."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    temp = str(tmp_path_factory.getbasetemp())
    for name in set(sys.modules) - before:
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(temp):
            del sys.modules[name]


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "agents_here.py"
    path.write_text(AGENT_FILE)
    return path


def error_of(spec: str) -> str:
    with pytest.raises(AgentSpecError) as info:
        load_agent(spec)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"--agent {spec}: ")
    return info.value.cause


def test_a_file_spec_names_an_agentor(agent_file: Path) -> None:
    agent = load_agent(f"{agent_file}:agent")
    assert isinstance(agent, Agentor) and agent.name == "Weather Agent"
    # The same file again is not executed twice.
    assert load_agent(f"{agent_file}:agent") is agent


def test_a_zero_argument_callable_is_called(agent_file: Path) -> None:
    agent = load_agent(f"{agent_file}:make_agent")
    assert isinstance(agent, Agentor) and agent.name == "Made"


def test_a_dotted_attribute_is_followed(agent_file: Path) -> None:
    assert load_agent(f"{agent_file}:Holder.inner").name == "Inner"


def test_a_relative_file_path_works(agent_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(agent_file.parent)
    assert load_agent("agents_here.py:agent").name == "Weather Agent"


def test_a_file_may_import_its_sibling_modules(tmp_path: Path) -> None:
    (tmp_path / "sibling_models_x1.py").write_text("NAME = 'From Sibling'\n")
    (tmp_path / "main_agent_x1.py").write_text(
        "from agentor import Agentor\n"
        "from sibling_models_x1 import NAME\n"
        "agent = Agentor(name=NAME, model='gpt-4o-mini')\n"
    )
    assert load_agent(f"{tmp_path / 'main_agent_x1.py'}:agent").name == "From Sibling"


def test_a_module_spec_is_imported_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "pkg_agents_x2"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "weather.py").write_text(AGENT_FILE)
    monkeypatch.chdir(tmp_path)
    assert load_agent("pkg_agents_x2.weather:agent").name == "Weather Agent"
    assert load_agent("pkg_agents_x2.weather:make_agent").name == "Made"


def test_the_shipped_example_agent_loads() -> None:
    agent = load_agent(f"{ROOT / 'examples' / 'weather.py'}:agent")
    assert isinstance(agent, Agentor) and agent.name == "Weather Agent"


def test_errors_name_their_cause_in_one_line(
    agent_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert error_of("nope.py:agent") == "no such file: nope.py"
    (tmp_path / "adir.py").mkdir()
    assert error_of("adir.py:agent") == "is not a file: adir.py"
    assert error_of(f"{agent_file}:missing") == f"no attribute 'missing' in {agent_file}"
    assert error_of(f"{agent_file}:Holder.nothing") == "no attribute 'nothing' in Holder"
    assert error_of(f"{agent_file}:number") == "not an Agentor: number is a int"
    assert error_of(f"{agent_file}:not_an_agent") == "not an Agentor: not_an_agent() returned a str"
    assert error_of(f"{agent_file}:needs_args").startswith("calling needs_args() failed: TypeError")
    assert (
        error_of(f"{agent_file}:explodes") == "calling explodes() failed: RuntimeError: no key set"
    )
    assert error_of("no_such_module_x3:agent") == "no module named 'no_such_module_x3'"
    assert error_of("os.path:sep") == "not an Agentor: sep is a str"
    assert error_of("os:nothing_here") == "no attribute 'nothing_here' in module os"
    for spec in ("agent", "file.py", ":agent", "file.py:"):
        assert error_of(spec) == "expected path/to/file.py:name or package.module:name"


def test_import_errors_inside_the_agent_module(tmp_path: Path) -> None:
    (tmp_path / "broken_import.py").write_text("import not_a_real_module_x4\n")
    assert error_of(f"{tmp_path / 'broken_import.py'}:agent") == (
        "import error: ModuleNotFoundError: No module named 'not_a_real_module_x4'"
    )
    (tmp_path / "raises.py").write_text("raise ValueError('bad\\nconfig')\n")
    assert error_of(f"{tmp_path / 'raises.py'}:agent") == "import error: ValueError: bad config"
    (tmp_path / "syntax.py").write_text("agent = (\n")
    assert error_of(f"{tmp_path / 'syntax.py'}:agent").startswith("import error: SyntaxError: ")
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    assert error_of(f"{tmp_path / 'exits.py'}:agent") == "import error: SystemExit: 3"
    # A module found whose own import fails is an import error, not "no module".
    package = tmp_path / "pkg_broken_x5"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("import also_missing_x5\n")
    sys.path.insert(0, str(tmp_path))
    assert error_of("pkg_broken_x5.mod:agent") == (
        "import error: ModuleNotFoundError: No module named 'also_missing_x5'"
    )
    # And a failed file can be fixed and loaded again.
    (tmp_path / "raises.py").write_text(AGENT_FILE)
    assert load_agent(f"{tmp_path / 'raises.py'}:agent").name == "Weather Agent"


# -- AgentSet ------------------------------------------------------------------------------------


def test_a_single_agent_serves_the_runs_of_its_name_or_with_any_agent_every_run(
    agent_file: Path,
) -> None:
    agents = AgentSet.load([f"{agent_file}:agent"])
    assert len(agents) == 1
    assert agents.for_run("Weather Agent") is agents.agents[0]
    assert agents.for_run(None) is agents.agents[0]  # a run that names no agent
    assert agents.for_run("Some Other Agent") is None
    assert agents.missing_hint("Some Other Agent") == (
        "this run was written by Some Other Agent; --agent gives Weather Agent (start "
        "agentor-tui with --any-agent to resume it with that agent anyway)"
    )
    anyone = AgentSet.load([f"{agent_file}:agent"], any_agent=True)
    assert anyone.for_run("Some Other Agent") is anyone.agents[0]


def test_several_agents_are_matched_by_name(agent_file: Path) -> None:
    agents = AgentSet.load([f"{agent_file}:agent", f"{agent_file}:make_agent"])
    assert agents.names == ["Weather Agent", "Made"]
    assert agents.for_run("Made").name == "Made"  # type: ignore[union-attr]
    assert agents.for_run("Weather Agent").name == "Weather Agent"  # type: ignore[union-attr]
    assert agents.for_run("Travel Agent") is None
    hint = agents.missing_hint("Travel Agent")
    assert "'Travel Agent'" in hint and "--agent" in hint and "'Made'" in hint
    assert "\n" not in hint


def test_no_agent_hint_says_how_to_pass_one() -> None:
    agents = AgentSet.load([])
    assert len(agents) == 0 and agents.for_run("Weather Agent") is None
    hint = agents.missing_hint("Weather Agent")
    assert "--agent path/to/file.py:name" in hint and "'Weather Agent'" in hint
    assert "--agent" in agents.missing_hint(None)


def test_two_agents_with_one_name_are_refused(agent_file: Path, tmp_path: Path) -> None:
    other = tmp_path / "other_agents.py"
    other.write_text(AGENT_FILE)
    with pytest.raises(AgentSpecError, match="two agents are named 'Weather Agent'"):
        AgentSet.load([f"{agent_file}:agent", f"{other}:agent"])


def test_loading_an_agent_does_not_import_openai_or_textual(agent_file: Path) -> None:
    code = (
        "import sys\n"
        "from agentor.agents import AgentSet\n"
        f"AgentSet.load([{str(agent_file) + ':agent'!r}])\n"
        "print(sorted(m for m in ('openai', 'textual') if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
