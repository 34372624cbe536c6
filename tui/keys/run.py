"""The help screen's section "Run": its keys, each with the bindings behind it."""

from __future__ import annotations

from tui.keys.model import SCREEN, Bind, Key

SECTION = (
    "Run",
    (
        Key(
            "r",
            "resume an interrupted, failed or max_turns run, here",
            Bind(
                SCREEN,
                "r",
                "resume",
                "Resume",
                palette=("Resume run", "Resume the selected run in this process"),
            ),
        ),
        Key(
            "x",
            "stop the resume: a running tool is waited for and its result recorded (the run "
            "shows stopping); it stays resumable",
            Bind(
                SCREEN,
                "x",
                "stop_resume",
                "Stop",
                palette=(
                    "Stop resume",
                    "Stop the resume in flight; the run stays resumable",
                ),
            ),
        ),
        Key(
            "c",
            "copy the run id (the notice shows it whole)",
            Bind(
                SCREEN,
                "c",
                "copy_id",
                "Copy id",
                palette=("Copy run id", "Copy the selected run's id"),
            ),
        ),
        Key(
            "ctrl+r",
            "reload the directory (with --no-watch)",
            Bind(
                SCREEN,
                "ctrl+r",
                "reload",
                "Reload",
                palette=("Reload", "Read the directory again, when not watching it"),
            ),
        ),
    ),
)
