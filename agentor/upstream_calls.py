"""Calls of upstream Agentor's `Agentor` that this project offers as they are, besides the
run itself: `from_md`, `chat`, and `serve` refused in one line. `Agentor` inherits them."""

from __future__ import annotations

import os
from typing import Any

from agentor.call_options import for_call
from agentor.unsupported import serve_refused


class UpstreamCalls:
    @classmethod
    def from_md(cls, md_path: str | os.PathLike[str], **options: Any) -> Any:
        """The agent a markdown file describes: frontmatter `name`, `model`, `temperature`
        (`tools` names are ignored: pass `tools=`), the body as its instructions. `options`
        are the constructor's (model, tools, output_type, store, ...) and win over the file
        (agentor/markdown_agent.py)."""
        from agentor.markdown_agent import agent_options

        return cls(**agent_options(md_path, options))

    async def chat(
        self, input: Any, stream: bool = False, serialize: bool = True, tracing: Any = None
    ) -> Any:
        """Upstream's `chat`: `arun(input)`; with `stream=True`, `stream_chat(input)` (this
        project's stream of the run's events; `serialize` is not used)."""
        agent: Any = self
        if stream:
            return for_call(agent, None, None, tracing).stream_chat(input)
        return await agent.arun(input, tracing=tracing)

    def serve(self, *args: Any, **kwargs: Any) -> None:
        """Upstream's HTTP and A2A server: not offered."""
        raise serve_refused()
