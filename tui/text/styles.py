"""The Rich styles that carry meaning on screen: statuses, decisions, conversation roles, forks
(each event type's colour is in its view: tui.text.event_views)."""

from __future__ import annotations

from agentor.engine.approval.pending import APPROVED, REJECTED
from agentor.engine.statuses import (
    AWAITING_APPROVAL,
    COMPLETED,
    DIVERGED,
    FAILED,
    INTERRUPTED,
    MAX_TURNS,
    RUNNING,
    STOPPING,
    UNREADABLE,
)

# Status colours mean something (k9s / lazygit): cyan is alive, yellow wants a hand, pink
# wants a person's decision, red broke, violet is on its way down, blue went where its
# recording does not go (a replay that stopped at a call with no recorded answer). Textual
# draws ANSI `yellow` as its theme's orange (#fd971f); `bright_yellow` is yellow on screen, as
# the help and the manual (docs/tui.md) say. Pink is a colour of its own (ANSI magenta is
# drawn close to red or to violet).
AWAITING_STYLE = "bold #ff5fd7"
STATUS_STYLES = {
    AWAITING_APPROVAL: AWAITING_STYLE,
    RUNNING: "bold cyan",
    STOPPING: "bold #9d65ff",
    INTERRUPTED: "bold bright_yellow",
    FAILED: "bold red",
    MAX_TURNS: "bold red",
    DIVERGED: "bold #5f87ff",
    UNREADABLE: "red",
    COMPLETED: "dim",
}
# A generation answered by a fallback model (the primary failed).
FALLBACK_STYLE = "bright_yellow"
# How a replay's tool result was answered (agentor.engine.fork.recording.answered): served from
# the record, with arguments other than the recorded call's (fifo), run live, or refused.
ANSWER_STYLES = {
    "served": "green",
    "drift": "bright_yellow",
    "executed": "bold #ff8700",
    "refused": "dim",
}
# A person's decision on a gated call.
DECISION_STYLES = {APPROVED: "bold green", REJECTED: "bold red"}
ROLE_STYLES = {
    "system": "bold magenta",
    "user": "bold green",
    "assistant": "bold cyan",
    "tool": "bold yellow",
}
ERROR_STYLE = "red"
# A fork's mark (the run list, the fork tree, the detail pane) and its colour (a fork event's).
FORK_MARK = "⑂"
FORK_STYLE = "magenta"

MATCH_STYLE = "black on yellow"  # a search's matches (the timeline's, every run's)
