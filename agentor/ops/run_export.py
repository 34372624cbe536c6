"""Export a run: Markdown for a pull request or an issue, JSON for other tools, HTML to open.

`export(store, run_id, format)` returns the document as a `str` that always encodes as UTF-8:

- "md": the summary (agent, model, status, time, tokens, cost), the prompt, each turn with its
  tool calls (arguments, results, errors), approvals (the decision, who made it, its note or
  reason, an edit's arguments, a given result), the end and its answer. Every piece of
  text from the log is in a code span or a fenced block longer than any fence inside it, so
  nothing in it renders as Markdown or HTML (no link, no image loaded from anywhere).
- "json": one document, `{"format": "agentor-run", "version": 1, "run_id", "summary",
  "events", "bad_lines"}`: every event as the log has it, generations with their full
  messages (compact deltas rebuilt), costs as decimal strings (null when unknown), strict
  JSON (a NaN in a log becomes null).
- "html": one self-contained page: inline CSS, no script, no external resource, and a
  Content-Security-Policy that forbids both anyway; every text from the log escaped.

In Markdown and HTML, control characters from the log are made visible (agentor.literal):
an escape sequence in a result cannot act on a terminal that shows the file.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from agentor.engine.events import Event
from agentor.engine.history import summarize
from agentor.engine.store.api import LineKeepingStore, Store
from agentor.engine.store.run_ids import validate_run_id
from agentor.literal import literal as visible_text
from agentor.literal import literal_line as visible_line
from agentor.ops.pricing import generation_costs, run_cost
from agentor.ops.run_document import Block, Code, Facts, Heading, Span, build

FORMATS = ("md", "json", "html")
_BACKTICKS = re.compile(r"`+")


def export(store: Store, run_id: str, format: str = "md") -> str:
    """The run `run_id` of `store` as a document in `format` ("md", "json" or "html").

    An unknown run is a `RunNotFoundError` (a KeyError); an unknown format a `ValueError`.
    """
    if format not in FORMATS:
        raise ValueError(f"unknown export format {format!r}: use one of {', '.join(FORMATS)}")
    validate_run_id(run_id)
    events, bad = _load(store, run_id)
    if format == "json":
        return to_json(run_id, events, bad)
    blocks = build(run_id, events, len(bad))
    return to_markdown(blocks) if format == "md" else to_html(run_id, blocks)


def _load(store: Store, run_id: str) -> tuple[list[Event], list[tuple[int, str]]]:
    if isinstance(store, LineKeepingStore):  # it can say which lines it skipped
        events, bad = store.load_with_errors(run_id)
        return events, [(b.lineno, b.reason) for b in bad]
    return store.load(run_id), []


# -- JSON ----------------------------------------------------------------------------------------


def to_json(run_id: str, events: Sequence[Event], bad: Sequence[tuple[int, str]] = ()) -> str:
    s = summarize(run_id, events, len(bad))
    cost = run_cost(events)
    costs = generation_costs(events)
    docs = []
    for i, e in enumerate(events):
        d = e.to_dict()
        if i in costs:
            d["cost"] = None if costs[i] is None else str(costs[i])
        docs.append(d)
    document = {
        "format": "agentor-run",
        "version": 1,
        "run_id": run_id,
        "summary": {
            "status": s.status,
            "agent": s.agent,
            "model": s.model,
            "started_at": s.started_at,
            "ended_at": s.ended_at,
            "active_seconds": s.active_time(),
            "segments": s.segments,
            "turns": s.turns,
            "tool_calls": s.tool_calls,
            "usage": s.usage.to_dict(),
            "cost": {
                "usd": None if cost.total is None else str(cost.total),
                "priced_generations": cost.priced,
                "unpriced_generations": cost.unpriced,
            },
            "final_output": s.final_output,
            "error": s.error,
        },
        "events": docs,
        "bad_lines": [{"line": n, "reason": why} for n, why in bad],
    }
    text = json.dumps(_strict(document), indent=1, ensure_ascii=False, default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from a log: JSON escapes say them exactly
        text = json.dumps(_strict(document), indent=1, ensure_ascii=True, default=str)
    return text


def _strict(value: Any) -> Any:
    """`value` with NaN and infinities as None: strict JSON, which other tools can read."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strict(v) for v in value]
    return value


# -- Markdown ------------------------------------------------------------------------------------


def to_markdown(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append("#" * b.level + " " + _md_spans(b.spans))
        elif isinstance(b, Facts):
            out.append("\n".join(f"- **{label}:** {_md_spans(v)}" for label, v in b.items))
        else:
            label = _md_spans(b.label)
            if b.tone == "error":
                label = f"**{label}**"
            fence = _fence(b.text)
            body = _safe(visible_text(b.text))
            lang = "json" if b.kind == "json" else "text"
            out.append(f"{label}\n\n{fence}{lang}\n{body}\n{fence}")
    return "\n\n".join(out) + "\n"


def _md_spans(spans: Sequence[Span]) -> str:
    return "".join(_code_span(s.text) if isinstance(s, Code) else s for s in spans)


def _code_span(text: str) -> str:
    """`text` as an inline code span: delimited by more backticks than it holds in a row."""
    text = _safe(visible_line(text)) or " "
    ticks = "`" * (max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _fence(text: str) -> str:
    return "`" * max(3, max((len(m) for m in _BACKTICKS.findall(text)), default=0) + 1)


def _safe(text: str) -> str:
    """Text that encodes as UTF-8 (`visible_*` already shows lone surrogates as escapes)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


# -- HTML ----------------------------------------------------------------------------------------

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'none'"
_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
h3 { font-size: 1rem; margin-top: 1.5rem; border-top: 1px solid #ddd; padding-top: .75rem; }
code { font: 13px ui-monospace, Menlo, Consolas, monospace; background: #f2f2f4;
       padding: 0 .25em; border-radius: 3px; }
pre { background: #f6f6f8; border: 1px solid #e2e2e6; border-radius: 4px; padding: .6rem;
      overflow-x: auto; white-space: pre-wrap; word-break: break-word; }
pre code { background: none; padding: 0; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dt { font-weight: 600; } dd { margin: 0; }
.label { margin: .75rem 0 .25rem; } .error .label { color: #b00020; font-weight: 600; }
.error pre { border-color: #e8a0a8; background: #fff4f5; }
details > summary { cursor: pointer; color: #555; }
"""
_LONG = 4000  # characters past which a block starts folded (a <details>: no script needed)


def to_html(run_id: str, blocks: Sequence[Block]) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>Run {_h(run_id)} · agentor</title>",
        f"<style>{_STYLE}</style></head><body>",
    ]
    for b in blocks:
        parts.append(_html_block(b))
    parts.append("</body></html>")
    return _safe("\n".join(parts)) + "\n"


def _html_block(b: Block) -> str:
    if isinstance(b, Heading):
        return f"<h{b.level}>{_html_spans(b.spans)}</h{b.level}>"
    if isinstance(b, Facts):
        rows = "".join(f"<dt>{_h(k)}</dt><dd>{_html_spans(v)}</dd>" for k, v in b.items)
        return f"<dl>{rows}</dl>"
    body = f"<pre><code>{html.escape(visible_text(b.text), quote=True)}</code></pre>"
    if len(b.text) > _LONG:
        body = f"<details><summary>{len(b.text):,} characters</summary>{body}</details>"
    tone = ' class="error"' if b.tone == "error" else ""
    return f'<section{tone}><div class="label">{_html_spans(b.label)}</div>{body}</section>'


def _html_spans(spans: Sequence[Span]) -> str:
    return "".join(
        f"<code>{_h(visible_line(s.text))}</code>" if isinstance(s, Code) else _h(s) for s in spans
    )


def _h(text: str) -> str:
    return html.escape(text, quote=True)
