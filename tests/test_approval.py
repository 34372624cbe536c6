"""Human approval in the engine (in process, ScriptedModel): gated calls pause the run
durably, decisions are events taken under the run's lock, and a resume goes on as decided."""

from __future__ import annotations

import asyncio
import getpass
import json
import socket
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agentor import (
    AlreadyDecidedError,
    ApprovalTimedOutError,
    InvalidArgsError,
    NotRequestedError,
    PendingCall,
    RunLockedError,
    RunNotFoundError,
    approve,
    function_tool,
    reject,
)
from agentor.agent import Agentor
from agentor.engine.approval.pending import APPROVED, REJECTED, approval_history, pending_calls
from agentor.engine.events import APPROVAL, APPROVAL_REQUEST, Event
from agentor.engine.history import status
from agentor.engine.models import ModelResponse
from agentor.engine.statuses import AWAITING_APPROVAL, COMPLETED
from agentor.engine.store import holding
from agentor.engine.store.file import FileStore
from agentor.engine.store.memory import MemoryStore
from agentor.testing import ScriptedModel, tool_call
from tests.approvalkit import TRAVEL_PROMPT, Travel, summary

PROMPT = TRAVEL_PROMPT
# A run that asks for both tools at once, then answers with what the tools said.
GATED_RUN = [
    "run_start",
    "generation",
    "tool_call",
    "tool_call",
    "approval_request",
    "tool_result",
    "run_end",
]
# The resume after an approval: the approved call's start is saved before it runs (a crash
# during it then waits for a person: agentor.engine.interrupted).
RESUMED = ["run_start", "tool_start", "tool_result", "generation", "message", "run_end"]


def types(events: list[Event]) -> list[str]:
    return [e.type for e in events]


# -- pausing -----------------------------------------------------------------------------------


def test_a_gated_call_pauses_the_run_while_the_ungated_ones_run(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store)

    result = travel.agent.run(PROMPT)

    assert result.status == AWAITING_APPROVAL and result.final_output is None
    assert travel.executed("book_hotel") == [], "a gated call never runs before its approval"
    assert travel.executed("get_weather") == [("get_weather", "Rome", 0)]
    events = store.load(result.run_id)
    assert types(events) == GATED_RUN
    request = events[4]
    assert (request.name, request.args, request.turn) == (
        "book_hotel",
        {"city": "Rome", "nights": 2},
        1,
    )
    assert request.call_id == events[2].call_id and request.deadline is None
    assert events[-1].status == AWAITING_APPROVAL
    assert status(events) == AWAITING_APPROVAL
    assert result.pending == [
        PendingCall(request.call_id, "book_hotel", request.args, 1, request.ts, None)
    ]
    assert pending_calls(events) == result.pending


def test_resuming_while_a_call_is_undecided_returns_at_once_writing_nothing(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store)
    run_id = travel.agent.run(PROMPT).run_id
    before = store.path(run_id).read_bytes()
    asked = len(travel.model.requests)

    again = travel.agent.resume(run_id)

    assert again.status == AWAITING_APPROVAL
    assert [p.name for p in again.pending] == ["book_hotel"]
    assert len(travel.model.requests) == asked, "no model call"
    assert store.path(run_id).read_bytes() == before, "nothing written"
    assert travel.executed("book_hotel") == []


def test_approved_call_runs_once_and_the_run_goes_on(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store)
    run_id = travel.agent.run(PROMPT).run_id
    [pending] = pending_calls(store.load(run_id))

    [decided] = approve(store, run_id, pending.call_id, by="alice", note="within budget")
    result = travel.agent.resume(run_id)

    assert (decided.decision, decided.by, decided.note, decided.args) == (
        APPROVED,
        "alice",
        "within budget",
        None,
    )
    assert result.status == COMPLETED
    assert result.final_output == "Booked 2 night(s) in Rome. | Sunny in Rome."
    assert travel.executed("book_hotel") == [("book_hotel", "Rome", 2)]
    events = store.load(run_id)
    assert types(events) == [*GATED_RUN, APPROVAL, *RESUMED]
    assert events[7].decision == APPROVED and events[7].by == "alice"
    # Once more: finished, nothing runs again.
    assert travel.agent.resume(run_id).status == COMPLETED
    assert travel.executed("book_hotel") == [("book_hotel", "Rome", 2)]


def test_an_edited_approval_runs_the_edit_and_keeps_the_request_as_it_was(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store)
    run_id = travel.agent.run(PROMPT).run_id

    travel.agent.approve(run_id, args={"city": "Milan", "nights": 1}, by="bob")
    result = travel.agent.resume(run_id)

    assert travel.executed("book_hotel") == [("book_hotel", "Milan", 1)]
    assert result.final_output == "Booked 1 night(s) in Milan. | Sunny in Rome."
    events = store.load(run_id)
    request = next(e for e in events if e.type == APPROVAL_REQUEST)
    decision = next(e for e in events if e.type == APPROVAL)
    answer = next(e for e in events if e.type == "tool_result" and e.name == "book_hotel")
    assert request.args == {"city": "Rome", "nights": 2}, "the request is kept as it was"
    assert decision.args == {"city": "Milan", "nights": 1}
    assert answer.args == {"city": "Milan", "nights": 1} and answer.error is None


def test_a_rejected_call_never_runs_and_the_model_is_told_who_rejected_it_and_why(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store)
    run_id = travel.agent.run(PROMPT).run_id

    [decided] = reject(store, run_id, reason="over budget", by="carol")
    result = travel.agent.resume(run_id)

    assert decided.decision == REJECTED and decided.note == "over budget"
    assert travel.executed("book_hotel") == []
    answer = next(
        e for e in store.load(run_id) if e.type == "tool_result" and e.name == "book_hotel"
    )
    assert answer.error == "rejected by carol: over budget" and answer.result is None
    tool_messages = [m for m in travel.model.requests[-1] if m["role"] == "tool"]
    assert tool_messages[0]["content"] == "Error: rejected by carol: over budget"
    assert result.status == COMPLETED


def test_agentor_reject_is_the_store_function_for_its_own_store(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store)
    run_id = travel.agent.run(PROMPT).run_id
    [decided] = travel.agent.reject(run_id, reason="too dear", by="erin")
    assert (decided.decision, decided.by, decided.note) == (REJECTED, "erin", "too dear")
    assert [e.decision for e in store.load(run_id) if e.type == APPROVAL] == [REJECTED]
    with pytest.raises(AlreadyDecidedError):
        travel.agent.reject(run_id, reason="again")
    travel.agent.resume(run_id)
    assert travel.executed("book_hotel") == []


def test_an_approval_without_by_names_the_user_at_this_host(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    run_id = Travel(store).agent.run(PROMPT).run_id
    [decided] = approve(store, run_id)
    assert decided.by == f"{getpass.getuser()}@{socket.gethostname()}"


def test_stream_chat_yields_the_approval_request_and_ends() -> None:
    travel = Travel(MemoryStore())

    async def collect() -> list[Event]:
        return [e async for e in travel.agent.stream_chat(PROMPT)]

    events = asyncio.run(collect())
    durable = [e for e in events if not e.transient]
    assert types(durable) == GATED_RUN
    assert durable[-1].status == AWAITING_APPROVAL


# -- what gates a call ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "args", "gated"),
    [
        (lambda a: a["nights"] > 3, {"city": "Rome", "nights": 2}, False),
        (lambda a: a["nights"] > 3, {"city": "Rome", "nights": 5}, True),
        (lambda a: a["missing"], {"city": "Rome"}, True),  # the rule raises: fails closed
        (lambda a: False, "not json {", True),  # arguments the rule cannot read
        (lambda a: False, "[1, 2]", True),  # not a JSON object
    ],
    ids=["rule-no", "rule-yes", "rule-raises", "invalid-json", "not-an-object"],
)
def test_a_rule_over_the_arguments_gates_per_call_and_fails_closed(
    rule: Any, args: Any, gated: bool
) -> None:
    travel = Travel(MemoryStore(), gate=rule)
    travel.asks = [("book_hotel", args)]
    result = travel.agent.run(PROMPT)
    assert (result.status == AWAITING_APPROVAL) is gated
    assert [p.name for p in result.pending] == (["book_hotel"] if gated else [])


def test_agent_level_globs_gate_tools_by_name() -> None:
    travel = Travel(MemoryStore(), gate=False, needs_approval=["get_*"])
    result = travel.agent.run(PROMPT)
    assert [p.name for p in result.pending] == ["get_weather"]
    assert travel.executed("book_hotel") == [("book_hotel", "Rome", 2)]
    assert travel.executed("get_weather") == []

    everything = travel.agent.clone(needs_approval=True, store=MemoryStore())
    assert [p.name for p in everything.run(PROMPT).pending] == ["book_hotel", "get_weather"]
    nothing = travel.agent.clone(needs_approval=(), store=MemoryStore())
    assert nothing.run(PROMPT).status == COMPLETED


def test_gating_options_are_checked_where_they_are_given() -> None:
    with pytest.raises(TypeError, match="needs_approval takes True, False or a function"):
        function_tool(needs_approval="yes")
    with pytest.raises(TypeError, match=r"approval_timeout takes a datetime\.timedelta"):
        function_tool(needs_approval=True, approval_timeout=60)
    with pytest.raises(ValueError, match="approval_timeout must be positive"):
        function_tool(needs_approval=True, approval_timeout=timedelta(0))
    with pytest.raises(TypeError, match="tool-name globs"):
        Agentor("a", model=ScriptedModel([]), needs_approval=[1])
    with pytest.raises(TypeError, match="approval_timeout takes"):
        Agentor("a", model=ScriptedModel([]), approval_timeout="1h")


# -- deadlines --------------------------------------------------------------------------------


def test_an_undecided_call_past_its_deadline_counts_as_rejected_at_resume(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store, approval_timeout=timedelta(milliseconds=50))
    first = travel.agent.run(PROMPT)
    [pending] = first.pending
    assert pending.deadline == pytest.approx(pending.requested_at + 0.05)
    time.sleep(max(0.0, pending.deadline - time.time()) + 0.01)  # the deadline is the condition

    with pytest.raises(ApprovalTimedOutError) as late:
        approve(store, first.run_id, pending.call_id)
    assert late.value.by == "timeout" and "timed out" in str(late.value)
    result = travel.agent.resume(first.run_id)

    assert result.status == COMPLETED and travel.executed("book_hotel") == []
    events = store.load(first.run_id)
    timeout = next(e for e in events if e.type == APPROVAL)
    assert (timeout.decision, timeout.by) == (REJECTED, "timeout")
    answer = next(e for e in events if e.type == "tool_result" and e.name == "book_hotel")
    assert answer.error.startswith("rejected by timeout: timed out: no decision by ")


def test_approving_every_call_after_one_deadline_passed_leaves_that_call_rejected(
    tmp_path: Path,
) -> None:
    # Two gated calls asked at once, with deadlines of their own: approving "every pending
    # call" once the first deadline has passed approves the other only; the late one counts
    # as rejected and never runs.
    store, ran = FileStore(tmp_path), []

    @function_tool(needs_approval=True, approval_timeout=timedelta(milliseconds=100))
    def book_hotel(city: str) -> str:
        """Book a hotel room."""
        ran.append(("book_hotel", city))
        return f"Booked a room in {city}."

    @function_tool(needs_approval=True, approval_timeout=timedelta(hours=1))
    def book_car(city: str) -> str:
        """Book a car."""
        ran.append(("book_car", city))
        return f"Booked a car in {city}."

    model = ScriptedModel(
        lambda messages: (
            summary(messages)
            if messages[-1]["role"] == "tool"
            else model.calls(("book_hotel", {"city": "Rome"}), ("book_car", {"city": "Rome"}))
        )
    )
    agent = Agentor("Travel Agent", model=model, tools=[book_hotel, book_car], store=store)
    first = agent.run(PROMPT)
    hotel, car = first.pending
    assert (hotel.name, car.name) == ("book_hotel", "book_car")
    assert hotel.deadline is not None and car.deadline is not None
    assert hotel.deadline < car.deadline
    time.sleep(max(0.0, hotel.deadline - time.time()) + 0.01)  # the deadline is the condition

    made = approve(store, first.run_id, by="alice")  # every pending call
    result = agent.resume(first.run_id)

    assert [(d.name, d.decision) for d in made] == [("book_car", APPROVED)]
    assert result.status == COMPLETED
    assert ran == [("book_car", "Rome")], "the call past its deadline ran"
    events = store.load(first.run_id)
    decided = {e.name: (e.decision, e.by) for e in events if e.type == APPROVAL}
    assert decided == {"book_car": (APPROVED, "alice"), "book_hotel": (REJECTED, "timeout")}
    answer = next(e for e in events if e.type == "tool_result" and e.name == "book_hotel")
    assert answer.error.startswith("rejected by timeout: timed out: no decision by ")


def test_a_tools_own_timeout_wins_over_the_agents() -> None:
    travel = Travel(MemoryStore(), approval_timeout=timedelta(hours=1))
    [pending] = travel.agent.run(PROMPT).pending
    assert pending.deadline == pytest.approx(pending.requested_at + 3600)

    @function_tool(needs_approval=True, approval_timeout=timedelta(minutes=5))
    def book_hotel(city: str, nights: int = 1) -> str:
        """Book."""
        return "booked"

    quick = travel.agent.clone(tools=[book_hotel, travel.agent.tools[1]], store=MemoryStore())
    [pending] = quick.run(PROMPT).pending
    assert pending.deadline == pytest.approx(pending.requested_at + 300)


# -- refusals ---------------------------------------------------------------------------------


def test_the_first_decision_wins_and_a_second_is_told_who_decided_what_and_when(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path)
    run_id = Travel(store).agent.run(PROMPT).run_id
    [first] = approve(store, run_id, by="alice", note="ok")
    size = store.path(run_id).stat().st_size

    with pytest.raises(AlreadyDecidedError) as second:
        reject(store, run_id, first.call_id, reason="no", by="bob")
    with pytest.raises(AlreadyDecidedError):
        approve(store, run_id, by="bob")  # every pending call: none is left

    err = second.value
    assert (err.call_id, err.decision, err.by, err.at, err.note) == (
        first.call_id,
        APPROVED,
        "alice",
        first.at,
        "ok",
    )
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(first.at))
    assert str(err) == (
        f"call {first.call_id} (book_hotel) of run {run_id} was already approved by alice "
        f"at {when} (ok)"
    )
    assert store.path(run_id).stat().st_size == size, "nothing written"


def test_unknown_runs_and_calls_never_requested_are_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    store = FileStore(tmp_path)
    run_id = Travel(store).agent.run(PROMPT).run_id
    size = store.path(run_id).stat().st_size
    weather_call = next(e for e in store.load(run_id) if e.name == "get_weather").call_id

    with pytest.raises(RunNotFoundError):
        approve(store, "nosuchrun")
    assert not store.path("nosuchrun").exists(), "a decision never creates a run"
    with pytest.raises(
        NotRequestedError, match=f"call {weather_call} .get_weather. of run .* did not ask"
    ):
        approve(store, run_id, weather_call)
    with pytest.raises(NotRequestedError, match="has no call nope"):
        reject(store, run_id, "nope", reason="x")
    with pytest.raises(ValueError, match="needs a reason"):
        reject(store, run_id, reason="  ")
    assert store.path(run_id).stat().st_size == size

    done = Travel(store, gate=False).agent.run(PROMPT).run_id
    with pytest.raises(NotRequestedError, match="has no call waiting for approval"):
        approve(store, done)


def test_a_run_held_by_a_live_process_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(holding, "DECISION_PATIENCE", 0.1)
    store = FileStore(tmp_path)
    run_id = Travel(store).agent.run(PROMPT).run_id
    holder = FileStore(tmp_path)  # its own descriptor: another holder, as another process is
    with holder.lock(run_id), pytest.raises(RunLockedError):
        approve(store, run_id)
    assert pending_calls(store.load(run_id)), "nothing was decided"


def test_edits_are_checked_against_the_tool_when_it_is_known(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store)
    run_id = travel.agent.run(PROMPT).run_id
    size = store.path(run_id).stat().st_size

    with pytest.raises(InvalidArgsError, match="nights: Input should be a valid integer") as bad:
        travel.agent.approve(run_id, args={"city": "Rome", "nights": "many"})
    assert bad.value.reason.startswith("invalid arguments for book_hotel")
    with pytest.raises(InvalidArgsError, match="a JSON object is needed, not list"):
        approve(store, run_id, args=[1, 2])
    assert store.path(run_id).stat().st_size == size

    # Without the tool, against the parameters the run recorded (as the TUI's editor checks).
    with pytest.raises(InvalidArgsError, match="nights: must be an integer, not a string"):
        approve(store, run_id, args={"city": "Rome", "nights": "many"})
    assert store.path(run_id).stat().st_size == size

    # A run that recorded no parameters (an upstream log): the bad edit is recorded, and
    # reaches the model as the tool's error.
    path = store.path(run_id)
    lines = path.read_bytes().splitlines(keepends=True)
    start = json.loads(lines[0])
    del start["tools"]
    path.write_bytes((json.dumps(start) + "\n").encode() + b"".join(lines[1:]))
    approve(store, run_id, args={"city": "Rome", "nights": "many"})
    travel.agent.resume(run_id)
    answer = next(
        e for e in store.load(run_id) if e.type == "tool_result" and e.name == "book_hotel"
    )
    assert answer.error.startswith("invalid arguments for book_hotel: nights")
    assert travel.executed("book_hotel") == []


def test_every_pending_call_at_once_and_an_edit_needs_its_call(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    travel = Travel(store, gate=True, needs_approval=["get_weather"])
    run_id = travel.agent.run(PROMPT).run_id
    assert [p.name for p in pending_calls(store.load(run_id))] == ["book_hotel", "get_weather"]

    with pytest.raises(InvalidArgsError, match="name the one call"):
        approve(store, run_id, args={"city": "Oslo"})
    made = approve(store, run_id, by="dana")

    assert [d.name for d in made] == ["book_hotel", "get_weather"]
    assert travel.agent.resume(run_id).status == COMPLETED
    assert [r[0] for r in travel.ran] == ["book_hotel", "get_weather"]


def test_a_call_id_asked_again_in_a_later_turn_is_a_new_request() -> None:
    # Many servers number calls per request: the same id in turn 2 is another call.
    ids = iter(["call_0", "call_0"])

    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        tools = [m for m in messages if m["role"] == "tool"]
        if len(tools) < 2:
            return ModelResponse(calls=[tool_call("book_hotel", {"city": "Rome"}, next(ids))])
        return summary(messages)

    store = MemoryStore()
    travel = Travel(store)
    travel.agent = travel.agent.clone(model=ScriptedModel(reply))
    run_id = travel.agent.run(PROMPT).run_id
    approve(store, run_id, "call_0", by="alice")
    second = travel.agent.resume(run_id)
    assert second.status == AWAITING_APPROVAL and second.pending[0].turn == 2
    reject(store, run_id, "call_0", reason="once is enough", by="bob")
    assert travel.agent.resume(run_id).final_output == (
        "Booked 1 night(s) in Rome. | Error: rejected by bob: once is enough"
    )
    decided = [d.decision if d else None for _, d in approval_history(store.load(run_id))]
    assert decided == [APPROVED, REJECTED]


# -- the log ----------------------------------------------------------------------------------


def test_approval_fields_round_trip_and_wrong_types_are_kept_aside() -> None:
    line = {
        "type": "approval",
        "call_id": "c1",
        "decision": "approved",
        "by": "alice@host",
        "note": "fine",
        "deadline": 1.5,
        "args": {"city": "Oslo"},
        "future": [1],
    }
    event = Event.from_dict(line)
    assert (event.decision, event.by, event.note, event.deadline) == (
        "approved",
        "alice@host",
        "fine",
        1.5,
    )
    assert event.to_dict() == line
    odd = Event.from_dict({"type": "approval", "decision": 7, "by": None, "deadline": "soon"})
    assert odd.decision is None and odd.deadline is None
    assert odd.extra == {"decision": 7, "by": None, "deadline": "soon"}
    assert odd.to_dict() == {"type": "approval", "decision": 7, "by": None, "deadline": "soon"}


def test_a_store_without_a_lock_still_takes_the_first_decision(tmp_path: Path) -> None:
    class PlainStore:
        """The three-method protocol only: no lock."""

        def __init__(self) -> None:
            self.inner = MemoryStore()

        def append(self, run_id: str, event: Event) -> None:
            self.inner.append(run_id, event)

        def load(self, run_id: str) -> list[Event]:
            return self.inner.load(run_id)

        def list_runs(self) -> list[str]:
            return self.inner.list_runs()

    store = PlainStore()
    travel = Travel(store)
    run_id = travel.agent.run(PROMPT).run_id
    [pending] = pending_calls(store.load(run_id))
    approve(store, run_id, by="alice")
    # A racing decider that read the log before alice wrote (what a lock would prevent).
    store.append(
        run_id, Event(APPROVAL, call_id=pending.call_id, decision=REJECTED, by="eve", note="x")
    )

    assert travel.agent.resume(run_id).status == COMPLETED
    assert travel.executed("book_hotel") == [("book_hotel", "Rome", 2)], "the first decision counts"


def test_resume_finishes_a_turn_killed_before_its_run_end(tmp_path: Path) -> None:
    # Killed after the request was saved, before the ungated call ran: the resume runs that
    # call and ends the segment awaiting approval; the gated call still waits.
    store = FileStore(tmp_path)
    travel = Travel(store)
    run_id = travel.agent.run(PROMPT).run_id
    path = store.path(run_id)
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:5]))
    travel.ran.clear()

    result = travel.agent.resume(run_id)

    assert result.status == AWAITING_APPROVAL
    assert travel.ran == [("get_weather", "Rome", 0)]
    assert types(store.load(run_id))[5:] == ["run_start", "tool_result", "run_end"]
    assert json.loads(path.read_bytes().splitlines()[-1])["status"] == AWAITING_APPROVAL


def test_results_of_a_gated_turn_answer_only_their_own_calls(tmp_path: Path) -> None:
    # get_weather ran in the gated turn; asked again in the next turn, it runs again (a result
    # is replayed only for the rewound turn it belongs to, and a gated turn is never rewound).
    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        answered = [m for m in messages if m["role"] == "tool"]
        if not answered:
            return travel.model.calls(*travel.asks)
        if len(answered) == 2:
            return travel.model.calls(("get_weather", {"city": "Rome"}))
        return summary(messages)

    store = FileStore(tmp_path)
    travel = Travel(store)
    travel.agent = travel.agent.clone(model=ScriptedModel(reply))
    run_id = travel.agent.run(PROMPT).run_id
    approve(store, run_id)
    travel.agent.resume(run_id)
    assert travel.executed("get_weather") == [("get_weather", "Rome", 0)] * 2
    assert not any(e.replayed_from for e in store.load(run_id))
