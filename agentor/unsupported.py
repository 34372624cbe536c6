"""What upstream Agentor offers that agentor-tui does not, refused in one line where a user
meets it (docs/structured-output.md has the whole table)."""

from __future__ import annotations

from typing import Any


def check_engine(engine: Any) -> None:
    if engine not in (None, "native"):
        raise ValueError(
            f"Unknown engine {engine!r}. The openai-agents engine was removed in v0.1.0; the "
            "native engine is the only one and is the default. Drop the engine= argument."
        )


def check_skills(skills: Any) -> None:
    if skills:
        raise ValueError("skills= (upstream's skill files) is not offered by agentor-tui")


def serve_refused() -> NotImplementedError:
    return NotImplementedError(
        "serve() (upstream's HTTP and A2A server) is not offered by agentor-tui; "
        "`agentor-tui` watches and steers runs instead"
    )
