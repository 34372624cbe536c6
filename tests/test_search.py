"""Search across runs: every event's text, both stores, line numbers as in the file, bad lines
skipped, hostile input safe."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentor.engine.events import (
    GENERATION,
    RUN_END,
    RUN_START,
    TOOL_CALL,
    TOOL_RESULT,
    Event,
    Usage,
)
from agentor.engine.store.file import FileStore
from agentor.engine.store.matching import Hit
from agentor.engine.store.memory import MemoryStore
from agentor.ops import run_search as search_module
from agentor.ops import search_scan
from agentor.ops.run_search import search
from tests import test_reliability_fuzz as fz
from tests.conftest import FIXTURES, ROOT


def weather_run(store: FileStore | MemoryStore, run_id: str, city: str, *, error: bool) -> None:
    prompt = [{"role": "user", "content": f"What is the weather in {city}?"}]
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    events = [
        Event(RUN_START, run_id=run_id, agent="Weather Agent", model="m", messages=prompt, ts=1.0),
        Event(GENERATION, turn=1, calls=[call], messages=prompt, usage=Usage(1, 1, 2), ts=2.0),
        Event(TOOL_CALL, turn=1, name="get_weather", call_id="c1", args={"city": city}, ts=3.0),
    ]
    if error:
        events.append(
            Event(TOOL_RESULT, turn=1, name="get_weather", call_id="c1", args={"city": city},
                  error=f"TimeoutError: {city} station did not answer", ts=4.0)
        )  # fmt: skip
        events.append(Event(RUN_END, status="failed", error="gave up", ts=5.0))
    else:
        events.append(
            Event(TOOL_RESULT, turn=1, name="get_weather", call_id="c1", args={"city": city},
                  result=f"Sunny in {city}, 22°C.", ts=4.0)
        )  # fmt: skip
        answer = f"It is sunny in {city}."
        events.append(Event(RUN_END, status="completed", text=answer, ts=5.0))
    store.append_many(run_id, events)


@pytest.fixture(params=["file", "memory", "pg"])
def two_runs(request: pytest.FixtureRequest, tmp_path: Path) -> FileStore | MemoryStore:
    """Two runs in a directory, in memory, in a database (which searches them itself)."""
    store: FileStore | MemoryStore
    if request.param == "pg":
        store = request.getfixturevalue("pg_stores")()
    else:
        store = FileStore(tmp_path / "runs") if request.param == "file" else MemoryStore()
    weather_run(store, "r1", "Oslo", error=False)
    weather_run(store, "r2", "Lima", error=True)
    return store


def where(hits: list[Hit]) -> list[tuple[str, int, str, str]]:
    return [(h.run_id, h.line, h.type, h.field) for h in hits]


def test_prompts_arguments_results_answers_and_errors_are_found(
    two_runs: FileStore | MemoryStore,
) -> None:
    assert where(list(search(two_runs, "Oslo"))) == [
        ("r1", 1, "run_start", "messages[0].content"),
        ("r1", 2, "generation", "messages[0].content"),
        ("r1", 3, "tool_call", "args.city"),
        ("r1", 4, "tool_result", "args.city"),
        ("r1", 5, "run_end", "text"),
    ]
    assert where(list(search(two_runs, "did not answer"))) == [
        ("r2", 4, "tool_result", "error"),
    ]
    assert where(list(search(two_runs, "gave up"))) == [("r2", 5, "run_end", "error")]
    assert where(list(search(two_runs, "22°C"))) == [("r1", 4, "tool_result", "result")]
    # A tool argument's name is text; the log's own keys and the event types are not.
    assert [h.field for h in search(two_runs, "city")][:1] == ["args.city"]
    assert list(search(two_runs, "tool_result")) == []
    assert list(search(two_runs, "turn")) == []


def test_a_directory_is_searched_like_its_store(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    weather_run(store, "r1", "Oslo", error=False)
    assert list(search(tmp_path, "sunny")) == list(search(store, "sunny"))
    assert list(search(str(tmp_path), "sunny")) == list(search(store, "sunny"))
    with pytest.raises(FileNotFoundError, match="no runs directory"):
        search(tmp_path / "missing", "x")


def test_a_hit_names_the_line_as_written_in_the_file(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    weather_run(store, "r1", "Oslo", error=False)
    lines = (tmp_path / "r1.jsonl").read_bytes().splitlines()
    for hit in search(tmp_path, "oslo"):
        assert "oslo" in lines[hit.line - 1].decode().lower()
        assert json.loads(lines[hit.line - 1])["type"] == hit.type


def test_case_is_smart_unless_said(two_runs: FileStore | MemoryStore) -> None:
    assert len(list(search(two_runs, "oslo"))) == 5  # no capital: case ignored
    assert list(search(two_runs, "OSLO")) == []  # a capital: exact
    assert len(list(search(two_runs, "OSLO", ignore_case=True))) == 5
    assert list(search(two_runs, "oslo", ignore_case=False)) == []


def test_the_snippet_is_one_visible_line_around_the_match(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    long = "x" * 100 + "\x1b[2J\x1b]52;c;cHduZWQ=\x07 Reykjavik\nnext line\t" + "y" * 200
    store.append_many("r", [Event(TOOL_RESULT, name="t", call_id="c", result=long, ts=1.0)])
    [hit] = search(tmp_path, "Reykjavik")
    assert hit.snippet[hit.start : hit.end] == "Reykjavik"
    assert hit.snippet.startswith("…") and hit.snippet.endswith("…")
    assert "␛[2J␛]52;c;cHduZWQ=␇ Reykjavik⏎next line " in hit.snippet
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", hit.snippet)
    assert len(hit.snippet) <= 2 + 40 + len("Reykjavik") + 80 + 20


def test_regex_search_matches_decoded_text(two_runs: FileStore | MemoryStore) -> None:
    hits = list(search(two_runs, r"sunny in (Oslo|Lima)\.$", regex=True))
    assert where(hits) == [("r1", 5, "run_end", "text")]
    assert hits[0].snippet[hits[0].start : hits[0].end] == "sunny in Oslo."
    with pytest.raises(ValueError, match="not a regular expression"):
        search(two_runs, "(unclosed", regex=True)
    with pytest.raises(ValueError, match="non-empty query"):
        search(two_runs, "")


def test_escaped_text_is_found_as_people_read_it(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    text = 'He said "bring an umbrella" in Zürich; path C:\\temp\\x. Ünïcode 東京'
    store.append_many("r", [Event(TOOL_RESULT, name="t", call_id="c", result=text, ts=1.0)])
    for query in ['"bring an umbrella"', "C:\\temp", "Zürich", "zürich", "東京", "ünïcode"]:
        [hit] = search(tmp_path, query)
        assert hit.field == "result", query


def test_upstream_logs_are_searched_through_their_escapes(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES, tmp_path / "runs", ignore=shutil.ignore_patterns("*.md", "*.json"))
    hits = list(search(tmp_path / "runs", "sunny and 22°C"))  # written as 22\u00b0C upstream
    assert hits and {h.type for h in hits} >= {"generation", "message", "run_end"}


def test_bad_lines_are_skipped_and_numbering_stays_physical(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b'{"type": "message", "text": "Oslo one"}\n'
        b"not json at all Oslo\n"
        b'["a list", "Oslo"]\n'
        b'{"no_type": "Oslo"}\n'
        b"\xff\xfe Oslo invalid utf-8\n"
        b'{"type": "message", "text": "Oslo two"}\n'
        b'{"type": "message", "text": "Oslo torn'
    )
    assert [(h.line, h.snippet) for h in search(tmp_path, "Oslo")] == [
        (1, "Oslo one"),
        (6, "Oslo two"),
    ]


def test_a_log_read_in_pieces_keeps_its_line_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "FIRST", 256)
    monkeypatch.setattr(search_module, "CHUNK", 300)
    store = FileStore(tmp_path)
    events = [
        Event(TOOL_RESULT, name="t", call_id=f"c{i}", result=f"row {i} " + "z" * (i % 7 * 90))
        for i in range(60)
    ]
    store.append_many("big", events)
    expect = [i + 1 for i in range(60) if "7" in str(i)]
    assert [h.line for h in search(tmp_path, "row")] == list(range(1, 61))
    assert [h.line for h in search(tmp_path, r"row \d*7", regex=True)] == expect
    assert [h.line for h in search(tmp_path, "7 z")] == [
        i + 1 for i in range(60) if str(i).endswith("7") and i % 7
    ]


def many_runs(directory: Path, count: int = 12) -> None:
    store = FileStore(directory)
    for i in range(count):
        weather_run(store, f"r{i:02d}", ["Oslo", "Lima", "Quito"][i % 3], error=i % 4 == 0)


def test_a_big_directory_is_searched_by_two_processes_with_the_same_hits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many_runs(tmp_path)
    alone = list(search(tmp_path, "lima"))
    helpers: list[Any] = []
    start = search_module._Helper.start

    def spy(*args: Any) -> Any:
        helpers.append(start(*args))
        return helpers[-1]

    monkeypatch.setattr(search_module, "PARALLEL_FROM", 4)
    monkeypatch.setattr(search_module._Helper, "start", spy)
    together = list(search(tmp_path, "lima"))
    assert together == alone and len({h.run_id for h in alone}) == 4
    assert helpers[0] is not None and helpers[0].proc.returncode == 0
    assert {h.run_id for h in together} & {"r07", "r10"}  # found in the helper's half


def test_a_helper_that_fails_leaves_the_search_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many_runs(tmp_path)
    alone = list(search(tmp_path, "Quito"))
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 4)
    monkeypatch.setattr(search_module.sys, "executable", shutil.which("false"))
    assert list(search(tmp_path, "Quito")) == alone


def test_a_search_given_up_stops_its_helper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many_runs(tmp_path)
    helpers: list[Any] = []
    start = search_module._Helper.start
    monkeypatch.setattr(search_module, "PARALLEL_FROM", 4)
    monkeypatch.setattr(
        search_module._Helper, "start", lambda *a: helpers.append(start(*a)) or helpers[-1]
    )
    hits = search(tmp_path, "Oslo")
    next(hits)
    hits.close()  # type: ignore[attr-defined]
    assert helpers[0].proc.returncode is not None  # ended (killed, or done): never left behind


def test_the_helper_finds_a_needle_across_the_pieces_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_scan, "FIRST", 100)
    monkeypatch.setattr(search_scan, "CHUNK", 100)
    dir_fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for at in range(0, 400, 7):
            data = bytearray(b"x" * 400)
            data[at : at + 6] = b"NEEDLE"
            (tmp_path / "r.jsonl").write_bytes(bytes(data))
            assert search_scan.holds(dir_fd, "r.jsonl", b"NEEDLE", False), at
            assert search_scan.holds(dir_fd, "r.jsonl", b"needle", True), at
            assert not search_scan.holds(dir_fd, "r.jsonl", b"needle", False), at
        assert not search_scan.holds(dir_fd, "missing.jsonl", b"x", False)
    finally:
        os.close(dir_fd)


def test_the_helper_knows_run_files_as_the_store_does() -> None:
    from agentor.engine.store.run_ids import RUN_ID_RE, SUFFIX
    from agentor.ops import search_scan

    assert search_scan.RUN_FILE.pattern == RUN_ID_RE.pattern + re.escape(SUFFIX)


def test_symlinks_fifos_directories_and_sidecars_are_not_runs(tmp_path: Path) -> None:
    outside = tmp_path / "outside.jsonl"
    outside.write_text('{"type": "message", "text": "Oslo secret"}\n')
    runs = tmp_path / "runs"
    store = FileStore(runs)
    weather_run(store, "real", "Oslo", error=False)
    (runs / "link.jsonl").symlink_to(outside)
    os.mkfifo(runs / "fifo.jsonl")
    (runs / "dir.jsonl").mkdir()
    (runs / "real.jsonl.torn").write_text('{"type": "message", "text": "Oslo torn"}\n')
    (runs / ".hidden.jsonl").write_text('{"type": "message", "text": "Oslo hidden"}\n')
    assert {h.run_id for h in search(runs, "Oslo")} == {"real"}


def test_a_runs_directory_swapped_for_a_symlink_is_refused(tmp_path: Path) -> None:
    runs, attacker = tmp_path / "runs", tmp_path / "attacker"
    store = FileStore(runs)
    weather_run(store, "r1", "Oslo", error=False)
    attacker.mkdir()
    (attacker / "r9.jsonl").write_text('{"type": "message", "text": "Oslo secret"}\n')
    runs.rename(tmp_path / "moved")
    runs.symlink_to(attacker)
    with pytest.raises(OSError, match=r"refusing to search .*runs: it is no longer a directory"):
        list(search(store, "Oslo"))


def test_the_sample_runs_are_searchable() -> None:
    hits = list(search(ROOT / "runs", "weather"))
    assert len({h.run_id for h in hits}) == len(list((ROOT / "runs").glob("*.jsonl")))


# -- hostile input: the fuzz corpus --------------------------------------------------------------

QUERIES = ["Oslo", "a", "type", "é", '"', "\\", "null", "\x1b", "1"]
REGEXES = [".", "[0-9]+", "^$", "(?i)OSLO"]


def _texts(event: dict[str, Any]) -> list[str]:
    """The oracle: every string of an event but its type, and every key below the top level."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                out.append(k)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for key, value in event.items():
        if key != "type":
            walk(value)
    return out


def _event(line: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("type"), str) else None


def check_search(data: bytes) -> None:
    directory = fz.scratch() / "search"
    directory.mkdir(exist_ok=True)
    (directory / "fuzz.jsonl").write_bytes(data)
    lines = data.split(b"\n")
    events = {i + 1: e for i, line in enumerate(lines) if (e := _event(line)) is not None}
    for query, regex in [(q, False) for q in QUERIES] + [(r, True) for r in REGEXES]:
        pattern = re.compile(query if regex else re.escape(query), re.I if query.islower() else 0)
        expect = [n for n, e in events.items() if any(pattern.search(t) for t in _texts(e))]
        hits = list(search(directory, query, regex=regex))
        assert [h.line for h in hits] == expect, (query, data[:300])
        for h in hits:
            assert not re.search(r"[\x00-\x1f\x7f-\x9f]", h.snippet + h.field + h.type)


@settings(fz.CI, max_examples=120)
@given(fz.mutated_logs() | fz.any_json_lines | st.binary(max_size=2000))
def test_search_over_the_fuzz_corpus_finds_what_each_line_says(data: bytes) -> None:
    check_search(data)


def test_search_over_every_base_log_of_the_fuzz_corpus() -> None:
    for data in fz.base_logs():
        check_search(data)
