"""`agentor-tui serve` without a browser: every refusal is one line and exit 2 (a host beyond
loopback without a token, a bad token, never printed, a bad port, a port taken, a bad app
argument, textual-serve missing); the app's own arguments pass on to each tab's app as written;
`agentor-tui DIR` is as it was; and a server without a token answers only to loopback names and
to pages of its own origin (a real server process, real HTTP and websocket requests)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import http.client
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import test_utils

from tests import servekit
from tests.conftest import ROOT
from tests.servekit import Served, in_thread, open_websocket
from tui.cli import main
from tui.serve import guard
from tui.serve.guard import Guard
from tui.serve.options import TOKEN_ENV, app_argv
from tui.serve.site import build_site

GOOD_TOKEN = "a-good-token-0123456789"


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("agentor-tui: error: ") and proc.stderr.count("\n") == 1
    return proc.stderr


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """`agentor-tui serve ARGS` in this process, which must refuse at once: its one line."""
    assert main(["serve", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured
    assert captured.err.startswith("agentor-tui: error: ")
    return captured.err


@pytest.fixture
def no_token(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.chdir(ROOT)
    return monkeypatch


def test_a_host_beyond_loopback_needs_a_token(no_token, capsys) -> None:
    for host in ("0.0.0.0", "::", "192.0.2.1", "runs.example"):
        err = refused(capsys, "runs", "--host", host)
        assert f"--host {host} can be reached from other machines" in err
        assert f"give a token (--token or {TOKEN_ENV})" in err


def test_a_bad_token_is_refused_and_never_printed(no_token, capsys) -> None:
    bad = ["short-token", "has spaces in it 0123", "semi;colon;0123456789", "é" * 20]
    for token in ["", *bad]:
        err = refused(capsys, "runs", f"--token={token}")
        assert err.startswith("agentor-tui: error: --token: a token must be at least 16")
        no_token.setenv(TOKEN_ENV, token)
        err += refused(capsys, "runs")
        assert err.count(f"agentor-tui: error: {TOKEN_ENV}: a token must be") == 1
        assert not token or token not in err


def test_bad_ports_and_public_addresses_are_one_line_errors(no_token, capsys) -> None:
    err = refused(capsys, "runs", "--port", "70000")
    assert "--port 70000: a port is from 0 to 65535" in err
    err = refused(capsys, "runs", "--public-url", "ftp://runs.example")
    assert "--public-url ftp://runs.example: an address starts with https://" in err


def test_a_port_in_use_is_a_one_line_error(no_token, capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = refused(capsys, "runs", "--port", str(port))
    assert f"cannot listen on 127.0.0.1 port {port}: " in err


def test_the_apps_arguments_are_checked_once_before_serving(tmp_path, no_token, capsys) -> None:
    err = refused(capsys, str(tmp_path / "nope"))
    assert err == f"agentor-tui: error: no such directory: {tmp_path / 'nope'}\n"
    err = refused(capsys, "runs", "--agent", "missing.py:agent")
    assert err == "agentor-tui: error: --agent missing.py:agent: no such file: missing.py\n"


def test_the_apps_arguments_pass_on_as_written() -> None:
    argv = [
        "runs", "--host", "0.0.0.0", "--agent", "a.py:agent", f"--token={GOOD_TOKEN}",
        "--no-watch", "--port", "9000", "--by", "alice", "--public-url", "https://x.example",
        "--agent", "b.py:make", "--export-dir", "out",
    ]  # fmt: skip
    assert app_argv(argv) == [
        "runs", "--agent", "a.py:agent", "--no-watch", "--by", "alice", "--agent", "b.py:make",
        "--export-dir", "out",
    ]  # fmt: skip


def test_help_loads_no_web_server_and_the_terminal_usage_is_unchanged(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from tui.cli import main\n"
        "try:\n"
        "    main(['serve', '--help'])\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "heavy = ('aiohttp', 'textual_serve', 'textual', 'openai')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stderr.strip() == "[]", proc.stderr
    for option in ("--host HOST", "--port PORT", "--token TOKEN", "--agent SPEC", "--no-watch"):
        assert option in proc.stdout
    # `agentor-tui DIR` as before; a directory named serve is ./serve.
    usage = subprocess.run(
        [sys.executable, "-m", "tui", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert "agentor-tui serve --help" in usage.stdout and "./serve" in usage.stdout
    plain = subprocess.run(
        [sys.executable, "-m", "tui", "./serve"], cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert plain.stderr == "agentor-tui: error: no such directory: ./serve\n"


def test_without_textual_serve_it_says_how_to_install_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['textual_serve'] = None  # as when the extra is not installed\n"
        "from tui.cli import main\n"
        "sys.exit(main(['serve', 'runs']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    err = one_line_error(proc)
    assert "serve needs textual-serve: pip install 'agentor-tui[serve]'" in err


# -- a server without a token: loopback only ------------------------------------------------------


@pytest.fixture(scope="module")
def open_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    log = tmp_path_factory.mktemp("serve-open") / "serve.log"
    server = Served(ROOT / "runs", ["--no-watch"], env, log)
    try:
        yield server
    finally:
        server.stop()


def status(served: Served, headers: dict[str, str]) -> int:
    """The status of GET / with these headers (Host among them, or the server's)."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        connection.request("GET", "/", headers={"Host": f"127.0.0.1:{served.port}", **headers})
        return connection.getresponse().status
    finally:
        connection.close()


def test_without_a_token_only_loopback_names_are_answered(open_served: Served) -> None:
    port = open_served.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"):
        assert status(open_served, {"Host": host}) == 200, host
    # A page whose name was rebound to 127.0.0.1 (DNS rebinding) sends its own name.
    for host in (f"evil.example:{port}", "evil.example", f"192.0.2.1:{port}"):
        assert status(open_served, {"Host": host}) == 403, host


def test_without_a_token_a_page_of_another_origin_cannot_open_the_app(
    open_served: Served,
) -> None:
    own = f"http://127.0.0.1:{open_served.port}"
    assert status(open_served, {"Origin": own}) == 200
    for origin in ("http://evil.example", "null", f"http://localhost:{open_served.port + 1}"):
        assert status(open_served, {"Origin": origin}) == 403, origin
    ws = own.replace("http:", "ws:") + "/ws?width=80&height=24"
    assert in_thread(open_websocket(ws, {"Origin": "http://evil.example"})) == 403
    assert open_served.app_processes() == []


# -- the page's addresses -------------------------------------------------------------------------


async def page_and_cookie(public_url: str | None, headers: dict[str, str]) -> tuple[str, str]:
    """The page a signed-in browser gets from a site (served on 127.0.0.1, any port) with the
    public address `public_url`, asked with `headers`; and the cookie its sign-in sets."""
    origins = () if public_url is None else (public_url,)
    site = build_site("true", Guard(GOOD_TOKEN, "c", origins), public_url)
    async with test_utils.TestClient(test_utils.TestServer(site, host="127.0.0.1")) as client:
        signed_in = await client.get(f"/?token={GOOD_TOKEN}", headers=headers)
        page = await client.get("/", headers={"Cookie": f"c={GOOD_TOKEN}", **headers})
        assert (signed_in.status, page.status) == (200, 200)
        return await page.text(), signed_in.headers["Set-Cookie"]


async def test_the_page_points_at_the_address_the_browser_used() -> None:
    page, cookie = await page_and_cookie(None, {"Host": "runs.example:8123"})
    assert 'data-session-websocket-url="ws://runs.example:8123/ws"' in page
    assert 'href="http://runs.example:8123/static/css/xterm.css"' in page
    assert GOOD_TOKEN not in page
    assert "Secure" not in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie


async def test_behind_a_proxy_the_page_points_at_the_public_address() -> None:
    public = "https://runs.example"
    page, cookie = await page_and_cookie(public, {"Host": "127.0.0.1:8000", "Origin": public})
    assert 'data-session-websocket-url="wss://runs.example/ws"' in page
    assert 'href="https://runs.example/static/css/xterm.css"' in page
    assert "Secure" in cookie  # an https address: the cookie never goes over plain http


# -- the token's compare -------------------------------------------------------------------------


def sha256(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


@pytest.mark.parametrize("path", ["query", "bearer", "cookie"])
async def test_each_way_of_bringing_the_token_is_compared_in_constant_time(
    monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    """The token in the address, an Authorization header or the cookie is checked by
    `hmac.compare_digest` (constant time), on digests of equal length; and its answer alone
    decides: told a wrong token matches, the request is served."""
    compared: list[tuple[bytes, bytes]] = []
    says_equal: list[bool] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return says_equal[-1] if says_equal else real(a, b)

    monkeypatch.setattr(guard.hmac, "compare_digest", spy)
    site = build_site("true", Guard(GOOD_TOKEN, "c"), None)

    def brought(token: str) -> tuple[str, dict[str, str]]:
        if path == "query":
            return f"/?token={token}", {}
        if path == "bearer":
            return "/", {"Authorization": f"Bearer {token}"}
        return "/", {"Cookie": f"c={token}"}

    async with test_utils.TestClient(test_utils.TestServer(site, host="127.0.0.1")) as client:
        for token, status in ((GOOD_TOKEN, 200), ("a-wrong-token", 401), ("x", 401)):
            compared.clear()
            address, headers = brought(token)
            assert (await client.get(address, headers=headers)).status == status, token
            assert compared == [(sha256(token), sha256(GOOD_TOKEN))], token
        says_equal.append(True)
        address, headers = brought("a-wrong-token")
        assert (await client.get(address, headers=headers)).status == 200


async def test_stopping_the_server_quits_every_tabs_app(tmp_path: Path) -> None:
    """SIGTERM (as ctrl+c) with a tab open: its app is told to quit and ends, then the server;
    no app is left behind."""
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    server = Served(ROOT / "runs", ["--no-watch"], env, tmp_path / "serve.log")
    try:
        ws = server.url.replace("http:", "ws:") + "/ws?width=80&height=24"
        async with (
            aiohttp.ClientSession() as session,
            session.ws_connect(ws, headers={"Origin": server.url}) as tab,
        ):
            # Read what the app draws, as a browser does (and so answer the server's close).
            drawn = asyncio.create_task(drain(tab))
            apps = await until(lambda: server.app_processes(), "the tab's app")
            server.proc.send_signal(signal.SIGTERM)
            await until(lambda: server.proc.poll() is not None, "the server to end")
            await drawn
        assert server.proc.returncode == 0
        assert not [pid for pid in apps if Path(f"/proc/{pid}").exists()]
    finally:
        server.stop()


async def drain(tab: aiohttp.ClientWebSocketResponse) -> None:
    async for _ in tab:
        pass


async def until(check: Callable[[], Any], what: str) -> Any:
    """`check()` once truthy, polled without blocking the event loop (the socket's reader)."""
    for _ in range(int(servekit.WAIT / 0.05)):
        if value := check():
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_browser_tabs_app_writes_control_characters_as_escapes() -> None:
    """What `agentor-tui serve`'s apps switch to (tests/test_serve_browser.py sees it in the
    page): escapes every font can draw; and back, as every other process shows them."""
    from agentor.literal import literal, literal_line, show_controls_as_escapes

    hostile = "a\x1b[2J\x07\x7f\x9b\tb\nc"
    try:
        show_controls_as_escapes()
        assert literal_line(hostile) == "a\\x1b[2J\\x07\\x7f\\x9b b⏎c"
        assert literal(hostile) == "a\\x1b[2J\\x07\\x7f\\x9b    b\nc"
    finally:
        show_controls_as_escapes(False)
    assert literal_line(hostile) == "a␛[2J␇␡\\x9b b⏎c"
