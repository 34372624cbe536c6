"""A row read whole folds most lines without an event (`agentor.sources.directory.linefold`),
priced (what the directory source's `fill` reads: `rowcost.price_folded`) or not (what
`agentor ls` reads). Both give the row the engine's way gives (`EngineWay`: every line decoded,
`decode_for_summary`, then `history.fold`, the lineage, whether it asks for approval, and
`rowcost.price` with genai-prices' own `calc_price`), field for field and its cost to the
`Decimal`, for every kind of line the engine writes and every odd value a log may hold (a time
past 64 bits, NaN, a bool where a number goes, a bad line; models priced and not, generations
with and without usage, segments resumed on another model), in any order, however the file is
cut into chunks."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentor.engine.events import Event
from agentor.engine.history import fold
from agentor.ops import pricing
from agentor.sources import logfile
from agentor.sources.directory.rowread import TAIL_FIELDS, LogTail, RowReader, note_asking
from agentor.sources.lineage import note_fork
from agentor.sources.rowcost import price
from agentor.sources.runrow import ROW_FIELDS, RunRow
from tests.test_runs_index import FIXTURES, TRICKY_LINES, TRICKY_RAW, engine_runs

T = 1796039000.25


def line(**fields: Any) -> bytes:
    return (json.dumps(fields) + "\n").encode()


# What the engine writes, and upstream Agentor 0.1.x, of each kind of line.
PLAIN = [
    line(
        type="run_start",
        agent="A",
        model="m",
        started_at=T,
        ts=T,
        messages=[{"role": "user", "content": "Weather?"}],
    ),
    line(
        type="generation",
        model="m",
        turn=1,
        usage={"input_tokens": 80, "output_tokens": 18, "total_tokens": 98},
        started_at=T + 1,
        ended_at=T + 2,
        calls=[{"id": "c1"}],
    ),
    line(type="generation", turn=2, usage={"input_tokens": 5}, ts=T + 3),
    line(type="generation", turn=2, ended_at=T + 3.5),  # a rewound turn asked again
    line(
        type="tool_call",
        turn=1,
        name="get_weather",
        call_id="c1",
        args={"city": "Oslo"},
        ts=T + 2.5,
    ),
    line(
        type="tool_result",
        turn=1,
        name="get_weather",
        call_id="c1",
        result="sunny " * 40,
        ts=T + 2.75,
    ),
    line(type="approval_request", call_id="c1", name="pay", ts=T + 4),
    line(type="approval", call_id="c1", decision="approved", by="me", ts=T + 5),
    line(type="tool_start", call_id="c1", name="pay", ts=T + 5.5),
    line(type="claim", by="w1", ts=T + 100),
    line(type="release", by="w1", ts=T + 101),
    line(type="message", text="note", ts=T + 6),
    line(type="run_end", status="completed", text="done", ended_at=T + 7, ts=T + 7),
    line(type="run_end", status="failed", error="boom", ended_at=T + 8),
    line(type="run_end", status="awaiting_approval", ts=T + 9),
    line(type="fork", forked_from="f" * 32, at=3, edit="result edited", ts=T + 50),
    line(type="run_start", agent="B", forked_from="e" * 32, started_at=T + 60),
    # Priced: a segment on a model the price table knows, resumed on another; generations that
    # name theirs, or none (their segment's), with usage, none, zero tokens, or a lone count.
    line(type="run_start", agent="A", model="gpt-4o", started_at=T + 70, ts=T + 70),
    line(type="run_start", agent="A", model="claude-3-5-sonnet-latest", ts=T + 80),
    line(type="run_start", agent="A", started_at=T + 85),  # names no model: none priced
    line(
        type="generation",
        turn=3,
        usage={"input_tokens": 1234, "output_tokens": 56, "total_tokens": 1290},
        ts=T + 71,
    ),
    line(
        type="generation",
        model="gpt-4o-mini",
        turn=3,
        usage={"input_tokens": 70_000, "output_tokens": 9, "total_tokens": 70_009},
        ts=T + 72,
    ),
    line(type="generation", model="o1", turn=4, usage={"output_tokens": 3}, ts=T + 73),
    line(type="generation", model="gpt-4o", turn=4, ts=T + 74),  # no usage: unknown
    line(
        type="generation",
        model="gemini-1.5-pro",
        turn=5,
        usage={"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},  # none reported
        ts=T + 75,
    ),
    line(
        type="generation",
        model="gemini-1.5-pro",
        turn=5,
        usage={"input_tokens": 300_001, "output_tokens": 2, "total_tokens": 300_003},
        started_at=1.6e9,  # priced at its time: another year's prices
    ),
]

DEEP = b"[" * 1000 + b"]" * 1000
BIG, HUGE = 2**63, 2**64 + 5  # past 64 bits (signed); past what orjson reads as an integer
ODD = [
    # Times: zero (falls through to the next), a bool, a string, an int, past 64 bits, huge.
    *(
        line(type=kind, **times)
        for kind in ("tool_call", "tool_result", "generation", "claim")
        for times in (
            {"ts": 0, "ended_at": T},
            {"ts": 0.0},
            {"ts": -0.0, "started_at": 0},
            {"ts": True, "ended_at": T},
            {"ts": "T", "started_at": T},
            {"ts": 5},
            {"ts": BIG},
            {"ts": -BIG},
            {"ts": HUGE},
            {"ended_at": HUGE, "ts": T},
            {"started_at": float(BIG)},
            {"ts": 1e300},
            {},
            {"ts": None, "ended_at": 1},
        )
    ),
    # Generations: a turn that is no integer, a usage that is no object of integers, a model
    # that is no string, a value `_lost_an_integer` reads.
    line(type="generation", turn=3.0, ts=T),
    line(type="generation", turn=True, ts=T),
    line(type="generation", turn=BIG, ts=T),
    line(type="generation", turn=HUGE, ts=T),
    line(type="generation", turn=None, ts=T),
    line(type="generation", turn="4", ts=T),
    line(type="generation", model="", turn=1, ended_at=T),
    line(type="generation", turn=1, usage=None),
    line(type="generation", turn=1, usage=[1]),
    line(type="generation", turn=1, usage={"input_tokens": True, "total_tokens": 1.5}),
    line(type="generation", turn=1, usage={"input_tokens": HUGE, "total_tokens": BIG}),
    line(
        type="generation",
        turn=1,
        usage={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3, "cost": 1e30},
    ),
    line(type="generation", turn=1, usage={"input_tokens": 1, "cost": 0.25, "n": None}),
    line(type="generation", turn=1, usage={}),
    line(type="generation", model=5, turn=1),
    line(type="generation", model=None, turn=1),
    line(type="generation", at=1e30, turn=1),
    line(type="generation", at=2, turn=9, model="n"),
    # A run's start and end: fields of other types, numbers past 64 bits, no text.
    line(type="run_start", agent=["A"], model=None, started_at=T, messages=["hi", {}]),
    line(type="run_start", started_at=HUGE, messages=[{"role": "user", "content": "q"}]),
    line(type="run_end", status="completed", ended_at=T),
    line(type="run_start", agent="A", ts=T, messages=[{"role": "user", "content": ["p"]}]),
    line(type="run_start", forked_from=5, started_at=T, turn=float(BIG)),
    line(type="run_end", status="completed", ended_at=HUGE),
    line(type="run_end", status="completed", ts=T, turn=float(HUGE)),
    line(type="run_end", status=None, error=7, text=["t"], ended_at=0, ts=T),
    line(type="run_end", status="failed", usage={"total_tokens": float(HUGE)}, ts=T),
    # Types: none, not a string, unknown; keys twice (the last one counts).
    line(ts=T),
    line(type=None, ts=T),
    line(type="something_new", ts=T + 1),
    b'{"type": "tool_call", "ts": 1.5, "ts": 2.5}\n',
    b'{"type": "generation", "turn": 1, "turn": 7, "usage": {"input_tokens": 1}}\n',
    b'{"type": "tool_call", "type": "generation", "turn": 2}\n',
    b"\n",
    b"   \n",
    # What orjson reads and `json` does not (nested past its recursion limit): a line the
    # engine's way parses again (a number past 64 bits) becomes a bad line there.
    *(
        b'{"type": "%s", "ts": 1.5, %s, "deep": %s}\n' % (kind, odd, DEEP)
        for kind in (b"tool_call", b"generation")
        for odd in (
            b'"ended_at": 1e300',
            b'"at": 1e300',
            b'"usage": {"input_tokens": 1, "cost": 1e300}',
        )
    ),
    *(json.dumps(e).encode() + b"\n" for e in TRICKY_LINES),
    *TRICKY_RAW,
    # What msgspec reads of a line (`linefold._typed`) and orjson does not, or reads otherwise:
    # bytes that are not UTF-8 in a value it skips, numbers orjson refuses there, integers past
    # what orjson reads as such where a summary reads them; nesting near both limits.
    *(
        b'{"type": "%s", "turn": 1, "ts": 1.5, "x": %s}\n' % (kind, odd)
        for kind in (b"tool_call", b"generation", b"run_end")
        for odd in (
            b'"\xf4\x90\x80\x80"',
            b'"\xc0\x80"',
            b'"\xff"',
            b'"\xed\xa0\x80"',  # a surrogate, encoded: `json` reads it
            b'"\\udfff"',
            '"caf\u00e9 \U0001f600"'.encode(),
            b"1e400",
            b"-1e309",
            b"9" * 400,
            b"NaN",
            b"Infinity",
            b"[" * 990 + b"]" * 990,
            b"[" * 1020 + b"]" * 1020,
        )
    ),
    b'\xef\xbb\xbf{"type": "tool_call", "ts": 1.5}\n',
    line(type="generation", turn=1, model="caf\u00e9", ts=T),
    line(type="generation", at=HUGE, turn=1),
    line(type="generation", at=-BIG - 1, turn=1),
    line(type="generation", turn=-BIG - 1, ts=T),
    line(
        type="generation",
        turn=1,
        usage={"input_tokens": 1, "output_tokens": 2, "total_tokens": HUGE},
    ),
    line(
        type="generation",
        turn=1,
        usage={"input_tokens": 1, "output_tokens": BIG, "total_tokens": 3},
    ),
    line(type="generation", turn=1, usage={"input_tokens": 1, "cost": HUGE}),
    line(type="generation", turn=1, usage={"input_tokens": -BIG - 1}),
    line(type="tool_call", ts=HUGE, ended_at=T),
    line(type="tool_call", started_at=-BIG - 1),
]


class EngineWay(RowReader):
    """The reference: every line decoded into an event, folded, and priced by genai-prices'
    own `calc_price` (not `pricing`'s cards)."""

    def _consume(self, row: RunRow, tail: LogTail, fd: int, start: int, end: int) -> None:
        assert row.summary is not None and row.cost is not None
        for pos, body in logfile.whole_lines(fd, start, end, self._count):
            items: list[Event | logfile.BadLine] = []
            for raw in body[:-1].split(b"\n"):
                raw += b"\n"
                tail.lineno += 1
                items.append(logfile.decode_for_summary(raw, pos, tail.lineno - 1))
                pos += len(raw)
            events = self._take(row, tail, items)
            self.lines_decoded += len(events)
            fold(row.summary, events)
            note_fork(row, events)
            note_asking(row, events)
            exact, pricing._exact = pricing._exact, pricing._price  # type: ignore[assignment]
            try:
                row.cost, tail.model = price(row.cost, events, tail.model)
            finally:
                pricing._exact = exact  # type: ignore[method-assign]
            tail.offset = pos


def read(
    path: Path, priced: bool, reader: type[RowReader] = RowReader
) -> tuple[RunRow, LogTail, int]:
    read_by = reader(lambda _: False, lambda: 0.0)
    row, tail = RunRow(path.stem), LogTail(str(path))
    read_by.load(row, tail, None, priced=priced)
    return row, tail, read_by.lines_decoded


def assert_same_both_ways(path: Path) -> RunRow:
    """Read unpriced and priced (most lines folded without an event), and the engine's way:
    the same row, its cost (to the `Decimal`: its digits and exponent) and its tail."""
    slow, slow_tail, slow_n = read(path, priced=True, reader=EngineWay)
    assert slow.cost is not None
    for priced in (False, True):
        fast, fast_tail, fast_n = read(path, priced)
        assert fast.summary == slow.summary, path.read_bytes()[:2000]
        for name in ROW_FIELDS:
            if name != "cost":
                assert getattr(fast, name) == getattr(slow, name), name
        for name in TAIL_FIELDS:
            if priced or name != "model":  # the model pricing goes on with
                assert getattr(fast_tail, name) == getattr(slow_tail, name), name
        assert fast_n == slow_n
    assert fast.cost is not None
    assert (fast.cost.priced, fast.cost.unpriced) == (slow.cost.priced, slow.cost.unpriced)
    if slow.cost.total is None:
        assert fast.cost.total is None
    else:
        assert fast.cost.total is not None
        assert fast.cost.total.as_tuple() == slow.cost.total.as_tuple(), path.read_bytes()[:2000]
    return fast


def test_each_kind_of_line_alone_and_after_a_run_start(tmp_path: Path) -> None:
    orjson.loads(DEEP)  # the premise of the deep lines above
    with pytest.raises(RecursionError):
        json.loads(DEEP)
    for i, raw in enumerate([*PLAIN, *ODD]):
        for before in ([], [PLAIN[0]], [PLAIN[0], PLAIN[1], PLAIN[4]]):
            path = tmp_path / f"{i:032x}.jsonl"
            path.write_bytes(b"".join([*before, raw, *before[1:]]))
            assert_same_both_ways(path)


@pytest.mark.parametrize("chunk", [logfile.CHUNK, 700, 64])
def test_any_mix_of_lines_in_any_order_cut_into_chunks_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(logfile, "CHUNK", chunk)  # many reads a file: the state carries over
    rng = random.Random(chunk)
    pool = PLAIN * 4 + ODD
    asked = {True: 0, False: 0}
    for n in range(150):
        lines = [rng.choice(pool) for _ in range(rng.randrange(1, 60))]
        path = tmp_path / f"{n:032x}.jsonl"
        path.write_bytes(b"".join(lines) + (b'{"type": "tool_call"' if n % 7 == 0 else b""))
        row = assert_same_both_ways(path)
        assert row.summary is not None
        asked[bool(row.asks_approval)] += 1
    assert asked[True] and asked[False]  # both ways of ending a turn were met


def test_real_runs_and_upstream_logs(tmp_path: Path) -> None:
    asyncio.run(engine_runs(tmp_path))
    paths = [*tmp_path.glob("*.jsonl"), *FIXTURES.glob("*.jsonl")]
    assert len(paths) > 10
    for path in paths:
        row = assert_same_both_ways(path)
        assert row.summary is not None and row.summary.events > 0


def test_a_long_run_folds_its_thousands_of_lines_the_same(tmp_path: Path) -> None:
    path = tmp_path / ("a" * 32 + ".jsonl")
    turns = []
    for turn in range(1, 3000):
        turns += [
            line(
                type="generation",
                model="m",
                turn=turn,
                usage={"input_tokens": turn, "output_tokens": 1, "total_tokens": turn + 1},
                started_at=T + turn,
                ended_at=T + turn + 0.5,
            ),
            line(type="tool_call", turn=turn, name="t", call_id=f"c{turn}", ts=T + turn + 0.6),
            line(
                type="tool_result",
                turn=turn,
                call_id=f"c{turn}",
                result="x" * 300,
                ts=T + turn + 0.7,
            ),
        ]
    path.write_bytes(b"".join([PLAIN[0], *turns, PLAIN[12]]))
    row = assert_same_both_ways(path)
    assert row.summary is not None and row.summary.turns == 2999
    assert row.summary.tool_calls == 2999 and row.summary.usage.total_tokens == sum(
        t + 1 for t in range(1, 3000)
    )


def test_the_numbers_checked_are_those_decode_for_summary_checks() -> None:
    from agentor.sources.directory import linefold

    assert linefold._NUMBERS_KEPT == logfile._NUMBERS_KEPT


def test_msgspec_reads_the_numbers_orjson_reads() -> None:
    """The values a line is folded from are msgspec's (`linefold._typed`): of every float and
    integer orjson reads as such, the same."""
    from agentor.sources.directory import linefold

    rng = random.Random(7)
    texts = [repr(rng.uniform(-1e12, 1e12)) for _ in range(3000)]
    texts += [repr(rng.random() * 10 ** rng.randrange(-320, 308)) for _ in range(3000)]
    texts += ["1" + "".join(rng.choices("0123456789", k=rng.randrange(0, 40))) + "." + "5" * 30
              for _ in range(500)]  # fmt: skip
    texts += [f"{rng.randrange(-(2**63), 2**64)}" for _ in range(500)]
    texts += ["1E5", "-0.0", "0e-400", "1.7976931348623157e308", "2.2250738585072014e-308"]
    for text in texts:
        raw = b'{"type": "tool_call", "ts": %s}' % text.encode()
        typed = linefold._typed([raw])[0]
        assert typed is not None, text
        want = orjson.loads(raw)["ts"]
        assert type(typed.ts) is type(want) and typed.ts == want, text
        if isinstance(want, float):
            assert repr(typed.ts) == repr(want), text  # -0.0 too


# What the engine writes in a run: every line with its `ts`.
WITH_TS = [
    line(type="generation", model="m", turn=1, ts=T + 1, started_at=T + 0.5, ended_at=T + 1,
         usage={"input_tokens": 8, "output_tokens": 2, "total_tokens": 10}),
    line(type="tool_call", turn=1, name="f", call_id="c1", args={}, ts=T + 1.25),
    line(type="tool_result", turn=1, name="f", call_id="c1", result="r", ts=T + 1.5),
    line(type="message", text="note", ts=T + 1.75),
    line(type="generation", model="m", turn=2, ts=T + 2, ended_at=T + 2,
         usage={"input_tokens": 9, "output_tokens": 3, "total_tokens": 12}),
    line(type="tool_call", turn=2, name="f", call_id="c2", args={}, ts=T + 2.25),
    line(type="tool_call", turn=2, name="g", call_id="c3", args={}, ts=T + 2.5),
    line(type="approval_request", turn=2, name="g", call_id="c3", ts=T + 2.75),
    line(type="generation", turn=2, ts=T + 3),  # the turn asked again
    line(type="tool_call", turn=2, name="f", call_id="c4", args={}, ts=T + 3.25),
]  # fmt: skip


def test_every_kind_of_line_amid_a_run_as_the_engine_writes_it(tmp_path: Path) -> None:
    """Each line, plain or odd, amid a run's lines as the engine writes them (each with its
    time), after no start, a start, a later start (times that go back), and between lines
    after the run's end: the same row both ways."""
    start, end = PLAIN[0], PLAIN[12]
    path = tmp_path / ("f" * 32 + ".jsonl")
    path.write_bytes(b"".join([start, *WITH_TS, end]))
    assert assert_same_both_ways(path).summary.tool_calls == 2  # type: ignore[union-attr]
    later = line(type="run_start", agent="A", started_at=T + 50, ts=T + 50)  # times go back
    rng = random.Random(3)
    for i, raw in enumerate([*PLAIN, *ODD]):
        for cut in (0, 3, 7, len(WITH_TS)):
            path = tmp_path / f"{i:028x}{cut:04x}.jsonl"
            body = [start, *WITH_TS[:cut], raw, *WITH_TS[cut:], end]
            path.write_bytes(b"".join(body))
            assert_same_both_ways(path)
        for first in ([], [later], [start, later]):  # no start, a later one, a second one
            path = tmp_path / f"{i:028x}{len(first):04x}a.jsonl"
            path.write_bytes(b"".join([*first, raw, *WITH_TS, raw, *WITH_TS[:4]]))
            assert_same_both_ways(path)
        mixed = [rng.choice(WITH_TS) for _ in range(rng.randrange(2, 30))]
        path = tmp_path / f"{i:028x}ffff.jsonl"
        path.write_bytes(b"".join([start, *mixed, raw, *mixed[::-1], end, *mixed]))
        assert_same_both_ways(path)


def test_priced_runs_of_every_shape_cost_what_the_engine_way_prices(tmp_path: Path) -> None:
    """Runs on priced and unpriced models, resumed on another model, forked, with bad and torn
    lines amid generations: each row's cost is the engine's way's, to the `Decimal`; some
    known in whole, some in part, some not at all."""
    priced_lines = PLAIN[17:]
    rng = random.Random(17)
    pool = [*PLAIN, *priced_lines * 6, *ODD[:: max(1, len(ODD) // 20)]]
    seen = {"whole": 0, "part": 0, "none": 0}
    for n in range(120):
        start = rng.choice([PLAIN[0], *PLAIN[17:20], PLAIN[16]])  # a fork's start among them
        body = [start, *(rng.choice(pool) for _ in range(rng.randrange(1, 40)))]
        if n % 5 == 0:
            body.insert(rng.randrange(1, len(body) + 1), b"{not json\n")
        path = tmp_path / f"{n:032x}.jsonl"
        path.write_bytes(
            b"".join(body) + (b'{"type": "generation", "usage"' if n % 6 == 0 else b"")
        )
        cost = assert_same_both_ways(path).cost
        assert cost is not None
        seen["none" if cost.total is None else "whole" if cost.complete else "part"] += 1
    assert all(seen.values()), seen
