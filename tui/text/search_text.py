"""What the search over every run (`ctrl+f`) says: a run's heading, one matching event as a
line (line, type, field, the snippet with its match highlighted), and how the search stands.
Every piece from a log is literal. Plain Rich text: no widgets here."""

from __future__ import annotations

from rich.text import Text

from agentor.engine.store.matching import Hit
from agentor.literal import literal_line
from tui.text.event_views import type_label
from tui.text.formatting import short_id
from tui.text.run_line import fit
from tui.text.styles import MATCH_STYLE

FIELD_WIDTH = 24  # "messages[1].content", "args.city": longer ones are cut


def run_heading(run_id: str, prompt: str | None) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append("run ", "dim")
    out.append(literal_line(short_id(run_id), 80), "bold")
    if prompt:
        out.append(" · ", "dim")
        out.append(literal_line(prompt, 200), "dim")
    return out


def hit_line(hit: Hit, width: int | None = None) -> Text:
    """`  line 12  tool_result  result  …sunny in Paris…`, the match highlighted. The snippet
    (control characters already made visible by the search) is cut to the `width` left for it
    (None: as it is), around its match, so the match is always on screen; the match is found
    again in the literal text, so a highlight never lands beside it."""
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"  line {hit.line:<6}", "dim")
    out.append(fit(type_label(hit.type), 12) + " ")
    field_width = FIELD_WIDTH if width is None else max(12, min(FIELD_WIDTH, width // 5))
    out.append(fit(literal_line(hit.field, 80), field_width) + "  ", "dim")
    snippet = literal_line(hit.snippet, 400)
    start, end = hit.start, hit.end
    if snippet != hit.snippet or not 0 <= start < end <= len(snippet):
        start = end = 0  # the match is not where the search said: nothing to highlight
    if width is not None:
        snippet, start, end = around_match(snippet, start, end, width - out.cell_len)
    at = len(out)
    out.append(snippet)
    if start < end:
        out.stylize(MATCH_STYLE, at + start, at + end)
    return out


def around_match(text: str, start: int, end: int, room: int) -> tuple[str, int, int]:
    """`text` cut to `room` characters around its match `text[start:end]`, the match in the
    middle, "…" where something was cut; with the match's place in what is left. A match
    longer than the room keeps its beginning."""
    if len(text) <= room:
        return text, start, end
    room = max(room, 3)
    if end - start > room - 2:  # the match alone fills the room
        return "…" + text[start : start + room - 2] + "…", 1, room - 1
    lo = max(0, start - (room - (end - start)) // 2)
    hi = min(len(text), lo + room)
    lo = max(0, hi - room)
    cut = text[lo:hi]
    if lo > 0:
        cut = "…" + cut[1:]
    if hi < len(text):
        cut = cut[:-1] + "…"
    return cut, start - lo, end - lo


def search_status(state: str, query: str, hits: int, runs: int) -> Text:
    q = literal_line(query, 80)
    found = f"{hits} match{'es' if hits != 1 else ''} in {runs} run{'s' if runs != 1 else ''}"
    words = {
        "searching": f"searching for {q!r}… {found} so far (esc stops)",
        "done": f"{found} for {q!r}" if hits else f"no run contains {q!r}",
        "stopped": f"stopped: {found} for {q!r}",
        "full": f"the first {found} for {q!r}: the search stopped there; narrow it",
    }
    return Text(words.get(state, ""), "italic" if state == "searching" else "")
