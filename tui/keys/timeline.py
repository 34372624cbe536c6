"""The help screen's section "Timeline": its keys, each with the bindings behind it."""

from __future__ import annotations

from tui.keys.model import SCREEN, SEARCH_BAR, TIMELINE, Bind, Key

SECTION = (
    "Timeline",
    (
        Key(
            "/",
            "search its events as you type; enter goes to the first match, esc clears it",
            Bind(
                TIMELINE,
                "slash",
                "search",
                "Search",
                palette=("Search events", "Search the open run's events"),
            ),
            Bind(SEARCH_BAR, "enter", "submit", "First match"),
            Bind(SEARCH_BAR, "escape", "cancel", "Clear search"),
        ),
        Key(
            "n  N",
            "next and previous match (round the ends)",
            Bind(
                TIMELINE,
                "n",
                "next_match",
                "Next match",
                show=False,
                palette=("Next match", "The search's next match"),
            ),
            Bind(
                TIMELINE,
                "N,shift+n",
                "previous_match",
                "Previous match",
                show=False,
                palette=("Previous match", "The search's previous match"),
            ),
        ),
        Key(
            "e  E",
            "next and previous error: a tool error, a failed or max_turns end, a bad line",
            Bind(
                TIMELINE,
                "e",
                "next_error",
                "Next error",
                show=False,
                palette=(
                    "Next error",
                    "A tool error, a failed or max_turns end, an unreadable line",
                ),
            ),
            Bind(
                TIMELINE,
                "E,shift+e",
                "previous_error",
                "Previous error",
                show=False,
                palette=("Previous error", "The error before the cursor"),
            ),
        ),
        Key(
            "t  T",
            "next and previous tool call",
            Bind(
                TIMELINE,
                "t",
                "next_call",
                "Next tool call",
                show=False,
                palette=("Next tool call", "The next tool_call event"),
            ),
            Bind(
                TIMELINE,
                "T,shift+t",
                "previous_call",
                "Previous tool call",
                show=False,
                palette=("Previous tool call", "The tool_call event before the cursor"),
            ),
        ),
        Key(
            "f",
            "follow: keep the open run's newest event in view",
            Bind(
                SCREEN,
                "f",
                "follow",
                "Follow",
                palette=("Follow", "Keep the newest event in view"),
            ),
        ),
    ),
)
