"""The Rich styles that carry meaning on screen: statuses, event types, conversation roles."""

from __future__ import annotations

from agentor.engine.events import (
    FORK,
    GENERATION,
    MESSAGE,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_RESULT,
)
from agentor.engine.statuses import (
    COMPLETED,
    FAILED,
    INTERRUPTED,
    MAX_TURNS,
    RUNNING,
    STOPPING,
    UNREADABLE,
)

# Status colours mean something (k9s / lazygit): cyan is alive, yellow wants a hand, red broke,
# violet is on its way down. Textual draws ANSI `yellow` as its theme's orange (#fd971f);
# `bright_yellow` is yellow on screen, as the help and the README say.
STATUS_STYLES = {
    RUNNING: "bold cyan",
    STOPPING: "bold #9d65ff",
    INTERRUPTED: "bold bright_yellow",
    FAILED: "bold red",
    MAX_TURNS: "bold red",
    UNREADABLE: "red",
    COMPLETED: "dim",
}
TYPE_STYLES = {
    RUN_START: "bold green",
    GENERATION: "blue",
    TOOL_CALL: "yellow",
    TOOL_RESULT: "green",
    MESSAGE: "default",
    RUN_END: "bold",
    FORK: "magenta",
}
ROLE_STYLES = {
    "system": "bold magenta",
    "user": "bold green",
    "assistant": "bold cyan",
    "tool": "bold yellow",
}
ERROR_STYLE = "red"
