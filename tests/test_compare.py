"""`agentor.engine.fork.compare`: two runs aligned by turn, the first divergence, every difference
and the totals, from their events alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentor.engine.fork.compare import (
    ARGS,
    CALLS,
    FINAL_OUTPUT,
    REQUEST,
    RESULT,
    STATUS,
    TEXT,
    TURN,
    compare,
    turns_of,
)
from agentor.engine.store.file import FileStore
from tests.conftest import FIXTURES
from tests.forkkit import Weather, result_line, weather_model

PROMPT = "What is the weather in Oslo and Rome?"


@pytest.fixture
def store(tmp_path: Path) -> FileStore:
    return FileStore(tmp_path / "runs")


def test_a_run_and_its_copy_are_the_same(store: FileStore) -> None:
    w = Weather(store)
    parent = w.agent.run(PROMPT).run_id
    copy = w.agent.fork(parent).run_id
    found = compare(store.load(parent), store.load(copy))
    assert found.same and found.first is None and found.differences == []
    assert [p.number for p in found.turns] == [1, 2]
    assert found.b.fork is not None and found.b.fork.forked_from == parent
    assert found.a.fork is None
    assert found.a.usage == found.b.usage and found.a.tool_calls == found.b.tool_calls == 2


def test_a_result_fork_diverges_at_the_edited_result_and_the_answers_that_follow(
    store: FileStore,
) -> None:
    w = Weather(store)
    parent = w.agent.run(PROMPT).run_id
    rome = result_line(store, parent, "Rome")
    fork = w.agent.fork(parent, at=rome, result="Hail in Rome.").run_id
    a, b = store.load(parent), store.load(fork)
    found = compare(a, b)
    assert [(d.kind, d.turn, d.call, d.name) for d in found.differences] == [
        (RESULT, 1, 1, "get_weather"),
        (TEXT, 2, None, None),
        (FINAL_OUTPUT, None, None, None),
    ]  # turn 2's request differs only because of the result: not a difference of its own
    first = found.first
    assert first is not None and (first.a, first.b) == ("Sunny in Rome.", "Hail in Rome.")
    assert a[first.a_index].result == "Sunny in Rome."  # type: ignore[index]
    assert b[first.b_index].result == "Hail in Rome."  # type: ignore[index]
    assert first.describe() == "turn 1, call 2 get_weather: another result"
    assert found.differences[1].b == "heard: Sunny in Oslo. | Hail in Rome."
    assert found.a.usage_since(2).total_tokens == found.a.turns[1].usage.total_tokens  # type: ignore[union-attr]


def test_an_added_message_is_a_request_difference_and_a_longer_run_has_turns_of_its_own(
    store: FileStore,
) -> None:
    w = Weather(store)
    parent = w.agent.run(PROMPT).run_id
    gen = w.agent.fork(parent, "And Lima?", at=7).run_id
    found = compare(store.load(parent), store.load(gen))
    kinds = [(d.kind, d.turn) for d in found.differences]
    assert kinds[:3] == [(REQUEST, 2), (TEXT, 2), (CALLS, 2)]
    assert found.differences[0].b[-1] == {"role": "user", "content": "And Lima?"}
    assert (TURN, 3) in kinds and kinds[-1] == (FINAL_OUTPUT, None)
    turn2, turn3 = found.turns[1], found.turns[2]
    assert turn2.b is not None and turn2.b.calls[0].result == "Sunny in Lima."
    assert turn3.a is None and turn3.b is not None and turn3.b.text == "heard: Sunny in Lima."

    prompt = w.agent.fork(parent, "What is the weather in Oslo and Lima?", at=1).run_id
    found = compare(store.load(parent), store.load(prompt))
    assert [(d.kind, d.turn, d.call) for d in found.differences[:3]] == [
        (REQUEST, 1, None),
        (ARGS, 1, 1),
        (RESULT, 1, 1),
    ]


def test_calls_ids_are_not_differences_and_statuses_are(store: FileStore) -> None:
    w = Weather(store)
    parent = w.agent.run(PROMPT).run_id
    # Asked again by a model that numbers its calls its own way, with the same answers.
    again = w.agent.clone(model=weather_model(prefix="z")).fork(parent, at=2).run_id
    assert store.load(again)[-7].call_id == "z1_0"
    found = compare(store.load(parent), store.load(again))
    assert found.same, [d.describe() for d in found.differences]

    class Down:
        name = "down"

        async def generate(self, *args: object, **kwargs: object) -> object:
            raise ConnectionError("down")

    failed = w.agent.clone(model=Down()).fork(parent, at=7).run_id
    found = compare(store.load(parent), store.load(failed))
    assert [(d.kind, d.turn) for d in found.differences] == [
        (TURN, 2),
        (FINAL_OUTPUT, None),
        (STATUS, None),
    ]
    assert found.differences[-1].describe() == "the run: another status"


def test_an_upstream_fork_and_its_parent_compare_the_same_and_turns_are_the_latest_asked() -> None:
    store = FileStore(FIXTURES)
    parent = store.load("32e803417cab48f7a26fffcf902194d6")
    fork = store.load("e8c1463ce4314dc891670939d984ec41")
    assert compare(parent, fork).same
    resumed = store.load("resumedc543548d886efde61e1f1c8e3")  # turn 1 asked twice
    turns = turns_of(resumed)
    gens = [i for i, e in enumerate(resumed) if e.type == "generation"]
    assert [t.number for t in turns] == sorted({resumed[i].turn for i in gens})  # type: ignore[type-var]
    assert turns[0].index == max(i for i in gens if resumed[i].turn == 1)
    assert all(c.result_index is not None for c in turns[0].calls)


def test_compare_never_raises_on_odd_logs() -> None:
    from agentor.engine.events import Event

    odd = [
        Event("generation", calls=[{"function": "x"}], turn=None),
        Event("tool_result", call_id="", result=object()),
        Event("generation", text="hi"),
    ]
    found = compare(odd, [])
    assert [(d.kind, d.turn) for d in found.differences][:2] == [(TURN, 1), (TURN, 2)]
