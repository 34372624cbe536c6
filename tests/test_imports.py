"""Import rules checked at run time, which the static contracts (import-linter, in
pyproject.toml, run by `make test`) cannot see: in fresh interpreters, the engine loads neither
the TUI nor textual, `agentor.sources` and `tui.text` never load textual, controllers load
neither the app, a screen nor a widget, openai and psycopg are imported only when used; over the
source's import statements, no module imports one that imports it back; modules and functions
stay short enough to read."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from tests.conftest import ROOT

ENGINE_MODULES = [
    "agentor",
    "agentor.agent",
    "agentor.engine.events",
    "agentor.engine.log.format",
    "agentor.engine.store.file",
    "agentor.engine.history",
    "agentor.engine.loop",
    "agentor.engine.models",
    "agentor.engine.tools",
    "agentor.engine.store.copy",
    "agentor.fleet.worker",
    "agentor.engine.submit",
]
PACKAGES = ("agentor", "tui")


def imported_after(modules: list[str]) -> set[str]:
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout))


def tops(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def modules_under(package: str) -> list[str]:
    base = ROOT / package.replace(".", "/")
    names = []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def import_graph() -> dict[str, set[str]]:
    """Each module of agentor and tui, and the modules of theirs it imports, wherever in its
    code (a function's lazy import is an edge too, and so is an import for type hints only)."""
    graph: dict[str, set[str]] = {}
    known = {m for p in PACKAGES for m in modules_under(p)}
    for name in known:
        path = ROOT / (name.replace(".", "/") + ".py")
        is_package = not path.exists()
        if is_package:
            path = ROOT / name.replace(".", "/") / "__init__.py"
        graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for target in _targets(node, name, is_package):
                while target and target not in known:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The modules an import statement may load: `from a import b` loads `a` or `a.b`."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        here = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join(here[: len(here) - node.level + 1])
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def reaches(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_engine_imports_no_tui_textual_or_openai() -> None:
    loaded = tops(imported_after(ENGINE_MODULES))
    assert "agentor" in loaded
    assert not loaded & {"textual", "tui"}
    assert "openai" not in loaded, "openai must be imported lazily, on the first request"


def test_the_tuis_data_and_text_layers_import_no_textual() -> None:
    layers = modules_under("agentor.sources") + modules_under("tui.text")
    loaded = imported_after(layers)
    assert {"agentor.sources.directory.source", "tui.text.detail"} <= loaded
    assert "textual" not in tops(loaded)
    assert "openai" not in tops(loaded)


def test_importing_the_controllers_loads_neither_the_app_nor_a_screen_nor_a_widget() -> None:
    """The static rule is an import-linter contract (pyproject.toml, run by `make test`); this
    is the same in a fresh interpreter, lazy imports included."""
    controllers = modules_under("tui.controllers")
    assert {"tui.controllers.watcher", "tui.controllers.resumer"} <= set(controllers)
    loaded = imported_after(controllers)
    ui = ("tui.widgets", "tui.screens")
    assert not {m for m in loaded if m == "tui.app" or m.startswith(ui)}


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = import_graph()
    assert "tui.app" in graph and "agentor.agent" in graph
    circles = sorted(m for m in graph if m in reaches(graph, m))
    assert circles == []


def test_every_module_is_small() -> None:
    """Split by responsibility, never by a count: this only catches a module grown past what
    anyone reads as one piece."""
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            lines = len(path.read_text().splitlines())
            assert lines <= 800, f"{path.relative_to(ROOT)}: {lines} lines"


# Functions longer than this are not read at once.
FUNCTION_LINES = 60


def test_every_function_is_short_enough_to_read_at_once() -> None:
    long = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    assert node.end_lineno is not None
                    if node.end_lineno - node.lineno + 1 > FUNCTION_LINES:
                        long.add((str(path.relative_to(ROOT)), node.name))
    assert long == set()


def test_the_graph_sees_an_import_circle_when_there_is_one() -> None:
    """The circle test is not blind: the graph of the modules as written has `tui.app`
    importing the watcher; a watcher importing the app back would be a circle."""
    graph = import_graph()
    assert "tui.controllers.watcher" in reaches(graph, "tui.app")
    graph["tui.controllers.watcher"] = graph["tui.controllers.watcher"] | {"tui.app"}
    assert "tui.app" in reaches(graph, "tui.app")


def test_the_engine_imports_no_psycopg_until_a_postgres_store_is_named() -> None:
    # `import agentor` stays light: the driver is an optional extra, loaded by PostgresStore.
    loaded = tops(imported_after([*ENGINE_MODULES, "agentor.engine.store.postgres"]))
    assert not loaded & {"psycopg", "psycopg_pool"}
    code = (
        "import sys\n"
        "from agentor.engine.store import postgres\n"
        "before = 'psycopg' in sys.modules\n"
        "postgres.PostgresStore\n"
        "print(before, 'psycopg' in sys.modules, 'psycopg_pool' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True"]


# Operating a store (retention, export, search, cost): engine-side, so no textual, no TUI, and
# the price table (genai-prices, ~0.3 s to import) only when a price is asked for.
OPS_MODULES = [
    "agentor.ops.pricing",
    "agentor.ops.retention",
    "agentor.ops.pins",
    "agentor.ops.run_export",
    "agentor.ops.run_document",
    "agentor.ops.run_search",
    "agentor.ops.search_scan",
]


def test_the_ops_modules_import_no_tui_textual_openai_or_price_table() -> None:
    loaded = tops(imported_after(OPS_MODULES))
    assert "agentor" in loaded
    assert not loaded & {"textual", "tui", "openai", "genai_prices"}


def _literals(node: ast.expr) -> list[object]:
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [v for e in node.elts for v in _literals(e)]
    return []


def test_readers_compare_statuses_by_their_names_in_engine_statuses() -> None:
    """`agentor.engine.statuses` names every status once: a reader that compares a status
    with a spelt-out string (`row.status == "failed"`) drifts the day a status is renamed."""
    from agentor.engine import statuses

    names = {v for k, v in vars(statuses).items() if k.isupper() and isinstance(v, str)}
    spelt = []
    for folder in ("tui", "agentor/cli", "agentor/ops", "agentor/fleet"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Compare):
                    for side in (node.left, *node.comparators):
                        spelt += [
                            f"{path.relative_to(ROOT)}:{node.lineno} {v!r}"
                            for v in _literals(side)
                            if v in names
                        ]
    assert spelt == []
