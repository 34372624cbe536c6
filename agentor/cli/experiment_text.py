"""An experiment as text: the lines `agentor experiment run|show` print, and its export as
Markdown or HTML. Everything from a run or a user (names, outputs, errors, scorer specs) is
made literal: one line, no terminal escapes; in HTML, escaped. The summary's words are
`agentor.experiments.summary_text`'s, which the TUI shows too."""

from __future__ import annotations

import html
from collections.abc import Iterable

from agentor.experiments.experiment import Experiment, Pair
from agentor.experiments.summary_text import (
    UNITS,
    counts_text,
    delta_text,
    score_text,
    scorer_text,
    verdict_word,
)
from agentor.literal import literal_line


def experiment_lines(e: Experiment) -> list[str]:
    """What `agentor experiment run` and `show` print: the summary, then one line a pair."""
    d, s = e.definition, e.summary
    out = [
        f"experiment {d.id}  {literal_line(d.name, 80)}",
        f"  change: {literal_line(d.change, 100)}; match {d.match}, novel calls: {d.novel}",
        f"  {counts_text(e)}",
        f"  regressions {s.regressions}, improvements {s.improvements}",
    ]
    for name, interval in s.deltas.items():
        out.append(f"  {name:<8} {delta_text(interval, UNITS.get(name, ''))}")
    out.extend(f"  {scorer_text(spec, scored)}" for spec, scored in s.scorers.items())
    if e.pairs:
        out.append("pairs:")
        out.extend(f"  {pair_line(p)}" for p in e.pairs)
    return out


def pair_line(p: Pair) -> str:
    """`BASELINE -> CANDIDATE  completed -> diverged  output changed  tools different  ...`"""
    mark = "REGRESSED" if p.regressed else verdict_word(p)
    parts = [
        f"{p.baseline[:12]} -> {p.candidate[:12]}",
        f"{p.status[0]} -> {p.status[1]}",
    ]
    if p.measures is not None:
        parts.append("output changed" if p.measures.output_changed else "output same")
        parts.append(f"tools {p.measures.tools}")
        parts.append(f"served {p.measures.served}, executed {p.measures.executed}")
    for spec, value in p.scores.items():
        parts.append(f"{literal_line(spec, 30)}={literal_line(score_text(value), 40)}")
    if p.error:
        parts.append(f"error: {literal_line(p.error, 80)}")
    if mark:
        parts.append(mark)
    return "  ".join(parts)


def export_markdown(e: Experiment) -> str:
    """The experiment as a Markdown document: the summary, then a table of the pairs."""
    d = e.definition
    lines = [
        f"# Experiment {d.id}",
        "",
        f"{_md(d.name)}",
        "",
        *(f"    {line}" for line in experiment_lines(e)[1 : _summary_end(e)]),
        "",
        "| baseline | candidate | status | output | tools | scores | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in e.pairs:
        lines.append(
            "| "
            + " | ".join(
                _md(cell)
                for cell in (
                    p.baseline,
                    p.candidate,
                    f"{p.status[0]} → {p.status[1]}",
                    _changed(p.output_changed),
                    "-" if p.measures is None else p.measures.tools,
                    "; ".join(f"{k}: {score_text(v)}" for k, v in p.scores.items()),
                    verdict_word(p),
                )
            )
            + " |"
        )
    return "\n".join(lines) + "\n"


def _summary_end(e: Experiment) -> int:
    lines = experiment_lines(e)
    return lines.index("pairs:") if "pairs:" in lines else len(lines)


def _changed(value: bool | None) -> str:
    return "-" if value is None else ("changed" if value else "same")


def _md(text: str) -> str:
    """A table cell or a line: one line, literal, Markdown's own characters escaped."""
    text = literal_line(text, 200)
    for ch in "\\`*_[]<>|#":
        text = text.replace(ch, "\\" + ch)
    return text


def export_html(e: Experiment) -> str:
    """The experiment as one self-contained HTML page (no script; every value escaped)."""
    d = e.definition
    summary = experiment_lines(e)[1 : _summary_end(e)]
    rows = "\n".join(_row(p) for p in e.pairs)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Experiment {_h(d.id)}</title>
<style>body{{font-family:system-ui,sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:left}}.regressed{{background:#fdd}}
.improved{{background:#dfd}}pre{{background:#f6f6f6;padding:1em}}</style></head>
<body><h1>Experiment {_h(d.id)}</h1><p>{_h(d.name)}</p>
<pre>{_h(chr(10).join(line.strip() for line in summary))}</pre>
<table><tr><th>baseline</th><th>candidate</th><th>status</th><th>output</th><th>tools</th>
<th>scores</th><th>verdict</th></tr>
{rows}
</table></body></html>
"""


def _row(p: Pair) -> str:
    verdict = verdict_word(p)
    cells: Iterable[str] = (
        p.baseline,
        p.candidate,
        f"{p.status[0]} → {p.status[1]}",
        _changed(p.output_changed),
        "-" if p.measures is None else p.measures.tools,
        "; ".join(f"{k}: {score_text(v)}" for k, v in p.scores.items()),
        verdict,
    )
    return f'<tr class="{verdict}">' + "".join(f"<td>{_h(c)}</td>" for c in cells) + "</tr>"


def _h(text: str) -> str:
    return html.escape(literal_line(text, 500))
