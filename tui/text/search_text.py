"""What the search over every run (`ctrl+f`) says: a run's heading, one matching event as a
line (line, type, field, the snippet with its match highlighted), and how the search stands.
Every piece from a log is literal. Plain Rich text: no widgets here."""

from __future__ import annotations

from rich.text import Text

from agentor.engine.store.matching import Hit
from agentor.literal import literal_line
from tui.text.formatting import short_id
from tui.text.run_line import fit
from tui.text.styles import MATCH_STYLE
from tui.text.timeline_line import type_label

FIELD_WIDTH = 24  # "messages[1].content", "args.city": longer ones are cut


def run_heading(run_id: str, prompt: str | None) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append("run ", "dim")
    out.append(literal_line(short_id(run_id), 80), "bold")
    if prompt:
        out.append(" · ", "dim")
        out.append(literal_line(prompt, 200), "dim")
    return out


def hit_line(hit: Hit) -> Text:
    """`  line 12  tool_result  result  …sunny in Paris…`, the match highlighted. The snippet
    (control characters already made visible by the search) is cut around the match only by
    the screen's width; its match is found again in the literal text, so a highlight never
    lands beside it."""
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"  line {hit.line:<6}", "dim")
    out.append(fit(type_label(hit.type), 12) + " ")
    out.append(fit(literal_line(hit.field, 80), FIELD_WIDTH) + "  ", "dim")
    snippet = literal_line(hit.snippet, 400)
    start = len(out)
    out.append(snippet)
    if snippet == hit.snippet and 0 <= hit.start < hit.end <= len(snippet):
        out.stylize(MATCH_STYLE, start + hit.start, start + hit.end)
    return out


def search_status(state: str, query: str, hits: int, runs: int) -> Text:
    q = literal_line(query, 80)
    found = f"{hits} match{'es' if hits != 1 else ''} in {runs} run{'s' if runs != 1 else ''}"
    words = {
        "searching": f"searching for {q!r}… {found} so far (esc stops)",
        "done": f"{found} for {q!r}" if hits else f"no event holds {q!r}",
        "stopped": f"stopped: {found} for {q!r}",
        "full": f"the first {found} for {q!r}: the search stopped there; narrow it",
    }
    return Text(words.get(state, ""), "italic" if state == "searching" else "")
