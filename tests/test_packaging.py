"""Installing the project is quiet: `pip install -e .` (its build backend in pip's own isolated
build environment, as a user's install gets it) prints no warning, and the licence is declared
as an SPDX expression. A copy of the project is installed with `--dry-run`, so nothing is
installed anywhere and the source tree gets no build files."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def project_copy(where: Path) -> Path:
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, where / name)
    for package in ("agentor", "tui"):
        shutil.copytree(
            ROOT / package, where / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return where


def test_an_editable_install_prints_no_warning_and_declares_an_spdx_licence(
    tmp_path: Path,
) -> None:
    project = project_copy(tmp_path)
    install = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps"]
    done = subprocess.run(
        [*install, "--ignore-installed", "-e", str(project)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Would install agentor-tui-" in output
    assert "warning" not in output.lower(), output
    metadata = (project / "agentor_tui.egg-info" / "PKG-INFO").read_text()
    assert "License-Expression: MIT" in metadata.splitlines()
