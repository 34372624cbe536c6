"""`agentor-tui serve` in a real headless Chromium: the page shows the run list, each tab runs
its own app, `r` completes an interrupted run and `a` approves the awaiting one (both written
to the store), and without the token nothing is served and no app starts; the token shows in
no log, page, address or app process.

One server (a token, two agents on a real model server) and one browser for the module; each
test opens fresh browser contexts (no cookie) and closes them. The runs are real: the travel
agent's run paused for approval, and the weather agent's run SIGKILLed after its tool calls
were written.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from agentor.engine.events import APPROVAL, RUN_END
from agentor.engine.history import status
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store.file import FileStore
from tests import crashkit, servekit
from tests.app_support import write_log
from tests.openai_server import FakeOpenAI
from tests.servekit import (
    AGENTS,
    Served,
    Tab,
    environ,
    get,
    in_thread,
    open_websocket,
    wait_for,
)
from tui.serve.options import TOKEN_ENV

TOKEN = secrets.token_urlsafe(24)
WRONG = secrets.token_urlsafe(24)
BY = "browser-tester"
WS_OPENED = re.compile(r"GET /ws\S* 101 ")  # logged as it closes
APP_ARGS = ["--agent", AGENTS[0], "--agent", AGENTS[1], "--by", BY, "--no-watch"]


@dataclass
class Store:
    runs: Path
    tool_log: Path
    awaiting: str  # the travel agent's run, paused at book_hotel(Rome)
    interrupted: str  # the weather agent's run, killed before its tools' results


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(servekit.HeldScript()) as server:
        yield server


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, model: FakeOpenAI) -> Store:
    base = tmp_path_factory.mktemp("served")
    runs, tool_log, made = base / "runs", base / "tools.log", base / "made.json"
    start = {"dir": str(runs), "url": model.url, "action": "start", "tool_log": str(tool_log)}
    travel_cfg = json.dumps({**start, "out": str(made)})
    travel = subprocess.Popen(
        [sys.executable, "-m", "tests.approvalkit", "child", travel_cfg],
        cwd=crashkit.ROOT,
        env=crashkit.child_env(),
    )
    # run_start, generation, tool_call x2: killed before either tool's result was saved.
    weather = crashkit.spawn({**start, "scenario": "parallel", "kill_after": 4})
    assert weather.wait(timeout=120) == -signal.SIGKILL
    assert travel.wait(timeout=120) == 0
    paused = json.loads(made.read_text())
    assert paused["status"] == AWAITING_APPROVAL
    (interrupted,) = set(FileStore(runs).list_runs()) - {paused["run_id"]}
    return Store(runs, tool_log, paused["run_id"], interrupted)


@pytest.fixture(scope="module")
def served(store: Store, model: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(OPENAI_BASE_URL=model.url, TOOL_LOG=str(store.tool_log))
    env[TOKEN_ENV] = TOKEN
    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    server = Served(store.runs, APP_ARGS, env, log)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = servekit.launch(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def tabs(browser, served: Served) -> Iterator[list[Tab]]:
    """Open tabs, closed after the test; the test then waits for their apps to end."""
    opened: list[Tab] = []
    yield opened
    for tab in opened:
        tab.close()
    wait_for(lambda: not served.app_processes(), "the closed tabs' apps to end")


def signed_in(browser, served: Served, tabs: list[Tab], store: Store, link: bool = False) -> Tab:
    """A new tab, opened at the address with the token (typed, or a link followed from another
    site's page), once it shows the run list."""
    tab = Tab(browser, served.url)
    tabs.append(tab)
    address = f"{served.url}/?token={TOKEN}"
    if link:
        tab.page.set_content(f'<a id="go" href="{address}">the runs</a>')  # about:blank's
        tab.page.click("#go")
    else:
        tab.page.goto(address)
    tab.wait_for(lambda s: store.awaiting[:8] in s and store.interrupted[:8] in s, "the run list")
    return tab


def show_only(tab: Tab, run_id: str) -> None:
    """Filter the list down to one run (`/`, its id, enter): the cursor is on it. Each step
    waits for the app to have taken the last, as a person watching the screen would: keys
    typed before the filter bar has the focus go to the list."""
    tab.press("/")
    tab.wait_for(lambda s: "filter: id, agent" in s, "the filter bar")
    tab.press(*run_id[:8])
    tab.wait_for(lambda s: "Runs 1 of " in s, f"the list filtered to {run_id}")
    tab.press("Enter")
    tab.wait_for(lambda s: "r Resume" in footer(s), "the list's keys in the footer")


def footer(screen: str) -> str:
    """The bottom line: the keys of what has the focus."""
    return screen.rstrip("\n").rpartition("\n")[2]


def ended(store: Store, run_id: str) -> str | None:
    events = FileStore(store.runs).load(run_id)
    return status(events) if events[-1].type == RUN_END else None


def test_the_page_shows_the_run_list_and_each_tab_runs_its_own_app(
    browser, served: Served, store: Store, tabs: list[Tab]
) -> None:
    # A shared link, followed from another site's page: the SameSite=Strict cookie is set,
    # and sent on by this site's own page.
    first = signed_in(browser, served, tabs, store, link=True)
    screen = first.screen()
    assert "Travel Agent" in screen and "parallel agent" in screen
    assert "awaiting" in first.line_with(store.awaiting[:8])
    # The token left the address bar, is not in the page, and its cookie is out of the
    # reach of the page's scripts and of other sites' requests.
    assert first.page.url == f"{served.url}/"
    assert TOKEN not in first.page.content()
    assert first.page.evaluate("document.cookie") == ""
    (cookie,) = first.context.cookies()
    assert (cookie["name"], cookie["value"]) == (f"agentor_tui_token_{served.port}", TOKEN)
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"]) == (True, "Strict", "/")
    second = signed_in(browser, served, tabs, store)
    apps = wait_for(lambda: len(served.app_processes()) == 2 and served.app_processes(), "2 apps")
    for pid in apps:
        # Each app is `python -m tui` with the app's arguments as written, without serve's,
        # and without the token in its environment.
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
        assert argv[1:] == ["-m", "tui", str(store.runs), *APP_ARGS]
        assert TOKEN not in environ(pid)
    second.close()
    tabs.remove(second)
    wait_for(lambda: len(served.app_processes()) == 1, "the closed tab's app to end")


def test_keys_work_as_the_page_shows_without_a_click_and_escapes_are_written_out(
    browser, served: Served, store: Store, tabs: list[Tab]
) -> None:
    # A run whose prompt holds an escape sequence: the page's fonts have no `␛` to draw.
    prompt = "Paint it \x1b[31mred"
    start = {"type": "run_start", "agent": "Paint Agent", "model": "m", "ts": 1.0}
    write_log(store.runs, "escapes", [{**start, "messages": [{"role": "user", "content": prompt}]}])
    tab = signed_in(browser, served, tabs, store)
    assert tab.page.evaluate("document.activeElement.className") == "xterm-helper-textarea"
    tab.page.keyboard.press("/")  # typed at the page: nothing clicked or focused first
    tab.wait_for(lambda s: "filter: id, agent" in s, "the filter bar")
    row = tab.line_with("escapes")
    assert "Paint it \\x1b[31mred" in row and "␛" not in tab.screen(), row


def test_r_on_the_interrupted_run_completes_it(
    browser, served: Served, store: Store, tabs: list[Tab]
) -> None:
    before = crashkit.tool_runs(store.tool_log)
    tab = signed_in(browser, served, tabs, store)
    assert "interrupted" in tab.line_with(store.interrupted[:8])
    show_only(tab, store.interrupted)
    tab.press("r")
    tab.wait_for(
        lambda s: "completed" in tab.line_with(store.interrupted[:8]), "the row to say completed"
    )
    assert ended(store, store.interrupted) == COMPLETED
    # The two tool calls had no results when the run was killed: each ran once more.
    runs = crashkit.tool_runs(store.tool_log) - before
    assert runs == {"get_weather London": 1, "get_weather Paris": 1}


def test_a_approves_the_awaiting_run(
    browser, served: Served, store: Store, tabs: list[Tab]
) -> None:
    before = crashkit.tool_runs(store.tool_log)
    tab = signed_in(browser, served, tabs, store)
    show_only(tab, store.awaiting)
    tab.press("Enter")  # into the approvals pane
    tab.wait_for(lambda s: "Approve" in footer(s), "the approvals pane's keys in the footer")
    tab.press("a")
    tab.wait_for(
        lambda s: "completed" in tab.line_with(store.awaiting[:8]), "the row to say completed"
    )
    events = FileStore(store.runs).load(store.awaiting)
    (decision,) = [e for e in events if e.type == APPROVAL]
    assert (decision.decision, decision.by) == ("approved", BY)
    assert ended(store, store.awaiting) == COMPLETED
    assert crashkit.tool_runs(store.tool_log) - before == {"book_hotel Rome": 1}


def test_without_the_token_nothing_is_served_and_no_app_starts(
    browser, served: Served, tabs: list[Tab]
) -> None:
    assert served.app_processes() == []
    tab = Tab(browser, served.url)
    tabs.append(tab)
    for address in (f"{served.url}/", f"{served.url}/?token={WRONG}"):
        answer = tab.page.goto(address)
        assert answer is not None and answer.status == 401
        assert "needs its token" in tab.page.inner_text("body")
    script = f"{served.url}/static/js/textual.js"
    cookie = f"agentor_tui_token_{served.port}"
    for headers in (
        {},
        {"Authorization": f"Bearer {WRONG}"},
        {"Cookie": f"{cookie}={WRONG}"},
        {"Cookie": f"{cookie}={TOKEN[:-1]}"},
    ):
        assert get(script, headers)[0] == 401, headers
    assert served.app_processes() == []
    # The same requests with the token are served.
    assert get(script, {"Authorization": f"Bearer {TOKEN}"})[0] == 200
    assert get(script, {"Cookie": f"{cookie}={TOKEN}"})[0] == 200


def test_the_websocket_without_the_token_is_refused_before_an_app_starts(
    served: Served,
) -> None:
    ws = served.url.replace("http:", "ws:") + "/ws?width=80&height=24"
    cookie = f"agentor_tui_token_{served.port}"
    own, foreign = {"Origin": served.url}, {"Origin": "http://evil.example"}
    refused = [
        ({**own}, 401),
        ({**own, "Cookie": f"{cookie}={WRONG}"}, 401),
        ({**own, "Authorization": f"Bearer {WRONG}"}, 401),
        # Another site's page cannot open it, even where the browser sends the cookie.
        ({**foreign, "Cookie": f"{cookie}={TOKEN}"}, 403),
    ]
    for headers, code in refused:
        assert in_thread(open_websocket(ws, headers)) == code, headers
        assert served.app_processes() == []
    # The token opens it, and an app starts (and ends with the socket).
    opened = in_thread(open_websocket(ws, {**own, "Cookie": f"{cookie}={TOKEN}"}))
    assert opened == 101
    wait_for(lambda: WS_OPENED.search(served.output()), "the websocket's end in the log")
    wait_for(lambda: not served.app_processes(), "its app to end")


def test_the_token_is_in_no_log(served: Served) -> None:
    """Every way in, right and wrong, through the address: the log has each request by its
    path (a websocket's once it closed), and no token."""
    assert get(f"{served.url}/?token={TOKEN}")[0] == 200  # signed in
    assert get(f"{served.url}/?token={WRONG}")[0] == 401
    assert get(f"{served.url}/static/css/xterm.css?token={TOKEN}")[0] == 200
    ws = served.url.replace("http:", "ws:") + "/ws?width=80&height=24&token="
    assert in_thread(open_websocket(ws + WRONG, {})) == 401
    assert in_thread(open_websocket(ws + TOKEN, {})) == 101
    wait_for(lambda: WS_OPENED.search(served.output()), "the websocket's end in the log")
    wait_for(lambda: not served.app_processes(), "its app to end")
    log = served.output()
    assert TOKEN not in log and WRONG not in log
    for line in ("GET / 200", "GET / 401", "GET /static/css/xterm.css 200", "GET /ws 401"):
        assert line in log, line


def test_closing_a_tab_during_a_resume_quits_its_app_and_lets_the_run_go(
    browser, served: Served, store: Store, model: FakeOpenAI, tabs: list[Tab]
) -> None:
    """The tab's app is told to quit, as SIGTERM tells a terminal's: the resume, waiting for
    the model, is stopped before it had a step to record, and the run is free again."""
    crash = {"dir": str(store.runs), "url": model.url, "scenario": "parallel"}
    before_crash = set(FileStore(store.runs).list_runs())
    killed = crashkit.spawn({**crash, "action": "start", "kill_after": 4})
    assert killed.wait(timeout=120) == -signal.SIGKILL
    (run_id,) = set(FileStore(store.runs).list_runs()) - before_crash
    log = store.runs / f"{run_id}.jsonl"
    written = log.read_bytes()
    script: servekit.HeldScript = model.script  # type: ignore[assignment]
    script.gate = threading.Event()  # the model holds its answers from now on
    try:
        tab = signed_in(browser, served, tabs, store)
        show_only(tab, run_id)
        asked = model.calls
        tab.press("r")
        wait_for(lambda: model.calls > asked, "the resume's model request")
        assert FileStore(store.runs).is_locked(run_id)  # held by the tab's app
        (app,) = served.app_processes()
        tab.close()
        tabs.remove(tab)
        wait_for(lambda: app not in served.app_processes(), "the tab's app to end")
        assert not FileStore(store.runs).is_locked(run_id)
        assert log.read_bytes() == written  # nothing recorded: no empty segment
    finally:
        script.gate.set()
