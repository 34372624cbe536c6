"""`Agentor.from_md(path)`: an agent described by a markdown file, as upstream Agentor reads it.

    ---
    name: Weather Agent
    tools: ["get_weather"]     # or "get_weather, other"
    model: gpt-4o
    temperature: 0.3
    ---
    The body is the agent's instructions.

Upstream resolves frontmatter tool names in its own registry of hosted tools; agentor-tui has
none, so named tools are ignored with a warning (as upstream ignores the names it does not
know) and tools are given with `tools=`, which wins over the frontmatter as upstream.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from pathlib import Path
from typing import Any

from agentor.engine.settings import ModelSettings

log = logging.getLogger("agentor")


def agent_options(path: str | os.PathLike[str], given: dict[str, Any]) -> dict[str, Any]:
    """The constructor's arguments for the agent `path` describes; `given` (the caller's
    keywords: model, tools, model_settings, ...) win over the frontmatter."""
    import frontmatter  # only when a markdown agent is read

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Markdown file not found: {path}")
    post = frontmatter.loads(path.read_text(encoding="utf-8"))
    meta = {str(key).lower(): value for key, value in (post.metadata or {}).items()}
    name = meta.get("name")
    if not name:
        raise ValueError("Agent name is required in the markdown frontmatter.")
    instructions = post.content.strip()
    if not instructions:
        raise ValueError("Agent instructions are required in the markdown body.")
    options = dict(given)
    options["model_settings"] = _settings(meta.get("temperature"), given.get("model_settings"))
    if options.get("tools") is None:
        _ignore_tool_names(path, meta.get("tools"))
        options.pop("tools", None)
    options["model"] = given.get("model") or meta.get("model") or "gpt-4o-mini"
    return {"name": str(name), "instructions": instructions, **options}


def _settings(temperature: Any, given: ModelSettings | None) -> ModelSettings | None:
    """`given`, with the frontmatter's temperature when it sets none (upstream's merge)."""
    if temperature is None:
        return given
    try:
        value = float(temperature)
    except (TypeError, ValueError):
        raise ValueError("Temperature in markdown frontmatter must be a number.") from None
    if given is None:
        return ModelSettings(temperature=value)
    if given.temperature is not None:
        return given
    merged = dataclasses.asdict(given)
    merged["temperature"] = value
    return ModelSettings(**merged)


def _ignore_tool_names(path: Path, names: Any) -> None:
    if not names:
        return
    if isinstance(names, str):
        listed = [n.strip() for n in names.split(",")]
    elif isinstance(names, list | tuple):
        listed = [str(n).strip() for n in names]
    else:
        raise ValueError("Tools in markdown frontmatter must be a string or a list.")
    listed = [n for n in listed if n]
    if listed:
        log.warning(
            "Ignoring unknown tools in %s: %s (agentor-tui has no registry of named tools: "
            "pass them with tools=)",
            path,
            ", ".join(listed),
        )
