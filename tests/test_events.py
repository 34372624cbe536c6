"""`Event`: the one schema of a run log, upstream-compatible, tolerant of what it does not know."""

from __future__ import annotations

import json

import pytest

from agentor.engine.events import Event, Usage


def test_to_json_writes_type_first_and_skips_none() -> None:
    e = Event("tool_result", name="get_weather", call_id="c1", result="sunny", turn=1)
    line = e.to_json()
    assert line.startswith('{"type": "tool_result"')
    assert json.loads(line) == {
        "type": "tool_result",
        "name": "get_weather",
        "call_id": "c1",
        "result": "sunny",
        "turn": 1,
    }
    assert "\n" not in line


def test_round_trip_of_every_known_field() -> None:
    e = Event(
        "generation",
        run_id="r1",
        agent="A",
        model="m",
        turn=2,
        name="n",
        call_id="c",
        args={"city": "Oslo"},
        result=[1, 2],
        error="bad",
        status="completed",
        text="héllo ☀",
        calls=[{"id": "c", "type": "function", "function": {"name": "n", "arguments": "{}"}}],
        usage=Usage(3, 4, 7),
        started_at=1.5,
        ended_at=2.25,
        ts=3.125,
        v=1,
        pid=42,
        host="h",
        forked_from="f",
        replayed_from="c0",
        messages=[{"role": "user", "content": "hi"}],
    )
    back = Event.from_dict(json.loads(e.to_json()))
    assert back == e
    assert back.usage == Usage(3, 4, 7)
    assert "héllo ☀" in e.to_json()  # not \u-escaped: upstream writes the same


def test_unknown_fields_survive_a_round_trip() -> None:
    data = {
        "type": "tool_call",
        "name": "get_weather",
        "future_field": {"nested": [1, 2]},
        "another": None,
        "call_id": "c1",
    }
    e = Event.from_dict(data)
    assert e.extra == {"future_field": {"nested": [1, 2]}, "another": None}
    assert json.loads(e.to_json()) == data
    assert Event.from_dict(json.loads(e.to_json())) == e


def test_known_fields_of_the_wrong_type_are_kept_aside_not_trusted() -> None:
    data = {"type": "generation", "turn": "two", "usage": "lots", "messages": "not a list"}
    e = Event.from_dict(data)
    assert e.turn is None and e.usage is None and e.messages is None
    assert e.extra == {"turn": "two", "usage": "lots", "messages": "not a list"}
    assert json.loads(e.to_json()) == data


def test_unknown_event_types_load_as_that_type() -> None:
    data = {"type": "approval_request", "name": "delete_everything", "reason": "asks first"}
    e = Event.from_dict(data)
    assert e.type == "approval_request" and e.name == "delete_everything"
    assert not e.transient
    assert json.loads(e.to_json()) == data


def test_text_delta_is_transient() -> None:
    assert Event("text_delta", text="hi").transient
    assert not Event("message", text="hi").transient


@pytest.mark.parametrize("bad", [[], "run_start", 3, {"no": "type"}, {"type": 5}])
def test_from_dict_rejects_what_is_not_an_event(bad: object) -> None:
    with pytest.raises(ValueError):
        Event.from_dict(bad)  # type: ignore[arg-type]


def test_usage_adds_and_reads_partial_values() -> None:
    assert Usage(1, 2, 3) + Usage(10, 20, 30) == Usage(11, 22, 33)
    assert Usage.from_value({"input_tokens": 5}) == Usage(5, 0, 0)
    assert Usage.from_value({"input_tokens": 2.0, "output_tokens": "x"}) == Usage(2, 0, 0)
    assert Usage.from_value([1, 2]) is None
    assert Usage(1, 2, 3).to_dict() == {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
