"""A real headless browser for tests: Chromium loads a page and hands back its DOM after any
script had its chance to run, while a local HTTP server counts every request the page makes.

Chromium must be installed (Debian: `apt-get install -y chromium`); a test that needs it fails
with that one line when it is missing: it never skips.
"""

from __future__ import annotations

import http.server
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

INSTALL = "chromium is not installed: run `apt-get install -y chromium` (Debian) and test again"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail(INSTALL, pytrace=False)


@contextmanager
def request_counter() -> Iterator[tuple[str, list[str]]]:
    """A server on 127.0.0.1 that answers 200 to anything and records each path asked."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            body = b"document.title = 'FETCHED';"
            self.send_response(200)
            self.send_header("Content-Type", "application/javascript")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def dump_dom(page: Path, budget_ms: int = 3000) -> str:
    """The DOM of `page` (a file) once it loaded and its scripts and timers had `budget_ms` of
    virtual time to run."""
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        proc = subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                f"--user-data-dir={profile}",
                f"--virtual-time-budget={budget_ms}",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout
