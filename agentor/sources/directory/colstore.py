"""Columns (`columns`) as bytes, and back: the body of the run index
(`runindex`), one piece of bytes a column, read a column at a time.

Writing (`encoded`): each column (a list of plain values) is stored in the first form that fits:

- `same`: equal to a column before it (the JSON of that column's name);
- `all`: one value throughout (its JSON; read back as `Repeated`);
- `f64`: floats only, as IEEE doubles; `i64`: integers only (no bool) within 64 bits, as such;
- `palette`: strings (or null) of few distinct values: the JSON list of them, a newline, then
  each value's place in it (unsigned bytes, `B`, or 16 bits, `H`, while they fit; else `q`);
- `lines`: strings none of which holds a newline, as the JSON string of them joined by newlines;
- `json`: anything else, as a JSON list (stdlib `json`, exact for every value a row holds: NaN,
  integers past 64 bits, lone surrogates), encoded DUMP_SLICE values a call; read by orjson
  (stdlib `json` for what orjson refuses), or `json!` (and `all!`): one that holds an integer
  past 64 bits, of which orjson would make a float, read by stdlib `json` alone.

Binary numbers are in the writer's byte order (`sys.byteorder`, in the index's header; a reader
of the other order swaps them). No object is made per value on writing: a save of 100,000 rows
must not wake the collector, nor hold the GIL more than a few milliseconds a call.

Reading (`Stored`): a mapping of the columns by name, each decoded when first asked, checked as it
is (a wrong form, length or type is `_ShapeError`): a listing that shows 15 of a row's 60 fields
parses those. Cost model (100,000 rows): a column of numbers is one `frombytes` and `tolist`
(~4 ms; as JSON text, ~19 ms to parse), of repeated strings one `map` over its codes, of
distinct strings one JSON string split at its newlines.
"""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from agentor.sources.directory.columns import Column, Repeated, _ShapeError

DUMP_SLICE = 5000  # values of a JSON column encoded per call (the GIL held a few milliseconds)
ENCODINGS = ("same", "all", "all!", "f64", "i64", "palette", "lines", "json", "json!")
_INT64 = (-(2**63), 2**63)
_NONE = type(None)
_TYPECODES = {"f64": "d", "i64": "q", "B": "B", "H": "H", "q": "q"}  # sizes 8, 8, 1, 2, 8
assert [array(c).itemsize for c in "dqBH"] == [8, 8, 1, 2]


def encoded(cols: dict[str, list[Any]]) -> tuple[list[list[Any]], list[bytes]]:
    """The columns as stored: their table of contents (`[name, encoding, length in bytes]`
    each, in order) and the bytes, in pieces written one after the other."""
    toc: list[list[Any]] = []
    pieces: list[bytes] = []
    listed: list[str] = []  # the columns stored as more than one value: twins to look for
    for name, col in cols.items():
        types = set(map(type, col))
        if len(types) == 1 and len(col) > 1 and col.count(col[0]) == len(col):
            exact = "!" if _past_64_bits(col[:1]) else ""  # one type: equal values are the same
            encoding, parts = "all" + exact, [_json(col[0]).encode()]
        else:
            twin = next((t for t in listed if cols[t] == col and _same_types(cols[t], col)), None)
            if twin is not None:
                encoding, parts = "same", [_json(twin).encode()]
            else:
                encoding, parts = _encode(col, types)
                listed.append(name)
        toc.append([name, encoding, sum(map(len, parts))])
        pieces += parts
    return toc, pieces


def _same_types(a: list[Any], b: list[Any]) -> bool:
    """Whether equal columns hold values of the same types (`0 == False`, `1 == 1.0`)."""
    return list(map(type, a)) == list(map(type, b))


def _encode(col: list[Any], types: set[type]) -> tuple[str, list[bytes]]:
    if types == {float}:
        return "f64", [array("d", col).tobytes()]
    if types == {int} and _INT64[0] <= min(col) and max(col) < _INT64[1]:
        return "i64", [array("q", col).tobytes()]
    if str in types and types <= {str, _NONE}:
        distinct = dict.fromkeys(col)
        if len(distinct) <= len(col) // 4:
            code = {value: i for i, value in enumerate(distinct)}
            kind = "B" if len(distinct) <= 0xFF else "H" if len(distinct) <= 0xFFFF else "q"
            codes = array(kind, map(code.__getitem__, col)).tobytes()
            return "palette", [_json(list(distinct)).encode(), b"\n", kind.encode(), codes]
        if types == {str}:
            joined = "\n".join(col)
            if joined.count("\n") == len(col) - 1:  # no value holds a newline
                return "lines", [_json(joined).encode()]
    slices = (_json(col[i : i + DUMP_SLICE])[1:-1] for i in range(0, len(col), DUMP_SLICE))
    exact = "!" if int in types and _past_64_bits(col) else ""
    return "json" + exact, [("[" + ",".join(slices) + "]").encode()]


def _past_64_bits(col: list[Any]) -> bool:
    """Whether an integer among the values is past 64 bits (orjson would read it as a float)."""
    return any(type(v) is int and not _INT64[0] <= v < _INT64[1] for v in col)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class Stored(Mapping[str, Any]):
    """The columns of a body `encoded` wrote, by name, each decoded when first asked (a list, a
    `Column` of known value types, or a `Repeated`). ValueError at once when the table of
    contents does not fit the body; `_ShapeError` when a column asked cannot be decoded."""

    def __init__(self, body: bytes | memoryview, toc: Any, byteorder: Any) -> None:
        if not isinstance(toc, list) or byteorder not in ("little", "big"):
            raise ValueError("no table of columns")
        self._body = memoryview(body)
        self._swap = byteorder != sys.byteorder
        self._where: dict[str, tuple[int, str, int, int]] = {}  # place, encoding, start, end
        at = 0
        for place, entry in enumerate(toc):
            if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)):
                raise ValueError("a damaged table of columns")
            name, encoding, length = entry
            if encoding not in ENCODINGS or type(length) is not int or length < 0:
                raise ValueError(f"column {name!r}: a damaged table entry")
            if name in self._where:
                raise ValueError(f"column {name!r} twice")
            self._where[name] = (place, encoding, at, at + length)
            at += length
        if at != len(self._body):
            raise ValueError("columns that do not fill the body")
        self._decoded: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        got = self._decoded.get(name)
        if got is None:
            got = self._decoded[name] = self._decode(name)
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def _decode(self, name: str) -> Any:
        place, encoding, start, end = self._where[name]  # KeyError: no such column
        piece = self._body[start:end]
        try:
            return self._decoded_as(encoding, piece, place)
        except _ShapeError:
            raise
        except (ValueError, TypeError, IndexError, KeyError, UnicodeError, RecursionError) as exc:
            raise _ShapeError(f"column {name!r} ({encoding}): {exc}") from None

    def _decoded_as(self, encoding: str, piece: memoryview, place: int) -> Any:
        if encoding == "same":
            twin = _loads(piece)
            if not isinstance(twin, str) or self._where.get(twin, (place,))[0] >= place:
                raise ValueError("not the name of a column before it")
            return self[twin]
        if encoding in ("all", "all!"):
            return Repeated(_loads(piece, exact=encoding == "all!"))
        if encoding in ("f64", "i64"):
            return Column(self._numbers(encoding, piece), {float if encoding == "f64" else int})
        if encoding == "palette":
            at = bytes(piece).find(b"\n")  # after the palette's JSON (which holds none)
            if at < 0:
                raise ValueError("no end to the palette")
            palette = _loads(piece[:at])
            codes = self._numbers(bytes(piece[at + 1 : at + 2]).decode(), piece[at + 2 :])
            if not isinstance(palette, list) or not set(map(type, palette)) <= {str, _NONE}:
                raise ValueError("a damaged palette")
            if codes and (min(codes) < 0 or max(codes) >= len(palette)):
                raise ValueError("a code out of its palette")
            return Column(list(map(palette.__getitem__, codes)), set(map(type, palette)))
        if encoding == "lines":
            text = _loads(piece)
            if not isinstance(text, str):
                raise ValueError("not a string")
            return Column(text.split("\n"), {str})
        col = _loads(piece, exact=encoding == "json!")
        if not isinstance(col, list):
            raise ValueError("not a list")
        return col

    def _numbers(self, kind: str, piece: memoryview) -> list[Any]:
        """The numbers of an array of this kind (`f64`, `i64`, or an array typecode)."""
        values = array(_TYPECODES[kind])  # KeyError: damaged
        values.frombytes(piece)  # ValueError: not a whole number of values
        if self._swap:
            values.byteswap()
        return values.tolist()


def _loads(piece: memoryview | bytes, exact: bool = False) -> Any:
    """JSON: orjson, else stdlib `json` for what only it reads (NaN, lone surrogates), or
    stdlib `json` alone (`exact`: integers past 64 bits)."""
    if not exact:
        try:
            return orjson.loads(piece)
        except orjson.JSONDecodeError:
            pass
    return json.loads(bytes(piece))
