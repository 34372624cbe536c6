"""What the experiments screens say: a store's experiments as list lines (`E`), an experiment's
summary above its pairs (`summary_text`), its pairs as table lines (`pair_line`) in the order
a sort gives (`sorts`, `s` cycles them), and the highlighted pair said whole (`pair_detail`).
Plain Rich text, every value from a run or a user literal: no widgets here. The summary's
words are `agentor.experiments.summary_text`'s, as `agentor experiment show` prints them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from agentor.durations import duration
from agentor.experiments.experiment import Experiment, Pair
from agentor.experiments.listing import Listed
from agentor.experiments.measures import NUMBERS, SAME
from agentor.experiments.summary import Summary
from agentor.experiments.summary_text import (
    UNITS,
    counts_text,
    delta_text,
    score_text,
    scorer_text,
)
from agentor.literal import literal_line
from tui.text.formatting import ID_MAX, relative_time, short_id, token_count
from tui.text.run_line import GAP, fit
from tui.text.styles import STATUS_STYLES

Column = tuple[str, int, bool]  # title, width, right-aligned

REGRESSED_MARK, IMPROVED_MARK = "▼", "▲"
REGRESSED_STYLE, IMPROVED_STYLE = "bold red", "bold green"
ABSENT = "–"  # a measure not known on both sides of a pair

# -- the list of experiments (E) ---------------------------------------------------------------

EXPERIMENT_COLUMNS: tuple[Column, ...] = (
    ("id", 16, False),
    ("created", 9, False),
    ("pairs", 7, True),
    ("regressed", 9, True),
    ("state", 11, False),
)
STATE_STYLES = {"running": "bold cyan", "stopping": "yellow", "stopped": "yellow"}


def experiments_header() -> Text:
    out = Text(no_wrap=True)
    for title, width, right in EXPERIMENT_COLUMNS:
        out.append(fit(title, width, right) + GAP)
    out.append("name · change")
    return out


def experiment_line(x: Listed, now: float, state: str | None = None) -> Text:
    """`exp-3f1c0a9d2b7e  3m ago  4/5  1 ▼  running  prompt v2 · model gpt-4o`: `state` is
    the experiment's in this app (`running`, `stopping`, `stopped`); else its pairs pending,
    or `done`."""
    d = x.definition
    out = Text(no_wrap=True)
    out.append(fit(literal_line(d.id, 40), 16) + GAP, "bold")
    out.append(fit(relative_time(d.created_at or None, now), 9) + GAP)
    out.append(
        fit(f"{x.measured}/{x.total}", 7, True) + GAP, "" if x.measured == x.total else "cyan"
    )
    regressed = f"{x.regressions} {REGRESSED_MARK}" if x.regressions else "0  "
    out.append(fit(regressed, 9, True) + GAP, REGRESSED_STYLE if x.regressions else "dim")
    pending = x.total - x.measured
    if state is None or (state == "stopped" and not pending):
        state = f"{pending} pending" if pending else "done"
    out.append(fit(state, 11) + GAP, STATE_STYLES.get(state, "dim" if not pending else ""))
    out.append(literal_line(d.name, 120))
    if d.name != d.change:
        out.append(" · " + literal_line(d.change, 120), "dim")
    return out


# -- the summary above the pairs ---------------------------------------------------------------


def summary_text(
    e: Experiment, now: float, intervals: Summary | None = None, wide: bool = True
) -> Text:
    """The experiment summed up, as `agentor experiment show` says it: what changed, how the
    pairs ended, regressions and improvements, each paired delta with its interval (bold when
    the interval leaves 0 out: the change moved that measure), each scorer. The deltas are
    `intervals`' (an earlier read's, while the experiment runs: it says of how many pairs),
    else the experiment's own; two to a line when `wide`."""
    d, s = e.definition, e.counts
    if intervals is None:
        intervals = e.summary
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(literal_line(d.id, 40), "bold")
    out.append("  " + literal_line(d.name, 100), "bold")
    out.append("\nchange: " + literal_line(d.change, 100))
    out.append(f"; match {literal_line(d.match, 10)}, novel calls: {literal_line(d.novel, 10)}")
    if d.created_at:
        out.append(f" · created {relative_time(d.created_at, now)}", "dim")
    out.append("\n" + counts_text(e) + " · ")
    out.append(f"regressions {s.regressions}", REGRESSED_STYLE if s.regressions else "")
    out.append(" · ")
    out.append(f"improvements {s.improvements}", IMPROVED_STYLE if s.improvements else "")
    if intervals.pairs != s.pairs:
        out.append(f" · intervals of {intervals.pairs} pairs, updating", "dim italic")
    names = list(intervals.deltas)
    for i, name in enumerate(names):
        interval = intervals.deltas[name]
        moved = interval is not None and interval.excludes_zero
        cell = f"{name:<8} {delta_text(interval, UNITS.get(name, ''))}"
        first = i % 2 == 0 or not wide
        out.append("\n" if first else "   ")
        out.append(cell.ljust(62) if first and wide else cell, "bold" if moved else "dim")
    for spec, scored in s.scorers.items():
        out.append("\n" + scorer_text(spec, scored), REGRESSED_STYLE if scored.regressions else "")
    return out


# -- the pairs ---------------------------------------------------------------------------------

PAIR_COLUMNS: tuple[Column, ...] = (
    ("", 1, False),  # the verdict's mark
    ("baseline", 8, False),
    ("candidate", 9, False),  # its title's width
    ("status", 22, False),
    ("output", 7, False),
    ("tools", 9, False),
    ("srv/exe", 7, True),  # tool results served from the record / executed
    ("Δturns", 6, True),
    ("Δtokens", 8, True),
    ("Δcost", 10, True),
    ("Δlatency", 9, True),
)
IDS = ("baseline", "candidate")
# On a narrow screen columns go in this order (the scorers' after these, from the last).
DROP = ("Δlatency", "Δturns", "output", "Δcost", "srv/exe", "tools")
SCORER_WIDTH = (6, 16)  # a scorer's column: as wide as its spec, within these
NOTE_MIN = 20  # cells left for the error or first divergence after the columns


@dataclass(frozen=True)
class PairRow:
    """One line of the pairs table: a measured pair, or a baseline not measured yet."""

    baseline: str
    candidate: str
    pair: Pair | None  # None: pending


def pair_columns(width: int, scorers: Sequence[str], id_width: int = 8) -> tuple[Column, ...]:
    """The columns that fit `width` cells: the pair's own (the runs' as wide as `id_width`:
    runs named by their callers have longer ids than generated ones), then one per scorer."""
    own = [(t, max(w, id_width) if t in IDS else w, r) for t, w, r in PAIR_COLUMNS]
    columns = [*own, *(_scorer_column(s) for s in scorers)]
    droppable = [*DROP, *(s for s in reversed(scorers))]
    for title in droppable:
        if sum(w + len(GAP) for _, w, _ in columns) + NOTE_MIN <= width:
            break
        columns = [c for c in columns if c[0] != title]
    return tuple(columns)


def id_width(rows: Sequence[PairRow]) -> int:
    """The cells the widest run id of `rows` takes (at least 8, at most ID_MAX)."""
    ids = (short_id(i) for r in rows for i in (r.baseline, r.candidate))
    return min(ID_MAX, max((len(literal_line(i, ID_MAX)) for i in ids), default=8))


def _scorer_column(spec: str) -> Column:
    low, high = SCORER_WIDTH
    return (spec, max(low, min(high, len(literal_line(spec, high)))), False)


def pairs_header(columns: Sequence[Column]) -> Text:
    out = Text(no_wrap=True)
    for title, width, right in columns:
        out.append(fit(literal_line(title, width), width, right) + GAP)
    out.append("error · first divergence")
    return out


def pair_line(row: PairRow, columns: Sequence[Column]) -> Text:
    """One pair: its verdict's mark, both runs, how each ended, what changed, the deltas,
    each scorer's word; then its error, or where its candidate first went another way."""
    cells = _cells(row)
    out = Text(no_wrap=True)
    for title, width, right in columns:
        text, style = cells.get(title, (ABSENT, "dim"))
        out.append(fit(text, width, right), style)
        out.append(GAP)
    p = row.pair
    if p is None:
        return out
    if p.error:
        out.append(literal_line(p.error, 200), "red")
    elif p.measures is not None and p.measures.first_divergence:
        out.append(literal_line(p.measures.first_divergence, 200), "dim")
    return out


def _cells(row: PairRow) -> dict[str, tuple[str, str]]:
    p = row.pair
    out = {
        "baseline": (literal_line(short_id(row.baseline)), ""),
        "candidate": (literal_line(short_id(row.candidate)), ""),
    }
    if p is None:
        out[""] = ("", "")
        out["status"] = ("pending", "dim italic")
        return out
    mark = REGRESSED_MARK if p.regressed else (IMPROVED_MARK if p.improved else "")
    out[""] = (mark, REGRESSED_STYLE if p.regressed else IMPROVED_STYLE)
    base, cand = (literal_line(s, 20) for s in p.status)
    out["status"] = (f"{base} → {cand}", STATUS_STYLES.get(p.status[1], "") if base != cand else "")
    m = p.measures
    if m is not None:
        if not m.output_changed:
            out["output"] = ("same", "dim")
        else:
            out["output"] = ("json =", "dim") if m.output_json_equal else ("changed", "")
        out["tools"] = (literal_line(m.tools, 12), "dim" if m.tools == SAME else "")
        out["srv/exe"] = (f"{m.served}/{m.executed}", "bold #ff8700" if m.executed else "dim")
        for name in NUMBERS:
            out[f"Δ{name}"] = _delta_cell(name, m.delta(name))
    for spec, value in p.scores.items():
        out[spec] = _score_cell(value)
    return out


def _delta_cell(name: str, delta: float | None) -> tuple[str, str]:
    if delta is None:
        return ABSENT, "dim"
    if delta == 0:
        return "0", "dim"
    sign = "+" if delta > 0 else "-"
    size = abs(delta)
    if name == "tokens":
        text = token_count(round(size))
    elif name == "cost":
        text = f"${size:.4f}" if size < 1 else f"${size:,.2f}"
    elif name == "latency":
        text = duration(size)
    else:
        text = f"{size:g}"
    if not any(c in "123456789" for c in text):  # too small to show (-0.4 ms): none
        return "0", "dim"
    return sign + text, ""


def _score_cell(value: Any) -> tuple[str, str]:
    """A scorer's word in a cell: pass / FAIL, a run score `1→0`, or `error`."""
    if isinstance(value, bool):
        return ("pass", "dim") if value else ("FAIL", REGRESSED_STYLE)
    if isinstance(value, dict) and "error" in value:
        return "error", "red"
    if isinstance(value, dict):
        delta = _score_delta(value)
        if len(value) == 1:
            ((base, cand),) = value.values()
            text = f"{base:.3g}→{cand:.3g}" if _numbers(base, cand) else "?"
        else:
            text = f"{delta:+.3g}" if delta is not None else "?"
        if delta is None or delta == 0:
            return text, "dim"
        return text, REGRESSED_STYLE if delta < 0 else IMPROVED_STYLE
    return literal_line(str(value), 20), ""


def _numbers(*values: Any) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _score_delta(value: dict[str, Any]) -> float | None:
    """How a run score moved (candidate - baseline): its worst drop when one of its numbers
    fell (what says the pair regressed), else its largest rise; None when one is no number."""
    deltas = []
    for pair in value.values():
        if not isinstance(pair, list | tuple) or len(pair) != 2 or not _numbers(*pair):
            return None
        deltas.append(float(pair[1]) - float(pair[0]))
    if not deltas:
        return None
    return min(deltas) if min(deltas) < 0 else max(deltas)


def pair_detail(row: PairRow) -> Text:
    """The highlighted pair said whole: both runs, how they ended, what changed (with the
    first divergence), what was served and executed, each scorer's word, its error."""
    out = Text()
    out.append("baseline ", "dim")
    out.append(literal_line(row.baseline, 80), "bold")
    out.append(" → candidate ", "dim")
    out.append(literal_line(row.candidate, 80), "bold")
    p = row.pair
    if p is None:
        out.append("\nnot measured yet", "dim italic")
        return out
    out.append(f"\n{literal_line(p.status[0], 20)} → ")
    out.append(literal_line(p.status[1], 20), STATUS_STYLES.get(p.status[1], ""))
    m = p.measures
    if m is not None:
        output = "output the same" if not m.output_changed else "output changed"
        if m.output_changed and m.output_json_equal:
            output += " (equal as JSON)"
        out.append(f" · {output} · tools {literal_line(m.tools, 12)}")
        out.append(f" · served {m.served}, executed {m.executed}")
        if m.first_divergence:
            out.append(" · first divergence: ", "dim")
            out.append(literal_line(m.first_divergence, 200))
    if p.regressed:
        out.append(f"  {REGRESSED_MARK} regressed", REGRESSED_STYLE)
    elif p.improved:
        out.append(f"  {IMPROVED_MARK} improved", IMPROVED_STYLE)
    if p.scores:
        out.append("\nscores: ", "dim")
        words = (f"{literal_line(k, 40)} {score_text(v)}" for k, v in p.scores.items())
        out.append(" · ".join(words))
    if p.error:
        out.append("\nerror: ", "red")
        out.append(literal_line(p.error, 400), "red")
    out.append("\nenter: the two runs side by side (served / executed results marked)", "dim")
    return out


# -- sorting (s) -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sort:
    """An order of the pairs: `label` says it in the title; `key` orders measured pairs (the
    pending ones always come last, in the experiment's order)."""

    label: str
    key: Callable[[Pair], tuple[float, ...]]


def sorts(scorers: Sequence[str]) -> list[Sort]:
    """Regressions first (the default), each delta largest first, each scorer worst first."""
    out = [Sort("regressions first", _regressions_first)]
    out += [Sort(f"Δ{name}, largest first", _by_delta(name)) for name in NUMBERS]
    out += [Sort(f"{literal_line(s, 40)}, worst first", _by_scorer(s)) for s in scorers]
    return out


def sorted_rows(e: Experiment, sort: Sort) -> list[PairRow]:
    """The pairs in `sort`'s order (ties in the experiment's), then those still pending."""
    measured = sorted(e.pairs, key=sort.key)  # stable: ties keep the definition's order
    rows = [PairRow(p.baseline, p.candidate, p) for p in measured]
    d = e.definition
    rows += [PairRow(b, d.candidate(b), None) for b in e.pending]
    return rows


def _regressions_first(p: Pair) -> tuple[float, ...]:
    return (0 if p.regressed else (2 if p.improved else 1),)


def _by_delta(name: str) -> Callable[[Pair], tuple[float, ...]]:
    def key(p: Pair) -> tuple[float, ...]:
        delta = None if p.measures is None else p.measures.delta(name)
        return (1, 0.0) if delta is None else (0, -delta)

    return key


def _by_scorer(spec: str) -> Callable[[Pair], tuple[float, ...]]:
    def key(p: Pair) -> tuple[float, ...]:
        value = p.scores.get(spec)
        if isinstance(value, bool):
            return (0, 0.0 if not value else 1.0)
        if isinstance(value, dict) and "error" not in value:
            delta = _score_delta(value)
            if delta is not None:
                return (0, delta)
        return (1, 0.0) if value is not None else (2, 0.0)  # an error, then no word at all

    return key
