"""A real Arize Phoenix for the telemetry tests: started once per test session (per xdist
worker: its tests live in one module) on 127.0.0.1 at free ports, its storage in a temporary
directory, from the venv `make phoenix` makes (.venv-phoenix: Phoenix pins its own versions).
Its REST API is how the tests read what it stored.

Without the venv the tests fail saying how to make it; they never skip.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, wait_for

PHOENIX = ROOT / ".venv-phoenix" / "bin" / "phoenix"
MISSING = "Arize Phoenix is not installed for the tests: run `make phoenix` (once) and test again"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Phoenix:
    """A running Phoenix: `url` takes OTLP/HTTP (at /v1/traces) and answers its REST API."""

    def __init__(self, workdir: Path) -> None:
        if not PHOENIX.exists():
            pytest.fail(MISSING, pytrace=False)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "phoenix.log"
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(workdir),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_TELEMETRY_ENABLED": "false",
            "PHOENIX_ENABLE_MCP_SERVER": "false",
            "PHOENIX_LOG_SQL": "false",
        }
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [str(PHOENIX), "serve"], env=env, stdout=out, stderr=subprocess.STDOUT
            )
        wait_for(self._ready, timeout=240, what=f"Phoenix to answer (its log: {self.log})")

    def _ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"Phoenix exited ({self.proc.returncode}); its log: {self.log}")
        try:
            with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def all_spans(self) -> list[dict[str, Any]]:
        """Every span Phoenix holds, as its REST API gives them."""
        spans: list[dict[str, Any]] = []
        cursor = ""
        while True:
            url = f"{self.url}/v1/projects/default/spans?limit=1000{cursor}"
            with urllib.request.urlopen(url, timeout=30) as answer:
                page = json.loads(answer.read())
            spans += page["data"]
            if not page.get("next_cursor"):
                return spans
            cursor = f"&cursor={page['next_cursor']}"

    def spans(self, trace_id: str) -> list[dict[str, Any]]:
        return [s for s in self.all_spans() if s["context"]["trace_id"] == trace_id]

    def wait_spans(self, trace_id: str, count: int) -> list[dict[str, Any]]:
        """The trace's spans once Phoenix holds `count` of them (it ingests in the background)."""
        return wait_for(
            lambda: (found := self.spans(trace_id)) and len(found) >= count and found,
            timeout=60,
            what=f"{count} spans of trace {trace_id} in Phoenix",
        )

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(name="phoenix", scope="session")
def phoenix_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    server = Phoenix(tmp_path_factory.mktemp("phoenix"))
    yield server
    server.stop()
