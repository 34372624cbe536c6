"""A small MCP tool server for trying MCP tools out: a notebook, over stdio, written with the
`mcp` package's own server API (`pip install 'agentor-tui[mcp]'`).

    notes = MCPServerStdio(sys.executable, ["examples/mcp_notes_server.py"], name="notes")
    agent = Agentor("Note taker", tools=[notes])

docs/mcp.md runs it in its samples.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")
NOTES: list[str] = []


@server.tool()
def add_note(text: str) -> str:
    """Keep a note."""
    NOTES.append(text)
    return f"kept note {len(NOTES)}: {text}"


@server.tool()
def count_words(text: str) -> int:
    """How many words a text has."""
    return len(text.split())


if __name__ == "__main__":
    server.run("stdio")
