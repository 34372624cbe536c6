"""MCP tool servers as tools: real servers written with the `mcp` package's own server API
(`tests/mcp_tool_server.py`), one over stdio (started by the agent for each segment) and one
over Streamable HTTP on 127.0.0.1, on a scripted model.

What is proved: a run uses both at once and its log records what each offered (listed across
pages); results (text, structured, resources) reach the model as text; `tool_prefix`; a name
another tool has is skipped with a warning; an `isError` result is the tool's error, recorded as
an exception is; header and environment secrets never reach the log, `agentor show` or the
terminal, nor does a stdio server's stderr; a server that cannot be reached (at resume, or a
stdio server that will not start) is a clear tool error and the run goes on; a changed tool
list is said once; the server used directly, as upstream Agentor's.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agentor
from agentor import Agentor, MCPServer, MCPServerStdio, function_tool
from agentor.engine.events import RUN_START, TOOL_CALL, TOOL_RESULT, Event
from agentor.engine.statuses import COMPLETED, MAX_TURNS
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests import mcpkit
from tests.approvalkit import summary
from tests.conftest import ROOT
from tests.mcp_tool_server import TOOLS

AGENTOR = Path(sys.executable).parent / "agentor"
ALL_TOOLS = list(TOOLS)  # the order the server lists them in, two a page


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    cfg = mcpkit.server_config(tmp_path_factory.mktemp("mcp"), "remote")
    with mcpkit.HttpToolServer(cfg) as server:
        yield server


def scripted(*asks: tuple[str, dict[str, Any]]) -> ScriptedModel:
    """A model that asks for `asks` at once, then answers with the tool messages, joined."""
    model = ScriptedModel(lambda m: summary(m) if m[-1]["role"] == "tool" else turn(m))

    def turn(messages: list[dict[str, Any]]) -> Any:
        return model.calls(*asks)

    return model


def starts(runs: Path, run_id: str) -> list[Event]:
    return [e for e in FileStore(runs).load(run_id) if e.type == RUN_START]


def received(server: mcpkit.HttpToolServer, tool: str, args: dict[str, Any]) -> int:
    return sum(1 for c in mcpkit.calls(server.cfg, tool) if c["args"] == args)


def agentor_show(runs: Path, run_id: str, *more: str) -> str:
    proc = subprocess.run(
        [str(AGENTOR), "show", run_id, "--dir", str(runs), *more],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


def test_one_run_uses_a_stdio_and_an_http_server_and_records_what_each_offered(tmp_path, http):
    runs = tmp_path / "runs"
    local_cfg = mcpkit.server_config(tmp_path, "local")
    local = mcpkit.stdio_server(local_cfg, name="local", tool_prefix="local_")
    model = scripted(
        ("local_add", {"a": 2, "b": 3}),
        ("echo", {"text": "both at once"}),
        ("weather", {"city": "Oslo"}),
        ("readme", {}),
    )
    agent = Agentor("Both", model=model, tools=[local, http.server(name="remote")], store=runs)

    result = agent.run("Use both servers.")

    assert result.status == COMPLETED
    # Text, text again, structured content (as JSON), an embedded text resource.
    structured = json.dumps({"city": "Oslo", "temp_c": 22})
    assert result.final_output == f"5 | both at once | {structured} | Read me first."
    assert mcpkit.calls(local_cfg) == [{"tool": "add", "args": {"a": 2, "b": 3}}]
    assert received(http, "echo", {"text": "both at once"}) == 1

    [start] = starts(runs, result.run_id)
    on_local, on_remote = start.mcp
    assert on_local["server"] == "local" and on_local["transport"] == "stdio"
    assert on_local["command"][:4] == [sys.executable, "-m", "tests.mcp_tool_server", "stdio"]
    assert on_remote == {
        "server": "remote",
        "transport": "streamable-http",
        "url": http.url,
        "headers": ["Authorization"],
        "tools": on_remote["tools"],
    }
    # Every page of the listing (seven tools, two a page), each with its schema.
    assert [t["name"] for t in on_local["tools"]] == [f"local_{n}" for n in ALL_TOOLS]
    assert [t["name"] for t in on_remote["tools"]] == ALL_TOOLS
    assert on_local["tools"][0] == {
        "name": "local_add",
        "remote": "add",
        "description": "Add two integers.",
        "parameters": TOOLS["add"]["inputSchema"],
    }
    offered = [t["function"]["name"] for t in model.tools_seen[0]]
    assert offered == [f"local_{n}" for n in ALL_TOOLS] + ALL_TOOLS
    assert [t["function"]["name"] for t in start.tools or []] == offered
    # Each call and result names the server its tool came from.
    servers = {(e.type, e.name): e.server for e in result.events if e.call_id}
    assert servers[(TOOL_CALL, "local_add")] == servers[(TOOL_RESULT, "local_add")] == "local"
    assert servers[(TOOL_CALL, "echo")] == servers[(TOOL_RESULT, "readme")] == "remote"


def test_a_name_another_tool_has_is_skipped_with_a_warning_and_a_prefix_tells_them_apart(
    tmp_path, http, caplog
):
    @function_tool
    def echo(text: str) -> str:
        """The agent's own echo."""
        return f"own echo: {text}"

    model = scripted(("echo", {"text": "whose?"}), ("remote_echo", {"text": "prefixed"}))
    plain = http.server(name="plain")
    prefixed = http.server(name="prefixed", tool_prefix="remote_")
    agent = Agentor("Echoes", model=model, tools=[echo, plain, prefixed], store=tmp_path)

    with caplog.at_level(logging.WARNING, logger="agentor"):
        result = agent.run("Echo twice.")

    assert result.final_output == "own echo: whose? | prefixed"
    assert received(http, "echo", {"text": "whose?"}) == 0  # the agent's own tool answered
    assert received(http, "echo", {"text": "prefixed"}) == 1
    [start] = starts(tmp_path, result.run_id)
    assert start.mcp[0]["shadowed"] == ["echo"]
    assert "echo" not in [t["name"] for t in start.mcp[0]["tools"]]
    assert [t["name"] for t in start.mcp[1]["tools"]] == [f"remote_{n}" for n in ALL_TOOLS]
    assert (
        "MCP server plain exposes 'echo', which shadows an existing tool; "
        "use tool_prefix to disambiguate."
    ) in caplog.messages


def test_an_is_error_result_is_the_tools_error_recorded_as_an_exception_is(tmp_path, http):
    @function_tool
    def explode() -> str:
        """Raises."""
        raise RuntimeError("boom")

    model = scripted(("fail", {"why": "disk full"}), ("explode", {}))
    agent = Agentor("Fails", model=model, tools=[http.server(), explode], store=tmp_path)

    result = agent.run("Fail twice.")

    results = {e.name: e for e in result.events if e.type == TOOL_RESULT}
    assert results["fail"].error == "MCPToolError: disk full"
    assert results["explode"].error == "RuntimeError: boom"
    assert results["fail"].result is None and results["explode"].result is None
    assert result.final_output == "Error: MCPToolError: disk full | Error: RuntimeError: boom"


ENV_SECRET = "env-secret-5a4b3c2d1e0f"
ARG_SECRET = "arg-secret-0f1e2d3c4b5a"
QUERY_SECRET = "query-secret-77aa88bb99"


def test_header_and_environment_secrets_never_reach_the_log_the_screen_or_the_terminal(
    tmp_path, http, capfd
):
    runs = tmp_path / "runs"
    cfg = mcpkit.server_config(tmp_path, "local", env_token="MCP_TEST_TOKEN")
    local = mcpkit.stdio_server(
        cfg,
        "--token",
        ARG_SECRET,
        name="local",
        tool_prefix="local_",
        env={"MCP_TEST_TOKEN": ENV_SECRET},
    )
    remote = MCPServer(
        f"{http.url}?key={QUERY_SECRET}", headers={"Authorization": f"Bearer {mcpkit.TOKEN}"}
    )
    gone = MCPServer(f"http://127.0.0.1:9/mcp?key={QUERY_SECRET}", name="gone", timeout=10)
    model = scripted(("local_whoami", {}), ("echo", {"text": "through the header"}))
    agent = Agentor("Secrets", model=model, tools=[local, remote, gone], store=runs)

    result = agent.run("Who are you?")

    # The server got the environment value (its length) and the header (it refuses without).
    assert result.final_output == f"a token of {len(ENV_SECRET)} characters | through the header"
    [start] = starts(runs, result.run_id)
    assert start.mcp[0]["command"][-2:] == ["--token", "***"]
    assert start.mcp[0]["env"] == ["MCP_TEST_TOKEN"]
    assert start.mcp[1]["server"] == start.mcp[1]["url"] == f"{http.url}?key=***"
    assert "cannot be reached (http://127.0.0.1:9/mcp?key=***)" in start.mcp[2]["error"]
    secrets = [ENV_SECRET, ARG_SECRET, QUERY_SECRET, mcpkit.TOKEN]
    written = b"".join(p.read_bytes() for p in runs.rglob("*") if p.is_file())
    shown = agentor_show(runs, result.run_id) + agentor_show(runs, result.run_id, "--json")
    terminal = capfd.readouterr()
    for secret in secrets:
        assert secret.encode() not in written
        assert secret not in shown
        assert secret not in terminal.out + terminal.err
    assert "mcp test server" not in terminal.err  # the stdio server's stderr is kept apart


def test_a_server_down_at_resume_is_a_clear_tool_error_and_the_run_goes_on(tmp_path):
    runs = tmp_path / "runs"
    cfg = mcpkit.server_config(tmp_path, "flaky")
    server = mcpkit.HttpToolServer(cfg)
    # Echo in each of the first two turns (one a segment), then the answer.
    model = ScriptedModel(
        lambda m: summary(m) if len(model.requests) > 2 else model.calls(("echo", {"text": "hi"}))
    )
    tools = [server.server(name="flaky")]
    agent = Agentor("Flaky", model=model, tools=tools, store=runs, max_turns=1)
    first = agent.run("Echo.")
    assert first.status == MAX_TURNS and received(server, "echo", {"text": "hi"}) == 1
    server.stop()

    done = agent.clone(max_turns=5).resume(first.run_id)

    assert done.status == COMPLETED
    unreachable = (
        f"MCP server 'flaky' cannot be reached ({server.url}): "
        "ConnectError: All connection attempts failed"
    )
    errors = [e.error for e in done.events if e.type == TOOL_RESULT and e.error]
    assert errors == [f"MCPServerError: {unreachable}"]
    assert done.final_output.endswith(f"Error: MCPServerError: {unreachable}")
    later = starts(runs, first.run_id)[-1]
    assert later.mcp[0]["error"] == unreachable
    # The tools it listed before are offered as they were: a call of one says why it fails.
    assert model.tools_seen[-1] == model.tools_seen[0]
    assert f"⚠ {unreachable}" in agentor_show(runs, first.run_id)


def test_a_stdio_server_that_will_not_start_is_said_with_its_stderr_and_the_run_goes_on(
    tmp_path, capfd
):
    cfg = mcpkit.server_config(tmp_path, "broken", crash="no database at /nowhere")
    model = ScriptedModel([ScriptedModel.text("No tools today.")])
    agent = Agentor("Broken", model=model, tools=[mcpkit.stdio_server(cfg)], store=tmp_path)

    result = agent.run("Anything?")

    assert (result.status, model.tools_seen) == (COMPLETED, [[]])
    [start] = starts(tmp_path, result.run_id)
    error = start.mcp[0]["error"]
    assert error.startswith(f"MCP server {Path(sys.executable).name!r} cannot be reached")
    assert error.endswith("its stderr ends: mcp test server: no database at /nowhere")
    assert "mcp test server" not in capfd.readouterr().err


def test_a_changed_tool_list_is_said_once_and_the_model_gets_it_as_it_is_now(tmp_path):
    runs = tmp_path / "runs"
    tools_file = tmp_path / "tools.json"
    tools_file.write_text(json.dumps(["add", "echo", "send"]))
    cfg = mcpkit.server_config(tmp_path, "changing", tools_file=str(tools_file))
    asks = iter([("add", {"a": 1, "b": 1}), ("send", {"to": "ann"}), ("echo", {"text": "x"})])
    model = ScriptedModel(
        lambda m: model.calls(next(asks)) if len(model.requests) < 4 else summary(m)
    )
    with mcpkit.HttpToolServer(cfg) as server:
        agent = Agentor("Changing", model=model, tools=[server.server()], store=runs, max_turns=2)
        run_id = agent.run("Go.").run_id  # add, then send: max_turns
        tools_file.write_text(json.dumps(["add+c", "echo", "whoami"]))
        assert agent.clone(max_turns=1).resume(run_id).status == MAX_TURNS  # echo
        assert agent.resume(run_id).status == COMPLETED

    changed = [s.mcp[0].get("changed") for s in starts(runs, run_id)]
    assert changed == [
        None,
        [{"name": "add", "change": "schema changed"}, {"name": "send", "change": "gone"}],
        None,  # said once: the segment after does not say it again
    ]
    now = [t["function"]["name"] for t in model.tools_seen[2]]
    assert now == ["add", "echo", "whoami"]
    shown = agentor_show(runs, run_id)
    said = "tools this run used have changed: add (schema changed), send (gone)"
    assert shown.count(said) == 1


async def test_the_server_used_directly_as_upstream_agentors(http):
    async with http.server(name="direct") as server:
        tools = {t.name: t for t in await server.list_tools()}
        assert list(tools) == ALL_TOOLS
        assert await tools["add"].invoke({"a": 20, "b": 22}) == "42"
    with pytest.raises(RuntimeError, match="is not connected"):
        await server.list_tools()


async def test_a_tool_called_directly_fails_with_agentor_errors(http):
    """What reaches code that calls a server's tools itself: the tool's own error, and a
    server no longer connected, each an `AgentorError` importable from `agentor`."""
    async with http.server(name="direct") as server:
        tools = {t.name: t for t in await server.list_tools()}
        with pytest.raises(agentor.MCPToolError, match=r"^disk full$") as failed:
            await tools["fail"].invoke({"why": "disk full"})
    assert isinstance(failed.value, agentor.AgentorError)
    with pytest.raises(agentor.MCPServerError, match="is not connected") as gone:
        await tools["add"].invoke({"a": 1, "b": 2})
    assert isinstance(gone.value, agentor.AgentorError)


def test_what_cannot_be_a_server_is_refused_where_it_is_written():
    with pytest.raises(ValueError, match="takes an http:// or https:// URL; got 'ftp://x'"):
        MCPServer("ftp://x")
    with pytest.raises(TypeError, match="args takes a sequence of strings"):
        MCPServerStdio("server", "--verbose")
    with pytest.raises(ValueError, match="on_interrupt takes 'rerun' or 'ask'; got 'maybe'"):
        MCPServer("http://127.0.0.1:9/mcp", on_interrupt="maybe")
    with pytest.raises(ValueError, match="on_interrupt takes 'rerun' or 'ask'"):
        function_tool(on_interrupt="never")
    same = [MCPServer("http://127.0.0.1:9/mcp", name="a"), MCPServerStdio("x", name="a")]
    with pytest.raises(ValueError, match=r"MCP server names must be unique \(give name=...\)"):
        Agentor("Twins", model=ScriptedModel([]), tools=same)


def test_ls_and_show_read_the_mcp_record_without_loading_the_engines_tools() -> None:
    """`agentor ls` and `show` start without pydantic: the MCP record's words are read by
    agentor.engine.mcp_record, which needs none of the engine's tools."""
    code = (
        "import sys\n"
        "import agentor.cli.runs_cmd, agentor.cli.lines\n"
        "heavy = ('pydantic', 'openai', 'mcp', 'agentor.engine.mcp', 'agentor.engine.tools')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert (proc.returncode, proc.stdout.strip()) == (0, "[]"), proc.stderr
