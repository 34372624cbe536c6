"""The help screen's section "Event": its keys, each with the bindings behind it."""

from __future__ import annotations

from tui.keys.model import RAW_SCREEN, SCREEN, Bind, Key

SECTION = (
    "Event",
    (
        Key(
            "v",
            "the highlighted event's line as JSON (a compact generation decoded too)",
            Bind(
                SCREEN,
                "v",
                "view_raw",
                "Raw JSON",
                palette=("Raw JSON", "The highlighted event's line as JSON, scrollable"),
            ),
            Bind(RAW_SCREEN, "escape,v,q", "dismiss", "Close"),
        ),
        Key(
            "y",
            "copy its value: a tool result, a generation's or the final text, else its JSON",
            Bind(
                SCREEN,
                "y",
                "copy_value",
                "Copy value",
                palette=(
                    "Copy value",
                    "The highlighted event's result or text, else its JSON",
                ),
            ),
        ),
    ),
)
