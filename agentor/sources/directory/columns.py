"""Dataclass objects as columns of plain JSON values, and back: how the run index
(`agentor.sources.directory.runindex`) stores rows without naming one of their fields.

A class's *shape* lists its fields in order, each with the JSON types its hint allows
(`int`, `float`, `str`, `bool`, `None`, `list`, `dict`; `bytes` kept as a latin-1 string and
`Decimal` as its exact text, `_TEXT`), and
the shape of a dataclass a field holds (`RunRow.summary` -> `RunSummary` -> `Usage`). Columns
are named by their field's path (`summary.usage.input_tokens`); a field holding a dataclass has
a column of booleans (present or None) and its own columns over the present values only.

Reading columns back checks that every value has a type the field allows (one `set(map(type,
column))` per column, in C), and builds objects with their fields in order, positionally
(`map(cls, *columns)`): 100,000 rows in a few hundred milliseconds. A shape that differs from
the one stored (a field added, renamed, retyped, reordered) is not read at all: `_ShapeError`.

Columns may be any mapping (`sub_columns` views one under a prefix; a lazily read index decodes
a column when first asked), and are read without building objects too: `values` (one field of
every object, checked), `taken` (the columns of some objects, in a new order), `as_lists` (every
column a list, as `to_columns` gives them).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from itertools import accumulate, compress, repeat
from operator import attrgetter, is_not
from typing import Any

_LEAVES: dict[Any, tuple[str, tuple[type, ...]]] = {
    int: ("int", (int,)),
    float: ("float", (float, int)),
    str: ("str", (str,)),
    bool: ("bool", (bool,)),
    type(None): ("null", (type(None),)),
    bytes: ("bytes", (str,)),
    Decimal: ("decimal", (str,)),
    list: ("list", (list,)),
    dict: ("dict", (dict,)),
}


class Column(list[Any]):
    """A column whose value types are known without looking at each (one value repeated, a
    palette's): `from_columns` checks `types` instead."""

    def __init__(self, values: list[Any], types: set[type]) -> None:
        super().__init__(values)
        self.types = types


@dataclasses.dataclass(frozen=True)
class Repeated:
    """One value standing for a whole column, of the length the column is read at: a column
    over the rows that hold a nested object (`RunRow.cost` of the priced rows only) is shorter
    than the table, and only its reader knows by how much."""

    value: Any

    def sized(self, count: int) -> Column:
        return Column([self.value] * count, {type(self.value)})


# Values kept as text: to it, and back from it.
_TEXT: dict[type, tuple[Callable[[Any], str], Callable[[str], Any]]] = {
    bytes: (lambda b: b.decode("latin-1"), lambda t: t.encode("latin-1")),  # a byte a character
    Decimal: (str, Decimal),  # exact: a price is no float
}


class _ShapeError(ValueError):
    """Columns that do not fit the class (another version wrote them, or they are damaged)."""


@dataclasses.dataclass(frozen=True)
class _Field:
    name: str
    kinds: tuple[str, ...]  # the JSON types allowed, as the shape names them
    allowed: frozenset[type]  # what a decoded value's type may be
    nested: type | None  # the dataclass the field holds, if any
    text: type | None  # a type kept as text (`_TEXT`)


@functools.cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            raise _ShapeError(f"{cls.__name__}.{f.name} is not set by __init__")
        kinds: list[str] = []
        allowed: set[type] = set()
        nested = None
        for arg in _union_args(hints[f.name]):
            origin = typing.get_origin(arg) or arg
            if isinstance(origin, type) and dataclasses.is_dataclass(origin):
                nested, kind = origin, "obj:" + origin.__name__
                allowed.add(bool)
            elif origin in _LEAVES:
                kind, types_ = _LEAVES[origin]
                allowed.update(types_)
            else:
                raise _ShapeError(f"{cls.__name__}.{f.name}: {arg!r} has no JSON form here")
            kinds.append(kind)
        text = next((t for t in _TEXT if _LEAVES[t][0] in kinds), None)
        if nested is not None and len([k for k in kinds if k != "null"]) > 1:
            raise _ShapeError(f"{cls.__name__}.{f.name}: a dataclass or None, nothing else")
        out.append(_Field(f.name, tuple(kinds), frozenset(allowed), nested, text))
    return tuple(out)


def _union_args(hint: Any) -> tuple[Any, ...]:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return typing.get_args(hint)
    return (hint,)


def shape(cls: type) -> dict[str, Any]:
    """The class's fields and types, nested classes included (stored beside the columns)."""
    out: dict[str, Any] = {}
    for f in _fields(cls):
        out[f.name] = shape(f.nested) if f.nested is not None else list(f.kinds)
    return {"class": cls.__name__, "fields": out}


def to_columns(cls: type, objs: list[Any], skip: tuple[str, ...] = ()) -> dict[str, list[Any]]:
    """The objects' fields as columns (`skip`: fields not stored, given back on reading)."""
    cols: dict[str, list[Any]] = {}
    fields = [f for f in _fields(cls) if f.name not in skip]
    # Each object's fields at once, then turned into columns (in C): each object is visited
    # once, not once a field (100,000 rows, 60 fields: the cache missed a third as often).
    names = [f.name for f in fields]
    if len(names) > 1 and objs:
        each = map(attrgetter(*names), objs)  # a tuple of the fields of each object
        every = dict(zip(names, map(list, zip(*each, strict=True)), strict=True))
    else:
        every = {name: list(map(attrgetter(name), objs)) for name in names}
    for f in fields:
        values = every[f.name]
        if f.nested is not None:
            cols[f.name] = held = list(map(is_not, values, repeat(None)))
            present = list(compress(values, held))
            for key, col in to_columns(f.nested, present).items():
                cols[f"{f.name}.{key}"] = col
        elif f.text is not None:
            kind, (to_text, _) = f.text, _TEXT[f.text]
            cols[f.name] = [to_text(v) if isinstance(v, kind) else v for v in values]
        else:
            cols[f.name] = values
    return cols


def from_columns(
    cls: type, cols: Mapping[str, Any], count: int, given: dict[str, list[Any]] | None = None
) -> list[Any]:
    """`count` objects from their columns (lists, or `Repeated`; `given`: the columns of
    skipped fields, as built).
    _ShapeError when a column is missing, of another length, or holds a value of a wrong type."""
    try:
        return _objects(cls, cols, count, given or {})
    except (TypeError, ValueError, UnicodeError, ArithmeticError) as exc:
        if isinstance(exc, _ShapeError):
            raise
        raise _ShapeError(f"{cls.__name__}: {exc}") from None


def _objects(
    cls: type, cols: Mapping[str, Any], count: int, given: dict[str, list[Any]]
) -> list[Any]:
    args = []
    for f in _fields(cls):
        if f.name in given:
            args.append(given[f.name])
            continue
        col = _column(cols, f.name, count)
        kinds = col.types if isinstance(col, Column) else set(map(type, col))
        if not kinds <= f.allowed:
            raise _ShapeError(f"{cls.__name__}.{f.name}: a value of a wrong type")
        if f.nested is not None:
            col = _nested(f, cols, col)
        elif f.text is not None:
            from_text = _TEXT[f.text][1]
            if kinds == {str}:
                col = list(map(from_text, col))
            else:
                col = [from_text(v) if isinstance(v, str) else v for v in col]
        args.append(col)
    return list(map(cls, *args)) if args else [cls() for _ in range(count)]


def _nested(f: _Field, cols: Mapping[str, Any], present: list[Any]) -> list[Any]:
    """The objects of a field holding a dataclass (`present`: which rows hold one)."""
    assert f.nested is not None
    prefix = f.name + "."
    sub = sub_columns(cols, prefix)
    held = sum(present)
    objs = from_columns(f.nested, sub, held)
    if held == len(present):
        return objs
    it = iter(objs)
    return [next(it) if p else None for p in present]


class _Sub(Mapping[str, Any]):
    """The columns whose names start with a prefix, by their names without it; a column is
    taken from the whole only when asked (a lazily read index decodes it then)."""

    def __init__(self, cols: Mapping[str, Any], prefix: str) -> None:
        self._cols, self._prefix = cols, prefix
        self._names = [k[len(prefix) :] for k in cols if k.startswith(prefix)]

    def __getitem__(self, name: str) -> Any:
        return self._cols[self._prefix + name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def sub_columns(cols: Mapping[str, Any], prefix: str) -> Mapping[str, Any]:
    """The columns under `prefix` (`summary.` of a row's), by their names without it."""
    return _Sub(cols, prefix)


def _column(cols: Mapping[str, Any], name: str, count: int) -> list[Any]:
    col = cols.get(name)
    if isinstance(col, Repeated):
        return col.sized(count)
    if not isinstance(col, list) or len(col) != count:
        raise _ShapeError(f"column {name!r} is missing or of another length")
    return col


def taken(
    cls: type, cols: Mapping[str, Any], count: int, at: list[int], skip: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The columns of the `count` objects of `cls` cut to the objects at positions `at`, in that
    order (a mask's positions, a new order): `from_columns(cls, result, len(at))` builds those
    objects alone (`skip`: fields not stored). A column over the objects that hold a nested one
    is cut to the nested objects of the rows taken; a `Repeated` column stays one, a `Column`
    keeps its types. _ShapeError when a column is missing or of another length."""
    out: dict[str, Any] = {}
    for f in _fields(cls):
        if f.name in skip:
            continue
        col = cols.get(f.name)
        present: list[Any] | None
        if isinstance(col, Repeated):
            out[f.name] = col
            present = None if f.nested is None else col.sized(count)
        else:
            full = _column(cols, f.name, count)
            out[f.name] = _cut(full, at)
            present = full
        if f.nested is None or present is None:
            continue
        prefix = f.name + "."
        sub = sub_columns(cols, prefix)
        held = sum(present)
        if held == count:  # every row holds one: the same positions
            sub_at = at
        else:  # each row's place among the rows that hold one
            place = list(accumulate(present, initial=-1))[1:]
            sub_at = list(compress(map(place.__getitem__, at), map(present.__getitem__, at)))
        for key, value in taken(f.nested, sub, held, sub_at).items():
            out[prefix + key] = value
    return out


def _cut(col: list[Any], at: list[int]) -> list[Any]:
    values = list(map(col.__getitem__, at))
    return Column(values, col.types) if isinstance(col, Column) else values


def values(cls: type, cols: Mapping[str, Any], count: int, path: str) -> list[Any]:
    """The values of one field of the `count` objects of `cls`, by its path
    (`summary.usage.total_tokens`), None where an object on the way is absent; checked as
    `from_columns` checks them (a field holding an object: whether each holds one). A field kept
    as text is not read here. _ShapeError when a column is missing, of another length or holds
    a value of a wrong type."""
    name, _, rest = path.partition(".")
    f = next((f for f in _fields(cls) if f.name == name), None)
    if f is None or f.text is not None or (rest and f.nested is None):
        raise _ShapeError(f"{cls.__name__} has no plain field {path!r}")
    col = _column(cols, name, count)
    kinds = col.types if isinstance(col, Column) else set(map(type, col))
    if not kinds <= f.allowed:
        raise _ShapeError(f"{cls.__name__}.{name}: a value of a wrong type")
    if f.nested is None or not rest:
        return col
    prefix = name + "."
    sub = sub_columns(cols, prefix)
    held = sum(col)
    inner = values(f.nested, sub, held, rest)
    if held == count:
        return inner
    it = iter(inner)
    return [next(it) if p else None for p in col]


def as_lists(
    cls: type, cols: Mapping[str, Any], count: int, skip: tuple[str, ...] = ()
) -> dict[str, list[Any]]:
    """The columns of `count` objects as `to_columns` gives them: a `Repeated` one made a list of
    its length, a `Column` a plain list (`skip`: fields not stored). _ShapeError when a column
    is missing or of another length."""
    out: dict[str, list[Any]] = {}
    for f in _fields(cls):
        if f.name in skip:
            continue
        col = list(_column(cols, f.name, count))
        out[f.name] = col
        if f.nested is not None:
            prefix = f.name + "."
            sub = sub_columns(cols, prefix)
            for key, value in as_lists(f.nested, sub, sum(col)).items():
                out[prefix + key] = value
    return out
