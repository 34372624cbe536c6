"""LogEncoder.encode: orjson writes a line, and whatever orjson would write differently goes to
json."""

from __future__ import annotations

import collections
import enum
import json
import math

import pytest

from agentor.engine.events import TOOL_RESULT, Event
from agentor.engine.log.format import LogDecoder, LogEncoder


class Colour(enum.IntEnum):
    RED = 1


def same(a, b) -> bool:
    """Equal as JSON values, NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def deep(n: int) -> list:
    value: list = []
    for _ in range(n):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [
        {"x": float("nan"), "y": [float("inf"), -float("inf")]},  # orjson would write null
        {"n": 2**64, "m": -(2**63) - 1, "ok": 2**63},  # past 64 bits orjson refuses
        {1: "int key", "s": "str key"},  # orjson refuses keys that are not strings
        {"s": "a\udcffb", "k\ud800": 1},  # lone surrogates: not UTF-8
        {"e": Colour.RED, "o": collections.OrderedDict(a=1)},  # subclasses: json's way
        {"deep": deep(300)},  # orjson stops at 254 levels
        {"t": ("a", 1), "none": None, "text": "null and void"},
        {"plain": "café ✓ \x1b[2J \u2028", "f": 0.1, "neg": -0.0, "big": 1e300, "tiny": 5e-324},
    ],
)
def test_every_value_reads_back_as_json_wrote_it(value):
    line = LogEncoder().encode(Event(TOOL_RESULT, result=value))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    expected = json.loads(json.dumps(value, ensure_ascii=False))
    assert same(json.loads(line), {"type": TOOL_RESULT, "result": expected})


def test_a_typical_event_is_one_compact_line_that_decodes_to_the_same_event():
    event = Event(
        TOOL_RESULT,
        name="get_weather",
        args={"city": "Zürich"},
        call_id="call_1",
        turn=3,
        result="sunny, 22C",
        started_at=1796045536.0175028,
        ended_at=1796045536.0179029,
        ts=1796045536.0179029,
    )
    line = LogEncoder().encode(event)
    assert line.startswith(b'{"type":"tool_result","turn":3,"name":"get_weather"')
    assert b'", "' not in line and b'": ' not in line  # no padding: every byte is the event
    assert "Zürich".encode() in line  # UTF-8, not \u escapes
    back = LogDecoder().decode(line.rstrip(b"\n"))
    assert isinstance(back, Event) and back == event


def test_a_value_that_is_not_json_is_refused_before_anything_is_written(tmp_path):
    from agentor.engine.store.file import FileStore

    store = FileStore(tmp_path)
    store.append("r", Event(TOOL_RESULT, result="first"))
    with store.lock("r"):
        store.append("r", Event(TOOL_RESULT, result="held"))  # the short path from here on
        with pytest.raises(TypeError):
            store.append("r", Event(TOOL_RESULT, result={"a set": {1, 2}}))
        store.append("r", Event(TOOL_RESULT, result="after"))
    lines = store.path("r").read_bytes().splitlines()
    assert [json.loads(x)["result"] for x in lines] == ["first", "held", "after"]


@pytest.mark.parametrize(
    "line",
    [
        b'{"type":"tool_result","result":NaN,"r2":[Infinity,-Infinity]}\n',  # json only
        b'{"type":"tool_result","result":123456789012345678901234567890}\n',  # past 64 bits
        b'{"type":"tool_result","result":"a\\udcffb"}\n',  # a lone surrogate, escaped
        b'\xef\xbb\xbf{"type":"tool_result","result":1}\n',  # a byte-order mark
        b'{"type":"tool_result","result":1,"result":2}\n',  # a key twice: the last wins
        b'{"type":"tool_result","result":"caf\xc3\xa9 \\u2028","f":0.1,"z":-0.0,"t":5e-324}\n',
        b'{"type":"tool_result","result":"\xff\xfe"}\n',  # not UTF-8: a bad line
        b'{"type":"tool_result","result":1e400}\n',  # past the largest float
        b'{"type":"tool_result"' + b',"x":[' * 3000 + b"]" * 3000 + b"}\n",  # too deep
        b'{"type":"tool_result","result":[1,2,]}\n',  # not JSON
        b"[1, 2]\n",  # not an object
    ],
)
def test_the_decoder_reads_a_line_as_json_reads_it(line):
    """orjson reads a line first (faster); what it refuses is read by `json`, so a line means
    what `json` makes of it: the same event, or a bad line."""
    got = LogDecoder().decode(line)
    try:
        expected = Event.from_dict(json.loads(line))
    except (ValueError, UnicodeDecodeError, RecursionError):
        assert not isinstance(got, Event), got
        return
    assert isinstance(got, Event)
    assert same(got.to_dict(), expected.to_dict())
