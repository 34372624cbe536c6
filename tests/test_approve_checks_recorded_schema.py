"""`agentor approve --args` with no agent checks the edit against the parameters the run
recorded as offered to the model (its `run_start`'s `tools`), with the check the TUI's
argument editor makes (`agentor.engine.argschema.check_schema`): a bad edit is a usage error,
one line, and nothing is written; a good one is recorded. The parameters are those of the segment
that asked (a resumed run may offer a changed tool). The console script in subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentor import Agentor, InvalidArgsError, approve, function_tool, reject
from agentor.engine.argschema import check_schema, tool_parameters
from agentor.engine.events import RUN_START
from agentor.engine.models import ModelResponse
from agentor.engine.statuses import AWAITING_APPROVAL
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.approvalkit import TRAVEL_PROMPT, Travel, summary
from tests.test_agentor_command import agentor, refused


@pytest.fixture
def waiting(tmp_path: Path) -> tuple[Path, str]:
    runs = tmp_path / "runs"
    run_id = Travel(FileStore(runs)).agent.run(TRAVEL_PROMPT).run_id
    return runs, run_id


def recorded(runs: Path, run_id: str) -> dict:
    start = next(e for e in FileStore(runs).load(run_id) if e.type == RUN_START)
    params = tool_parameters(start, "book_hotel")
    assert params is not None and params["properties"]["nights"]["type"] == "integer"
    return params


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ({"city": "Milan", "nights": "two"}, "nights: must be an integer, not a string"),
        ({"nights": 3}, 'missing required property "city"'),
        ({"city": 7}, "city: must be a string, not an integer"),
    ],
    ids=["wrong type", "missing", "not a string"],
)
def test_a_bad_edit_is_refused_as_the_tui_refuses_it_and_nothing_is_written(
    waiting: tuple[Path, str], edit: dict, why: str
) -> None:
    runs, run_id = waiting
    log = runs / f"{run_id}.jsonl"
    before = log.read_bytes()
    line = refused(agentor("approve", run_id, "--dir", str(runs), "--args", json.dumps(edit)), 2)
    assert line.endswith(why), line
    assert check_schema(edit, recorded(runs, run_id)) == why  # the TUI editor's own words
    assert log.read_bytes() == before
    with pytest.raises(InvalidArgsError, match=why):
        approve(FileStore(runs), run_id, args=edit)  # the library, without an agent, too
    assert log.read_bytes() == before


def test_a_good_edit_is_recorded(waiting: tuple[Path, str]) -> None:
    runs, run_id = waiting
    edit = '{"city": "Milan", "nights": 3}'
    decided = agentor("approve", run_id, "--dir", str(runs), "--args", edit, "--by", "alice")
    assert decided.returncode == 0, decided.stderr
    said = f'approved c1_0 (book_hotel) of run {run_id} as alice, with {{"city": "Milan", '
    assert decided.stdout.startswith(said + '"nights": 3}\n')
    [approval] = [e for e in FileStore(runs).load(run_id) if e.type == "approval"]
    assert approval.args == {"city": "Milan", "nights": 3}


def booking_agent(store: FileStore, tool: object) -> Agentor:
    """An agent whose gated `book_hotel` is `tool`: the model asks it for Rome until it is
    told twice, then says what it was told."""

    def reply(messages: list[dict]) -> ModelResponse:
        if sum(m["role"] == "tool" for m in messages) >= 2:
            return summary(messages)
        return model.calls(("book_hotel", {"city": "Rome", "nights": 2}))

    model = ScriptedModel(reply)
    return Agentor("Travel Agent", model=model, tools=[tool], store=store)


def test_an_edit_is_checked_against_the_tool_the_asking_segment_offered(tmp_path: Path) -> None:
    """Segment 1 offered a `book_hotel(city)`, segment 2 (resumed by a newer agent) one that
    also requires `nights`; the call waiting is segment 2's, so an edit without `nights` is
    refused, from the library and from the shell, and nothing is written."""

    @function_tool(needs_approval=True)
    def book_hotel(city: str) -> str:
        """Book a hotel room.

        Args:
            city: Where.
        """
        return f"Booked {city}."

    @function_tool(needs_approval=True, name="book_hotel")
    def book_hotel_for_nights(city: str, nights: int) -> str:
        """Book a hotel room.

        Args:
            city: Where.
            nights: How many nights.
        """
        return f"Booked {nights} night(s) in {city}."

    runs = tmp_path / "runs"
    store = FileStore(runs)
    run_id = booking_agent(store, book_hotel).run(TRAVEL_PROMPT).run_id
    reject(store, run_id, reason="not that one", by="alice")
    assert booking_agent(store, book_hotel_for_nights).resume(run_id).status == AWAITING_APPROVAL
    starts = [e for e in store.load(run_id) if e.type == RUN_START]
    offered = [tool_parameters(s, "book_hotel")["required"] for s in starts]  # type: ignore[index]
    assert offered == [["city"], ["city", "nights"]]

    log = runs / f"{run_id}.jsonl"
    before = log.read_bytes()
    why = 'missing required property "nights"'
    with pytest.raises(InvalidArgsError, match=why):
        approve(store, run_id, args={"city": "Milan"})
    line = refused(agentor("approve", run_id, "--dir", str(runs), "--args", '{"city": "Milan"}'), 2)
    assert line.endswith(why), line
    assert log.read_bytes() == before
    [made] = approve(store, run_id, args={"city": "Milan", "nights": 3}, by="alice")
    assert made.args == {"city": "Milan", "nights": 3}
