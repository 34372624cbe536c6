"""`agentor approve --args` with no agent checks the edit against the parameters the run
recorded as offered to the model (its `run_start`'s `tools`), with the check the TUI's
argument editor makes (`agentor.engine.argschema.check_schema`): a bad edit is a usage error,
one line, and nothing is written; a good one is recorded. The console script in subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentor import InvalidArgsError, approve
from agentor.engine.argschema import check_schema, tool_parameters
from agentor.engine.events import RUN_START
from agentor.engine.store.file import FileStore
from tests.approvalkit import TRAVEL_PROMPT, Travel
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
