"""Serve kit: `agentor-tui serve` as a real process, the app processes it starts (counted in
/proc), and a real headless Chromium (Playwright driving Debian's binary, never a downloaded
one) reading what the page's terminal shows.

The page draws the app on a canvas (xterm.js), so its text is not in the DOM. The tab reads
xterm.js's own screen buffer, what the canvas is drawn from: an init script catches the
terminal object as textual-serve's page script stores it (`this.terminal = new Terminal(...)`),
through a setter on `Object.prototype` that then gets out of the way (the property is defined
on the object itself, as the plain assignment would have).

The model is `tests.openai_server.FakeOpenAI` serving two agents (`AGENTS`, `--agent` specs):
the approval kit's travel agent (gated `book_hotel`) and the crash kit's weather agent, both on
the model at $OPENAI_BASE_URL.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
from playwright.sync_api import Error as PlaywrightError

from agentor import Agentor
from tests import approvalkit, crashkit
from tests.browser import chromium

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(sys.executable).parent / "agentor-tui"
AGENTS = ["tests/approvalkit.py:make_agent", "tests/servekit.py:weather_agent"]
T = TypeVar("T")
WAIT = 90.0  # seconds: a limit on waiting for a condition, never a pause


def script(request: dict[str, Any]) -> dict[str, Any]:
    """Both agents' model, told apart by the tools offered."""
    tools = [t.get("function", {}).get("name") for t in request.get("tools") or []]
    return approvalkit.script(request) if "book_hotel" in tools else crashkit.script(request)


class HeldScript:
    """`script`, except that while `gate` is an unset Event each answer waits for it."""

    def __init__(self) -> None:
        self.gate: threading.Event | None = None

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.gate is not None:
            self.gate.wait(WAIT)
        return script(request)


def weather_agent() -> Agentor:
    """`--agent` spec: the crash kit's weather agent ("parallel agent") on the same model."""
    return crashkit.build_agent(
        "parallel", None, os.environ["OPENAI_BASE_URL"], os.environ.get("TOOL_LOG")
    )


def in_thread(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)` in a thread of its own: Playwright's sync API keeps an event loop
    running in the test's thread, where `asyncio.run` refuses to start another."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


def wait_for(check: Callable[[], Any], what: str, describe: Callable[[], str] = str) -> Any:
    """`check()` once it is truthy; fails after WAIT seconds saying `what`, and `describe()`."""
    deadline = time.monotonic() + WAIT
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{describe()}")
        time.sleep(0.05)


# -- the server -----------------------------------------------------------------------------------


class Served:
    """`agentor-tui serve STORE ARGS --port 0` in its own process, in `cwd`; its output in
    `log`."""

    def __init__(
        self, store: Path, args: list[str], env: dict[str, str], log: Path, cwd: Path = ROOT
    ) -> None:
        self.log = log
        command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tui"]
        with log.open("wb") as out:
            self.proc = subprocess.Popen(
                [*command, "serve", str(store), *args, "--port", "0"],
                cwd=cwd,
                env={**env, "PYTHONPATH": str(ROOT)},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        found = wait_for(self._listening, "the server to listen", self.output)
        self.url = found.group(1)
        self.port = int(found.group(2))

    def _listening(self) -> re.Match[str] | None:
        assert self.proc.poll() is None, f"serve ended ({self.proc.returncode}):\n{self.output()}"
        return re.search(r" at (http://127\.0\.0\.1:(\d+)) ", self.output())

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def app_processes(self) -> list[int]:
        """The app processes it started (`python -m tui ...`), each tab's, still running."""
        return [pid for pid in descendants(self.proc.pid) if _argv(pid)[1:3] == ["-m", "tui"]]

    def stop(self) -> None:
        """SIGTERM, as ctrl+c: the server tells every tab's app to quit, then ends."""
        apps = self.app_processes()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            for pid in apps:  # never leave an app behind, even when a test failed
                _kill(pid)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


async def open_websocket(url: str, headers: dict[str, str]) -> int:
    """The status a websocket handshake gets (101: open; closed again at once)."""
    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(url, headers=headers):
                return 101
        except aiohttp.WSServerHandshakeError as refused:
            return refused.status


def descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [p for p, pp in parents.items() if pp == parent]
        found += children
        todo += children
    return found


def _argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def environ(pid: int) -> str:
    return Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# -- the browser ----------------------------------------------------------------------------------

CATCH_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    if (value && value.buffer && value.buffer.active && !window.__term) window.__term = value;
    Object.defineProperty(this, "terminal",
      {value, writable: true, configurable: true, enumerable: true});
  },
});
"""
READ_SCREEN = """() => {
  const term = window.__term;
  if (!term) return "";
  const buffer = term.buffer.active, rows = [];
  for (let i = 0; i < term.rows; i++) {
    const line = buffer.getLine(buffer.viewportY + i);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
}"""
BROWSER_ARGS = [
    "--no-sandbox",  # as root
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
]


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=chromium(), args=BROWSER_ARGS)


class Tab:
    """A fresh browser context (no cookies) with one page; requests to anywhere but `origin`
    are refused (the page's web font), so nothing leaves the machine."""

    def __init__(self, browser: Any, origin: str) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 800})
        self.page = self.context.new_page()
        self.page.add_init_script(CATCH_TERMINAL)
        self.page.route(
            "**/*",
            lambda route: (
                route.continue_() if route.request.url.startswith(origin) else route.abort()
            ),
        )

    def screen(self) -> str:
        """What the page's terminal shows now, a line per row ("" while a page loads)."""
        try:
            return self.page.evaluate(READ_SCREEN)
        except PlaywrightError:  # the page moved on (signed in) while it was asked
            return ""

    def wait_for(self, check: Callable[[str], Any], what: str) -> Any:
        return wait_for(lambda: check(self.screen()), what, self.screen)

    def line_with(self, text: str) -> str:
        return next((row for row in self.screen().splitlines() if text in row), "")

    def press(self, *keys: str) -> None:
        """Keys as typed into the page's terminal."""
        self.page.focus(".xterm-helper-textarea")
        for key in keys:
            self.page.keyboard.press(key)

    def close(self) -> None:
        self.context.close()
