"""docs/architecture.md says what the code is: its contracts are pyproject.toml's import-linter
contracts (made from them by scripts/architecture_contracts.py, and current), its trees name
every package and root module of `agentor/` and `tui/` and nothing that is gone; and a rule a
contract enforces is not repeated in module docstrings ("Never imports textual").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from scripts.architecture_contracts import PAGE, contracts_markdown, current_block, layer_rows
from tests.conftest import ROOT

# A tree entry: `cli/`, `agent.py`, or several modules on one line (`models.py, tools.py`);
# descriptions continue on lines indented past any entry's.
ENTRY = re.compile(r"^(?P<indent> {0,10})(?P<names>[\w.]+(?:/|\.py)(?:, [\w.]+\.py)*)(?:\s|$)")


def tree_paths(page: str, root: str) -> set[str]:
    """The paths the page's tree of `root/` names (`agentor/engine/store/pg`, `tui/cli.py`)."""
    block = re.search(rf"```text\n({root}/\n.*?)```", page, re.S)
    assert block, f"no tree of {root}/ on the page"
    found, parents = set(), []
    for line in block.group(1).splitlines():
        entry = ENTRY.match(line)
        if not entry:
            continue
        depth = len(entry["indent"]) // 2
        del parents[depth:]
        for name in entry["names"].split(", "):
            found.add("/".join([*parents, name.rstrip("/")]))
        if entry["names"].endswith("/"):
            parents.append(entry["names"].rstrip("/"))
    return found


def packages_and_root_modules(root: str) -> set[str]:
    """Every package under `root/` (at any depth) and every module directly in it."""
    base = ROOT / root
    packages = {
        p.parent.relative_to(ROOT).as_posix() for p in base.rglob("__init__.py") if p.parent != base
    }
    modules = {p.relative_to(ROOT).as_posix() for p in base.glob("*.py") if p.name != "__init__.py"}
    return packages | modules


def test_the_trees_name_every_package_and_root_module_and_nothing_that_is_gone() -> None:
    page = PAGE.read_text()
    for root in ("agentor", "tui"):
        named = tree_paths(page, root)
        missing = sorted(packages_and_root_modules(root) - named)
        assert not missing, f"the tree of {root}/ leaves out: {', '.join(missing)}"
        gone = sorted(p for p in named - {root} if not (ROOT / p).exists())
        assert not gone, f"the tree of {root}/ names what is not there: {', '.join(gone)}"


def test_the_tree_reader_sees_nesting_and_lists() -> None:
    page = "\n".join(
        [
            "```text",
            "agentor/",
            "  cli/          the command",
            "                cli/ and more: a description, not an entry",
            "  engine/",
            "    store/",
            "      pg/",
            "    a.py, b.py",
            "  errors.py",
            "```",
        ]
    )
    assert tree_paths(page, "agentor") == {
        "agentor",
        "agentor/cli",
        "agentor/engine",
        "agentor/engine/store",
        "agentor/engine/store/pg",
        "agentor/engine/a.py",
        "agentor/engine/b.py",
        "agentor/errors.py",
    }


def test_the_contracts_on_the_page_are_pyprojects() -> None:
    block = current_block(PAGE.read_text())
    assert block, f"{PAGE.name} has no block of contracts made from pyproject.toml"
    assert block == contracts_markdown(), (
        f"{PAGE.name}'s contracts are not pyproject.toml's: "
        "run `python scripts/architecture_contracts.py`"
    )


def test_a_changed_contract_makes_the_page_stale(tmp_path: Path) -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    # The page's old mistake: `sources` and `ops` above `agent`, so allowed to import it.
    moved = pyproject.replace(
        '    "agent",\n    "experiments",\n    "session",\n    "telemetry | collect",\n'
        '    "backends",\n    "sources",\n    "ops",\n',
        '    "experiments",\n    "session",\n    "telemetry | collect",\n    "backends",\n'
        '    "sources",\n    "ops",\n    "agent",\n',
    )
    assert moved != pyproject
    (tmp_path / "pyproject.toml").write_text(moved)
    assert contracts_markdown(tmp_path / "pyproject.toml") != current_block(PAGE.read_text())


def test_the_layer_rows_follow_import_linter_notation() -> None:
    contract = {"containers": ["pkg"], "layers": ["top", "a | b", "c : d", "low"]}
    assert layer_rows(contract) == [
        (["pkg.top"], False, ["pkg.a", "pkg.b", "pkg.c", "pkg.d", "pkg.low"]),
        (["pkg.a", "pkg.b"], False, ["pkg.c", "pkg.d", "pkg.low"]),
        (["pkg.c", "pkg.d"], True, ["pkg.low"]),
        (["pkg.low"], False, []),
    ]


def test_no_module_docstring_repeats_that_it_never_imports_textual() -> None:
    """A contract (agentor) and tests/test_imports.py (tui.text) enforce it; said in each
    module it is one more sentence to keep true by hand."""
    saying = []
    for path in sorted([*(ROOT / "agentor").rglob("*.py"), *(ROOT / "tui").rglob("*.py")]):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if re.search(r"never\s+imports\s+textual", doc, re.I):
            saying.append(path.relative_to(ROOT).as_posix())
    assert not saying, f"{len(saying)} docstrings say it: {', '.join(saying)}"
