"""Import contracts: the engine never imports the TUI or textual; the TUI's data layer never
imports textual; openai is imported only when a request is made. Checked in fresh interpreters."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

ENGINE_MODULES = [
    "agentor",
    "agentor.agent",
    "agentor.engine.events",
    "agentor.engine.logformat",
    "agentor.engine.store",
    "agentor.engine.replay",
    "agentor.engine.loop",
    "agentor.engine.models",
    "agentor.engine.tools",
    "agentor.engine.runcopy",
    "agentor.fleet.worker",
    "agentor.fleet.submit",
]


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


def test_the_engine_imports_no_tui_textual_or_openai() -> None:
    loaded = tops(imported_after(ENGINE_MODULES))
    assert "agentor" in loaded
    assert not loaded & {"textual", "tui"}
    assert "openai" not in loaded, "openai must be imported lazily, on the first request"


def test_the_tui_data_layer_imports_no_textual() -> None:
    loaded = tops(imported_after(["tui.runs"]))
    assert "tui" in loaded
    assert "textual" not in loaded
    assert "openai" not in loaded


# What the screen shows, as plain data and Rich text: testable and usable without an app.
TUI_TEXT_MODULES = [
    "tui.formatting",
    "tui.styles",
    "tui.literal",
    "tui.summaries",
    "tui.detail",
    "tui.run_filter",
    "tui.logscan",
    "tui.finder",
    "tui.event_value",
]


def test_the_tuis_text_modules_import_no_textual() -> None:
    loaded = tops(imported_after(TUI_TEXT_MODULES))
    assert "tui" in loaded
    assert "textual" not in loaded
    assert "openai" not in loaded


def test_the_engine_imports_no_psycopg_until_a_postgres_store_is_named() -> None:
    # `import agentor` stays light: the driver is an optional extra, loaded by PostgresStore.
    loaded = tops(imported_after([*ENGINE_MODULES, "agentor.engine.pgstore"]))
    assert not loaded & {"psycopg", "psycopg_pool"}
    code = (
        "import sys\n"
        "from agentor.engine import pgstore\n"
        "before = 'psycopg' in sys.modules\n"
        "pgstore.PostgresStore\n"
        "print(before, 'psycopg' in sys.modules, 'psycopg_pool' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "True", "True"]
