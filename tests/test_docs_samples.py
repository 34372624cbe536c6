"""Every ```python block of README.md and docs/ runs, each in a fresh directory and a new
interpreter, against a real OpenAI-compatible server on 127.0.0.1 (the offline demo model
behind `tests/openai_server.py`), with the sample runs copied in as `runs/` and `AGENTOR_DSN`
naming a PostgreSQL database of its own. (tests/test_docs.py finds the blocks and checks what
they import; a block marked `<!-- sample: fragment -->` is not run.)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from examples.demo_model import DemoModel
from tests.conftest import ROOT
from tests.openai_server import FakeOpenAI
from tests.test_docs import SAMPLES, Sample


def demo_reply(request: dict[str, Any]) -> dict[str, Any]:
    """What the offline demo model answers to this request, as the fake server's reply."""
    model = DemoModel(word_delay=0)
    reply = asyncio.run(model.generate(request.get("messages", []), request.get("tools", [])))
    if reply.calls:
        return {"calls": [[c["function"]["name"], c["function"]["arguments"]] for c in reply.calls]}
    return {"text": reply.text}


@pytest.fixture(scope="module")
def demo_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(demo_reply) as server:
        yield server


@pytest.fixture(scope="module")
def samples_database(pg_dsn: str) -> Iterator[str]:
    """A database of its own (the PostgreSQL samples use the schema `agentor` in it)."""
    name = f"agentor_docs_{os.getpid()}"
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    yield make_conninfo(**{**conninfo_to_dict(pg_dsn), "dbname": name})
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize("sample", [s for s in SAMPLES if not s.fragment], ids=lambda s: s.name)
def test_the_sample_runs(
    sample: Sample, demo_server: FakeOpenAI, samples_database: str, tmp_path: Path
) -> None:
    shutil.copytree(ROOT / "runs", tmp_path / "runs")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    (tmp_path / "sample.py").write_text(sample.code)
    env = {
        **os.environ,
        "OPENAI_BASE_URL": demo_server.url,
        "OPENAI_API_KEY": "sk-docs-samples",
        "AGENTOR_DSN": samples_database,
        "PYTHONPATH": "",  # only what is installed: the sample sees agentor as a user does
    }
    done = subprocess.run(
        [sys.executable, "sample.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{sample.name} failed:\n{done.stdout}\n{done.stderr}"
