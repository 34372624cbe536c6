"""An MCP tool server for tests, written with the `mcp` package's own low-level server API,
served over stdio or over Streamable HTTP on 127.0.0.1.

    python -m tests.mcp_tool_server stdio CONFIG_JSON
    python -m tests.mcp_tool_server http CONFIG_JSON     (binds a free port; writes it to
                                                          cfg["port_file"] once it listens)

CONFIG_JSON: {"calls": FILE, "tools_file": FILE, "hang": FILE, "release": FILE,
"token": SECRET, "env_token": NAME, "page": 2}

- Every `tools/call` it receives is appended to `calls` ({"tool", "args"} a line, fsynced)
  before anything else happens, so a test counts the calls a server got across processes.
- The tools it lists are read from `tools_file` at each `tools/list` (a JSON list of tool
  names, default every tool; "add+c" lists `add` with a third parameter): a test changes the
  list between a crash and a resume. Listing is paginated, `page` tools a page.
- `send` called with arguments it has not seen before appends them to `hang` (when given)
  and then blocks until the file `release` exists: a test kills the agent while the
  call is in flight. A call with the same arguments again answers at once.
- Over stdio it writes a line to its stderr when it starts; with "crash" (a text) it writes
  that text there and exits 3 instead.
- Over HTTP every request must carry `Authorization: Bearer <token>` (401 otherwise); over
  stdio `env_token` names an environment variable whose value's length `whoami` tells.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

TOOLS: dict[str, dict[str, Any]] = {
    "add": {
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    "echo": {
        "description": "Say the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    "fail": {
        "description": "Always fails, saying why.",
        "inputSchema": {"type": "object", "properties": {"why": {"type": "string"}}},
    },
    "weather": {
        "description": "The weather in a city, as structured data.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    "readme": {
        "description": "A text resource.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    "send": {
        "description": "Send a message (a side effect).",
        "inputSchema": {
            "type": "object",
            "properties": {"to": {"type": "string"}},
            "required": ["to"],
        },
    },
    "whoami": {
        "description": "Says what the server was given to know who it works for.",
        "inputSchema": {"type": "object", "properties": {}},
    },
}
# "add+c": `add` as a newer version of the server lists it (its schema changed).
ADD_C = {
    **TOOLS["add"],
    "inputSchema": {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer"},
            "c": {"type": "integer"},
        },
        "required": ["a", "b"],
    },
}


def listed(cfg: dict[str, Any]) -> list[types.Tool]:
    names = list(TOOLS)
    if cfg.get("tools_file") and os.path.exists(cfg["tools_file"]):
        names = json.loads(Path(cfg["tools_file"]).read_text())
    out = []
    for name in names:
        spec = ADD_C if name == "add+c" else TOOLS[name]
        out.append(
            types.Tool(
                name=name.split("+")[0],
                description=spec["description"],
                input_schema=spec["inputSchema"],
            )
        )
    return out


def note_call(cfg: dict[str, Any], name: str, args: dict[str, Any]) -> int:
    """Append the call to the calls file; how many equal calls (tool and arguments) it holds."""
    path = cfg["calls"]
    made = {"tool": name, "args": args}
    with open(path, "a") as f:
        f.write(json.dumps(made) + "\n")
        f.flush()
        os.fsync(f.fileno())
    lines = Path(path).read_text().splitlines()
    return sum(1 for line in lines if json.loads(line) == made)


def text(value: str) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=value)]


async def answer(cfg: dict[str, Any], name: str, args: dict[str, Any]) -> types.CallToolResult:
    nth = note_call(cfg, name, args)
    if name == "add":
        return types.CallToolResult(content=text(str(args["a"] + args["b"] + args.get("c", 0))))
    if name == "echo":
        return types.CallToolResult(content=text(args["text"]))
    if name == "fail":
        return types.CallToolResult(content=text(args.get("why") or "it failed"), is_error=True)
    if name == "weather":
        return types.CallToolResult(
            content=[], structured_content={"city": args.get("city"), "temp_c": 22}
        )
    if name == "readme":
        resource = types.TextResourceContents(uri="file:///README", text="Read me first.")
        return types.CallToolResult(
            content=[types.EmbeddedResource(type="resource", resource=resource)]
        )
    if name == "send":
        if nth == 1 and cfg.get("hang"):
            with open(cfg["hang"], "a") as f:
                f.write(json.dumps(args) + "\n")
            while not os.path.exists(cfg.get("release") or ""):
                await anyio.sleep(0.01)
        return types.CallToolResult(content=text(f"sent to {args['to']}"))
    if name == "whoami":
        token = os.environ.get(cfg.get("env_token") or "", "")
        return types.CallToolResult(content=text(f"a token of {len(token)} characters"))
    return types.CallToolResult(content=text(f"no tool {name}"), is_error=True)


def make_server(cfg: dict[str, Any]) -> Server[Any]:
    page = int(cfg.get("page") or 2)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = listed(cfg)
        start = int(params.cursor) if params is not None and params.cursor else 0
        rest = start + page
        return types.ListToolsResult(
            tools=tools[start:rest], next_cursor=str(rest) if rest < len(tools) else None
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await answer(cfg, params.name, dict(params.arguments or {}))

    return Server("test-tools", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(cfg: dict[str, Any]) -> None:
    from mcp.server.stdio import stdio_server

    # Noise on stderr, which the agent must keep out of its terminal; or a failed start.
    print(f"mcp test server: {cfg.get('crash') or 'starting'}", file=sys.stderr, flush=True)
    if cfg.get("crash"):
        raise SystemExit(3)
    server = make_server(cfg)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(cfg: dict[str, Any]) -> None:
    import uvicorn
    from starlette.responses import PlainTextResponse

    app = make_server(cfg).streamable_http_app()
    expected = f"Bearer {cfg['token']}" if cfg.get("token") else None

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and expected is not None:
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization", b"").decode() != expected:
                await PlainTextResponse("no entry", status_code=401)(scope, receive, send)
                return
        await app(scope, receive, send)

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)

    async def main() -> None:
        async def announce() -> None:
            while not server.started:
                await anyio.sleep(0.01)
            tmp = cfg["port_file"] + ".tmp"
            Path(tmp).write_text(str(sock.getsockname()[1]))
            os.replace(tmp, cfg["port_file"])

        async with anyio.create_task_group() as tg:
            tg.start_soon(announce)
            await server.serve(sockets=[sock])

    anyio.run(main)


if __name__ == "__main__":
    transport, config_json = sys.argv[1], sys.argv[2]
    config = json.loads(config_json)
    if transport == "stdio":
        anyio.run(serve_stdio, config)
    elif transport == "http":
        serve_http(config)
    else:
        raise SystemExit(f"unknown transport {transport!r}")
