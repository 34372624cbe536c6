"""Every module or file the code's comments and docstrings, the manual (docs/*.md) and the
README name exists: a renamed or removed module leaves no pointer behind it.

A reference is either a dotted name starting with `agentor.` or `tui.` (`agentor.engine.loop`,
`agentor.engine.fork_mark.ForkMark`: a module, then attributes it has) or a path to a Python
file (`agentor/engine/loop.py`, `store/file.py`, `tests/test_store.py`), which resolves when
a file of the repository ends with it. Comments are read with `tokenize`, docstrings with
`ast`; code itself is left to the interpreter and the import contracts.

A module of the packages is named by its dotted name, the name it is imported by: a path to one
(`engine/loop.py`) in the packages' comments and docstrings, the manual or the README fails. A
path stays the way to name a test, a script or a bench (files run, not imported), and a tree of
files in the manual (a fenced block) lists them by name.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.conftest import ROOT

CODE_DIRS = ("agentor", "tui", "tests", "scripts", "examples", "bench")
PACKAGES = ("agentor", "tui")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# `agentor.engine.loop`, `tui.widgets.timeline.Timeline`; not part of a longer word or path
# (`~/.agentor.toml`, `example.agentor.dev`).
DOTTED = re.compile(r"(?<![\w./-])(?:agentor|tui)(?:\.[A-Za-z_]\w*)+")
# `engine/loop.py`, `tests/test_store.py`, `loop.py`; a URL or an absolute path is not the
# repository's.
PATH = re.compile(r"(?<![\w./:~-])(?:[\w.-]+/)*\w+\.py\b")
# `tui.md`, `agentor.toml`: a file's name, not a module's.
FILE_SUFFIXES = {"md", "py", "toml", "tcss", "json", "jsonl", "svg", "html", "css", "txt"}

# Names that stand for the reader's own file or name, not the repository's.
PLACEHOLDERS = {
    "path/to/file.py",
    "path/to/examples/weather.py",
    "tests/test_x.py",
    "my_agents.py",
    "travel.py",
    "agentor.NAME",
}


@dataclass(frozen=True)
class Reference:
    where: str  # file:line
    name: str


def comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text()
    found = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    ]
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                value = body[0].value.value
                if isinstance(value, str):
                    found.append((body[0].lineno, value))
    return found


def unfenced_lines(page: Path) -> list[tuple[int, str]]:
    """(line, text) of a page's lines outside its fenced blocks (a tree of files, a shell
    session, a sample)."""
    found, fenced = [], False
    for number, line in enumerate(page.read_text().splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            found.append((number, line))
    return found


def references_in(where: Path, chunks: list[tuple[int, str]]) -> list[Reference]:
    refs = []
    for first_line, text in chunks:
        for offset, line in enumerate(text.splitlines()):
            place = f"{where.relative_to(ROOT)}:{first_line + offset}"
            refs += [
                Reference(place, m.group())
                for m in DOTTED.finditer(line)
                if m.group().rsplit(".", 1)[1] not in FILE_SUFFIXES
            ]
            refs += [Reference(place, m.group()) for m in PATH.finditer(line)]
    return refs


def all_references() -> list[Reference]:
    refs = []
    for folder in CODE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            refs += references_in(path, comments_and_docstrings(path))
    for page in PAGES:
        refs += references_in(page, list(enumerate(page.read_text().splitlines(), start=1)))
    return refs


@cache
def repository_files() -> tuple[str, ...]:
    skip = {"node_modules", "site", "runs"}  # and every hidden folder: .git, the venvs
    return tuple(
        "/" + p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("*.py")
        if not any(part in skip or part.startswith(".") for part in p.relative_to(ROOT).parts)
    )


# Files whose path references to modules are left for now (while other branches change them;
# the list only shrinks). None is left: every module is named by its dotted name.
LEFT_FOR_NOW: frozenset[str] = frozenset()


def path_references_to_modules() -> list[Reference]:
    """References by path to a module of the packages (`engine/loop.py`, `agentor/agent.py`,
    `spans.py`) in the packages' comments and docstrings, the manual outside its fenced blocks
    and the README."""
    refs = []
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            refs += references_in(path, comments_and_docstrings(path))
    for page in PAGES:
        refs += references_in(page, unfenced_lines(page))
    return [
        r
        for r in refs
        if r.name.endswith(".py")
        and r.name not in PLACEHOLDERS
        and r.where.partition(":")[0] not in LEFT_FOR_NOW
        and names_a_module(r.name)
    ]


def names_a_module(path: str) -> bool:
    """Whether a path names a module of the packages: every file it may name is one."""
    files = [f for f in repository_files() if f.endswith("/" + path)]
    return bool(files) and all(f.startswith(("/agentor/", "/tui/")) for f in files)


@cache
def span_attributes() -> frozenset[str]:
    """The `agentor.*` attribute keys the spans carry (`agentor.run_id`): named in
    agentor/telemetry/ as string constants, so a page naming one that is gone still fails."""
    return frozenset(
        node.value
        for path in (ROOT / "agentor" / "telemetry").glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("agentor.")
    )


def module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def resolves(name: str) -> bool:
    if name in PLACEHOLDERS or name in span_attributes():
        return True
    if name.endswith(".py"):
        return any(f.endswith("/" + name) for f in repository_files())
    parts = name.split(".")
    # The longest prefix that is a module; what follows must be attributes it has.
    for cut in range(len(parts), 0, -1):
        if module_file(".".join(parts[:cut])) is None:
            continue
        if parts[cut - 1] == "__main__":  # importing it would run it
            return cut == len(parts)
        obj: object = importlib.import_module(".".join(parts[:cut]))
        for attribute in parts[cut:]:
            if not hasattr(obj, attribute):
                return False
            obj = getattr(obj, attribute)
        return True
    return False


def test_every_module_and_file_named_in_comments_docstrings_and_docs_exists() -> None:
    refs = all_references()
    assert len(refs) > 100  # the scan reads what it should
    stale = [f"{r.where}: {r.name}" for r in refs if not resolves(r.name)]
    assert not stale, f"{len(stale)} references to nothing:\n" + "\n".join(stale)


def test_a_stale_name_is_caught_whatever_its_form() -> None:
    for gone in (
        "agentor.engine.gating",
        "agentor.engine.loop.NoSuchThing",
        "engine/gating.py",
        "tui/widgets/no_such_widget.py",
    ):
        assert not resolves(gone), gone
    for there in (
        "agentor.engine.loop",
        "agentor.Agentor",
        "agentor.engine.events.Event",
        "engine/loop.py",
        "agentor/engine/loop.py",
        "tests/conftest.py",
    ):
        assert resolves(there), there


def test_comments_docstrings_and_docs_name_a_module_by_its_dotted_name() -> None:
    pathy = [f"{r.where}: {r.name}" for r in path_references_to_modules()]
    assert not pathy, f"{len(pathy)} modules named by path, not dotted name:\n" + "\n".join(pathy)


def test_a_path_to_a_module_is_told_from_a_path_to_a_test_or_a_script() -> None:
    for module in ("engine/loop.py", "agentor/telemetry/inprocess.py", "spans.py", "tui/cli.py"):
        assert names_a_module(module), module
    for other in ("tests/test_store.py", "scripts/gen_docs.py", "bench/harness.py", "gone.py"):
        assert not names_a_module(other), other
