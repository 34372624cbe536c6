"""`replay`: pure functions from events to status, what to resend, pending calls, summaries."""

from __future__ import annotations

from typing import Any

from agentor.engine.events import Event, Usage
from agentor.engine.history import (
    call_parts,
    canonical_args,
    first_user_text,
    fold,
    last_run_end,
    resume_point,
    segments,
    status,
    summarize,
    tool_message,
    total_usage,
)
from agentor.testing import tool_call

PROMPT = [{"role": "system", "content": "Be nice."}, {"role": "user", "content": "Oslo?"}]


def start(**kw: Any) -> Event:
    return Event(
        "run_start", **{"agent": "A", "model": "m", "messages": PROMPT, "started_at": 100.0, **kw}
    )


def gen(turn: int, messages: list[dict[str, Any]], *calls: dict[str, Any], text: str | None = None):
    return Event(
        "generation",
        turn=turn,
        messages=messages,
        calls=list(calls) or None,
        text=text,
        usage=Usage(10, 2, 12),
        ts=100.0 + turn,
    )


def result(call_id: str, value: Any = "ok", name: str = "get_weather", **kw: Any) -> Event:
    return Event("tool_result", name=name, call_id=call_id, result=value, **kw)


def end(status_: str | None = "completed", text: str | None = "done", **kw: Any) -> Event:
    return Event("run_end", status=status_, text=text, ended_at=200.0, **kw)


OSLO = tool_call("get_weather", {"city": "Oslo"}, "c1")
ROME = tool_call("get_weather", {"city": "Rome"}, "c2")


def test_segments_split_at_each_run_start() -> None:
    orphan = Event("message", text="before any start")
    log = [orphan, start(), gen(1, PROMPT), start(), end()]
    assert [[e.type for e in s] for s in segments(log)] == [
        ["message"],
        ["run_start", "generation"],
        ["run_start", "run_end"],
    ]
    assert segments([]) == []


def test_status_is_decided_by_the_last_segment_only() -> None:
    assert status([]) == "incomplete"
    assert status([start(), gen(1, PROMPT)]) == "incomplete"
    assert status([start(), end()]) == "completed"
    assert status([start(), end("failed", None)]) == "failed"
    assert status([start(), end("max_turns", None)]) == "max_turns"
    assert status([start(), end(None)]) == "failed"  # an end that does not say how
    assert status([start(), end(), start()]) == "incomplete"
    assert status([start(), end("failed"), start(), end()]) == "completed"
    # Events after the end that are not a new segment (a fork marker) do not reopen it.
    assert status([start(), end(), Event("fork", forked_from="x")]) == "completed"
    assert last_run_end([start(), end(), start()]) is None
    assert last_run_end([start(), end("failed")]).status == "failed"


def test_total_usage_counts_every_generation_of_every_segment() -> None:
    log = [start(), gen(1, PROMPT, OSLO), start(), gen(1, PROMPT, OSLO), gen(2, PROMPT), end()]
    assert total_usage(log) == Usage(30, 6, 36)
    assert total_usage([start(), Event("generation")]) == Usage()


def test_canonical_args_and_call_parts() -> None:
    assert canonical_args('{"b": 1, "a": 2}') == canonical_args({"a": 2, "b": 1})
    assert canonical_args("{not json") == "{not json"
    assert canonical_args('{"a": 1}') != canonical_args('{"a": 2}')
    assert call_parts(OSLO) == ("c1", "get_weather", '{"city": "Oslo"}')
    assert call_parts({}) == ("", "", "")
    assert call_parts({"id": "x", "function": {"name": "f", "arguments": {"a": 1}}}) == (
        "x",
        "f",
        '{"a": 1}',
    )


def test_tool_message_shows_errors_and_encodes_non_text() -> None:
    assert tool_message("c1", result("c1", "sunny")) == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "sunny",
    }
    assert tool_message("c1", result("c1", None, error="boom"))["content"] == "Error: boom"
    assert tool_message("c1", result("c1", {"t": 22}))["content"] == '{"t": 22}'


def test_resume_point_before_any_generation_resends_the_input() -> None:
    point = resume_point([start()])
    assert point.messages == PROMPT and point.turn == 0
    assert point.final_text is None and not point.rewound
    assert point.input_messages == PROMPT
    # Upstream's failed run (no generation at all) resumes the same way.
    assert resume_point([start(), end("failed", None)]).messages == PROMPT


def test_resume_point_after_a_final_generation_only_needs_the_ending() -> None:
    point = resume_point([start(), gen(1, PROMPT, text="It is sunny.")])
    assert point.final_text == "It is sunny."
    assert point.turn == 1


def test_resume_point_when_every_call_has_a_result_continues() -> None:
    # Results may be recorded in any order; messages go back in call order.
    log = [start(), gen(1, PROMPT, OSLO, ROME), result("c2", "rainy"), result("c1", "sunny")]
    point = resume_point(log)
    assert not point.rewound and point.turn == 1 and point.final_text is None
    assert point.messages == [
        *PROMPT,
        {"role": "assistant", "content": None, "tool_calls": [OSLO, ROME]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "rainy"},
    ]
    assert point.recorded == []


def test_resume_point_rewinds_half_answered_calls_and_keeps_their_results() -> None:
    log = [start(), gen(1, PROMPT, OSLO, ROME), result("c1", "sunny", args={"city": "Oslo"})]
    point = resume_point(log)
    assert point.rewound
    assert point.messages == PROMPT
    assert point.turn == 0  # the next generation is turn 1 again
    assert [(r.name, r.args_key, r.event.result) for r in point.recorded] == [
        ("get_weather", canonical_args({"city": "Oslo"}), "sunny")
    ]


def test_each_record_answers_once_and_a_replay_is_a_record_again() -> None:
    oslo = {"city": "Oslo"}
    log = [start(), gen(1, PROMPT, OSLO, ROME), result("c1", "sunny", args=oslo)]
    assert [r.event.call_id for r in resume_point(log).recorded] == ["c1"]
    # The resumed run answered a new Oslo call (c3) from c1's record, then crashed again while
    # Rome ran: c1 has answered once and is spent; c3 carries the result on to the next rewind.
    c3 = tool_call("get_weather", oslo, "c3")
    c4 = tool_call("get_weather", {"city": "Rome"}, "c4")
    log += [start(), gen(1, PROMPT, c3, c4), result("c3", "sunny", args=oslo, replayed_from="c1")]
    point = resume_point(log)
    assert point.rewound
    assert [(r.event.call_id, r.event.result) for r in point.recorded] == [("c3", "sunny")]


def test_errored_results_are_not_kept_as_records() -> None:
    log = [start(), gen(1, PROMPT, OSLO, ROME), result("c1", None, error="boom", args={})]
    point = resume_point(log)
    assert point.rewound and point.recorded == []


def test_results_of_a_later_generation_do_not_answer_an_earlier_one() -> None:
    c3 = tool_call("get_weather", {"city": "Oslo"}, "c3")
    log = [start(), gen(1, PROMPT, OSLO), gen(1, PROMPT, c3), result("c1", "late")]
    point = resume_point(log)
    assert point.rewound and point.messages == PROMPT


def test_summarize_a_finished_two_segment_run() -> None:
    log = [
        start(ts=100.0),
        gen(1, PROMPT, OSLO),
        Event("tool_call", name="get_weather", call_id="c1", ts=101.5),
        start(started_at=150.0),
        gen(1, PROMPT, OSLO),
        Event("tool_call", name="get_weather", call_id="c1"),
        result("c1", "sunny", ts=160.0),
        gen(2, PROMPT, text="Sunny."),
        end("completed", "Sunny."),
    ]
    s = summarize("run1", log, bad_lines=2)
    assert s.run_id == "run1" and s.status == "completed"
    assert (s.agent, s.model) == ("A", "m")
    assert s.started_at == 100.0 and s.ended_at == 200.0 and s.last_event_at == 200.0
    assert s.turns == 2 and s.tool_calls == 1  # the rewound Oslo call, asked again, is one
    assert s.usage == Usage(30, 6, 36)
    assert s.first_prompt == "Oslo?"
    assert s.final_output == "Sunny." and s.error is None
    assert (s.segments, s.events, s.bad_lines) == (2, 9, 2)


def test_summarize_failed_and_incomplete_runs() -> None:
    failed = summarize("f", [start(), end("failed", None, error="HTTP 500")])
    assert failed.status == "failed" and failed.error == "HTTP 500"
    assert failed.final_output is None
    resumed = summarize("r", [start(), end("failed", None, error="x"), start()])
    assert resumed.status == "incomplete" and resumed.ended_at is None
    assert summarize("e", []).status == "incomplete"


def test_fold_in_pieces_equals_summarize_at_once() -> None:
    log = [start(), gen(1, PROMPT, OSLO), result("c1"), gen(2, PROMPT, text="ok"), end()]
    for cut in range(len(log) + 1):
        s = summarize("x", log[:cut])
        assert fold(s, log[cut:]) == summarize("x", log)


def test_first_user_text_reads_plain_and_part_content() -> None:
    assert first_user_text(PROMPT) == "Oslo?"
    parts = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}]}]
    assert first_user_text(parts) == "a"
    assert first_user_text([{"role": "system", "content": "s"}]) is None
    assert first_user_text(None) is None


def test_a_replay_keeps_its_record_when_the_server_reuses_call_ids() -> None:
    # Servers such as llama.cpp or a restarted scripted one number calls per request, so the
    # resumed generation's calls carry the same ids as the crashed one's. The replayed Oslo
    # result (c1, replayed_from c1) must still carry the record on to the next rewind.
    oslo = {"city": "Oslo"}
    log = [start(), gen(1, PROMPT, OSLO, ROME), result("c1", "sunny", args=oslo)]
    log += [start(), gen(1, PROMPT, OSLO, ROME)]
    log += [result("c1", "sunny", args=oslo, replayed_from="c1")]
    point = resume_point(log)
    assert point.rewound
    assert [(r.event.call_id, r.event.result) for r in point.recorded] == [("c1", "sunny")]


def test_a_new_segment_clears_the_error_of_the_one_before() -> None:
    from agentor.engine.events import RUN_END, RUN_START, Event

    failed = [
        Event(RUN_START, agent="A", messages=[{"role": "user", "content": "hi"}]),
        Event(RUN_END, status="failed", error="HTTP 500"),
    ]
    assert summarize("r", failed).error == "HTTP 500"
    resumed = summarize("r", [*failed, Event(RUN_START, agent="A", messages=[])])
    assert (resumed.status, resumed.error, resumed.segments) == ("incomplete", None, 2)


def rewound_two_call_run(resumes: int) -> list[Event]:
    """A two-call run whose slow second call is cut off `resumes` times: each resume rewinds
    turn 1 and asks both calls again, under the same ids (the server numbers calls per
    request); the first is answered from the record, the second runs again."""
    oslo, rome = {"city": "Oslo"}, {"city": "Rome"}

    def ask(at: float) -> list[Event]:
        return [
            gen(1, PROMPT, OSLO, ROME),
            Event("tool_call", name="get_weather", call_id="c1", args=oslo, turn=1, ts=at),
            Event("tool_call", name="get_weather", call_id="c2", args=rome, turn=1, ts=at),
        ]

    log = [start(ts=100.0), *ask(101.0), result("c1", "sunny", args=oslo, ts=102.0)]
    for n in range(resumes):
        at = 1000.0 * (n + 1)
        log += [start(started_at=at), *ask(at + 1)]
        log += [result("c1", "sunny", args=oslo, replayed_from="c1", ts=at + 2)]
    at = 1000.0 * resumes  # the last resume runs the second call at last
    log += [result("c2", "rainy", args=rome, ts=at + 3), gen(2, PROMPT, text="Done.")]
    return [*log, Event("run_end", status="completed", text="Done.", ended_at=at + 4)]


def test_tool_calls_counts_calls_not_the_tool_call_events_of_rewound_turns() -> None:
    log = rewound_two_call_run(resumes=3)
    assert sum(e.type == "tool_call" for e in log) == 8
    assert summarize("r", log).tool_calls == 2
    # Tailing folds the same count, wherever the reads were cut, and never more than two.
    for cut in range(len(log) + 1):
        s = summarize("r", log[:cut])
        assert s.tool_calls <= 2
        assert fold(s, log[cut:]) == summarize("r", log)


def test_each_turn_counts_its_calls_and_a_new_turn_adds_to_the_count() -> None:
    log = [start(), gen(1, PROMPT, OSLO, ROME)]
    log += [Event("tool_call", name="get_weather", call_id=c, turn=1) for c in ("c1", "c2")]
    log += [result("c1"), result("c2"), gen(2, PROMPT, OSLO)]
    log += [Event("tool_call", name="get_weather", call_id="c1", turn=2), result("c1")]
    assert summarize("r", log).tool_calls == 3  # 2 in turn 1, and turn 2 reuses id c1
    # A generation asked again for turn 2 (a rewind) with no calls this time: turn 2 has none.
    assert summarize("r", [*log, start(), gen(2, PROMPT, text="ok")]).tool_calls == 2


def test_active_time_sums_the_segments_spans_without_the_idle_gaps() -> None:
    log = rewound_two_call_run(resumes=3)
    s = summarize("r", log)
    # Segments: 100 -> 102, 1000 -> 1002, 2000 -> 2002, 3000 -> 3004 (the run_end's time).
    assert s.active_time() == 2 + 2 + 2 + 4
    assert s.wall_time == 3004 - 100
    # A run a live process runs: its current segment counts up to now.
    live = summarize("r", log[:-3])
    assert live.status == "incomplete"
    assert live.active_time() == 6 + 2
    assert live.active_time(now=3010.0) == 6 + 10
    assert summarize("e", []).active_time() is None
    # Times no clock can show are left out, never a crash or a NaN.
    odd = [
        start(started_at=float("nan")),
        Event("message", ts=float("inf")),
        Event("message", ts=5.0),
    ]
    assert summarize("o", odd).active_time() == 0.0


def test_a_segment_ends_at_its_run_end_and_an_untimed_one_keeps_the_sum() -> None:
    # A fork marker written long after the end is not work; nor is a segment without times.
    forked = [start(ts=100.0), Event("run_end", status="completed", ended_at=101.5)]
    forked.append(Event("fork", forked_from="x", ts=5000.0))
    s = summarize("f", forked)
    assert s.active_time() == 1.5 and s.active_time(now=9000.0) == 1.5
    assert s.wall_time == 4900.0
    untimed = [*forked, Event("run_start", agent="A"), Event("message", text="no time")]
    assert summarize("u", untimed).active_time() == 1.5
