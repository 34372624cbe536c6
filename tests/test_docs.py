"""The README and the manual (docs/, an mkdocs site) say what is true, and keep saying it:

- the site builds with `mkdocs build --strict` (a broken link, anchor or API reference fails),
  with the command reference made from the argument parsers and the API reference from
  `agentor.__all__`;
- the pages hold those references as files too (scripts/gen_docs.py writes them), current;
- every ```python block of README.md and docs/ runs (tests/test_docs_samples.py); a block
  that is deliberately a fragment says so with `<!-- sample: fragment -->` on the line before
  it, and fragments stay rare;
- what they import is public: `agentor`, `agentor.ops`, `agentor.testing`, `agentor.errors`
  and upstream Agentor's own paths;
- the README stays a front page, and every test a page cites exists (the Guarantees page's
  rows each cite one).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import agentor
import agentor.errors
import agentor.ops
from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
FRAGMENT = "<!-- sample: fragment -->"

# What a sample may import: the public faces, and upstream Agentor's paths kept for its users.
PUBLIC_MODULES = {
    "agentor": set(agentor.__all__),
    "agentor.ops": set(agentor.ops.__all__),
    "agentor.testing": {"ScriptedModel", "tool_call"},
    "agentor.errors": {n for n in dir(agentor.errors) if n.endswith("Error")},
    "agentor.engine.store": {"FileStore", "MemoryStore", "Store"},
    "agentor.engine.events": None,  # any of its names: upstream's import path
    "agentor.engine.tools": None,
    "agentor.engine.models": None,
}


@dataclass(frozen=True)
class Sample:
    page: Path
    line: int
    code: str
    fragment: bool

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def python_blocks(page: Path) -> list[Sample]:
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            start = i + 1
            end = next(j for j in range(start, len(lines)) if lines[j].strip() == "```")
            fragment = i > 0 and lines[i - 1].strip() == FRAGMENT
            found.append(Sample(page, start, "\n".join(lines[start:end]) + "\n", fragment))
            i = end
        i += 1
    return found


SAMPLES = [s for page in [README, *PAGES] for s in python_blocks(page)]


# -- the site ------------------------------------------------------------------------------------


def test_the_manual_builds_strict_with_the_references_made_from_the_code(tmp_path: Path) -> None:
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]

    from agentor.cli import build_parser

    commands = next(a for a in build_parser()._actions if getattr(a, "choices", None))
    cli_page = (site / "cli" / "index.html").read_text()
    for name, parser in commands.choices.items():
        assert f'id="agentor-{name}"' in cli_page, name
        for action in parser._actions:  # every option of every command, as the parser has it
            for flag in action.option_strings:
                assert flag in cli_page, (name, flag)
    assert 'id="agentor-tui"' in cli_page and "--export-dir" in cli_page

    api_page = (site / "api" / "index.html").read_text()
    errors = {n for n in agentor.__all__ if n.endswith("Error")}
    for name in set(agentor.__all__) - errors:
        assert f'id="agentor.{name}"' in api_page, name
    errors_page = (site / "errors" / "index.html").read_text()
    for name in errors:
        assert f'id="agentor.errors.{name}"' in errors_page, name
    ops_page = (site / "api-ops" / "index.html").read_text()
    for name in agentor.ops.__all__:
        assert f'id="agentor.ops.{name}"' in ops_page, name
    assert (site / "screenshots" / "detail.svg").read_bytes() == (
        ROOT / "screenshots" / "detail.svg"
    ).read_bytes()


def test_the_references_written_in_the_pages_are_current_and_complete() -> None:
    """docs/cli.md, api.md, api-ops.md, api-testing.md and errors.md hold their references as
    files (read on GitHub), made by scripts/gen_docs.py: each page is what it would write now."""
    from scripts import gen_docs

    for name in gen_docs.PAGES:
        text = (DOCS / name).read_text()
        assert gen_docs.current(text) == text, f"docs/{name}: run python scripts/gen_docs.py"

    from agentor.cli import build_parser

    cli_page = (DOCS / "cli.md").read_text()
    commands = next(a for a in build_parser()._actions if getattr(a, "choices", None))
    for name, parser in commands.choices.items():
        assert f"\n### agentor {name}\n" in cli_page, name
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in cli_page, (name, flag)
    assert "\n## agentor-tui\n" in cli_page and "--export-dir" in cli_page
    errors = {n for n in agentor.__all__ if n.endswith("Error")}
    api_page = (DOCS / "api.md").read_text()
    for name in set(agentor.__all__) - errors:
        assert f'<a id="agentor.{name}"></a>' in api_page, name
    errors_page = (DOCS / "errors.md").read_text()
    for name in errors:
        assert f'<a id="agentor.errors.{name}"></a>' in errors_page, name
    ops_page = (DOCS / "api-ops.md").read_text()
    for name in agentor.ops.__all__:
        assert f'<a id="agentor.ops.{name}"></a>' in ops_page, name
    assert '<a id="agentor.testing.ScriptedModel"></a>' in (DOCS / "api-testing.md").read_text()


def test_fragments_are_rare() -> None:
    fragments = [s.name for s in SAMPLES if s.fragment]
    assert len(fragments) <= 2, fragments
    assert len(SAMPLES) >= 10  # the blocks were found


# -- what the docs import ------------------------------------------------------------------------


def test_every_public_name_imports() -> None:
    for module, names in PUBLIC_MODULES.items():
        face = __import__(module, fromlist=["*"])
        for name in names or ():
            assert getattr(face, name) is not None, (module, name)
    for name in agentor.__all__:
        value = getattr(agentor, name)
        if name.endswith("Error"):
            assert issubclass(value, agentor.AgentorError), name
    assert {n for n in PUBLIC_MODULES["agentor.errors"]} <= set(agentor.__all__)


def imports_in(code: str) -> list[tuple[str, list[str]]]:
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
    return found


def test_samples_import_only_public_names() -> None:
    wrong = []
    for sample in SAMPLES:
        for module, names in imports_in(sample.code):
            if module != "agentor" and not module.startswith("agentor."):
                continue
            if module not in PUBLIC_MODULES:
                wrong.append((sample.name, module))
            elif (allowed := PUBLIC_MODULES[module]) is not None:
                wrong += [(sample.name, f"{module}.{n}") for n in names if n not in allowed]
    assert wrong == []


def test_no_page_tells_a_reader_to_import_an_internal_module() -> None:
    told = re.compile(r"\b(?:from|import)\s+(agentor(?:\.\w+)*)")
    wrong = []
    for page in [README, *PAGES]:
        for module in told.findall(page.read_text()):
            if module not in PUBLIC_MODULES:
                wrong.append((page.name, module))
    assert wrong == []


# -- the README, a front page --------------------------------------------------------------------


def slug(heading: str) -> str:
    """The anchor mkdocs (and GitHub) give a heading."""
    text = re.sub(r"[`*]", "", heading.strip().lstrip("#").strip()).lower()
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", text)).strip("-")


def test_the_readme_is_a_front_page_whose_links_lead_somewhere() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    assert "make demo" in text and "make test" in text
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "#")):
            continue
        path, _, anchor = target.partition("#")
        assert (ROOT / path).exists(), target
        if anchor:
            headings = [slug(h) for h in re.findall(r"^#+ .*$", (ROOT / path).read_text(), re.M)]
            assert anchor in headings, target


# A test file named anywhere (`tests/test_x.py`, `tests/test_x.py::test_y`), or a name in a
# test module (`tests/openai_server.FakeOpenAI`).
CITED_FILE = re.compile(r"\btests/([\w/]+)\.py(?:::(\w+))?")
CITED_NAME = re.compile(r"\btests/([\w/]+)\.(?!py\b)([A-Za-z_]\w*)")
GUARANTEES_HEADER = "| promise | proved by |"


def defines(module: Path, name: str) -> bool:
    """Whether `module` defines `name`: a test (in a class too), a class, a constant."""
    pattern = rf"^\s*(?:async def|def|class) {name}\b|^{name} ="
    return re.search(pattern, module.read_text(), re.M) is not None


def missing_citations(text: str) -> list[str]:
    """The test files, tests and test-module names `text` cites that do not exist."""
    missing = []
    for path, test in CITED_FILE.findall(text):
        module = ROOT / "tests" / f"{path}.py"
        if not module.is_file() or (test and not defines(module, test)):
            missing.append(f"tests/{path}.py::{test}" if test else f"tests/{path}.py")
    for path, name in CITED_NAME.findall(text):
        module = ROOT / "tests" / f"{path}.py"
        if not module.is_file() or not defines(module, name):
            missing.append(f"tests/{path}.{name}")
    return missing


def guarantee_rows() -> list[str]:
    """Every promise of the Guarantees page: each table line but its header and separator."""
    lines = [r for r in (DOCS / "guarantees.md").read_text().splitlines() if r.startswith("|")]
    assert lines[:2] == [GUARANTEES_HEADER, "|---|---|"], lines[:2]
    return lines[2:]


def test_every_test_the_guarantees_page_cites_exists() -> None:
    """Each row, the first as well, cites at least one test file in its last cell, and every
    test it names is in the file named before it in that cell."""
    rows = guarantee_rows()
    assert len(rows) > 50 and all(r.startswith("| ") and r.endswith(" |") for r in rows)
    missing, uncited = [], []
    for row in rows:
        cell = row.rsplit("|", 2)[1]
        current = None
        for cited in re.findall(r"`([^`]+)`", cell):
            path, _, test = cited.partition("::")
            if path.endswith(".py"):
                current = ROOT / path
                assert current.exists(), cited
            else:
                test = cited if cited.startswith("test_") else ""
            if test and (current is None or not defines(current, test)):
                missing.append(cited)
        if not CITED_FILE.search(cell):
            uncited.append(row[:80])
    assert (missing, uncited) == ([], [])


def test_every_test_a_page_cites_exists() -> None:
    """README.md, every page of docs/ and bench/README.md: each test file, test and test-module
    name they mention exists."""
    pages = [README, *PAGES, ROOT / "bench" / "README.md"]
    assert sum(len(CITED_FILE.findall(page.read_text())) for page in pages) > 100  # found
    missing = {str(page.relative_to(ROOT)): missing_citations(page.read_text()) for page in pages}
    assert {name: m for name, m in missing.items() if m} == {}


def test_the_bench_history_and_the_current_table_are_apart() -> None:
    table = [r for r in (DOCS / "performance.md").read_text().splitlines() if r.startswith("| ")]
    assert table[0] == "| bench | ours | baseline | ratio | goal |"
    assert max(len(r) for r in table) < 300  # one current figure a cell, not its history
    assert "## The figures, as measured" in (ROOT / "bench" / "README.md").read_text()
