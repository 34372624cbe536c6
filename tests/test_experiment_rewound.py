"""An experiment's baseline that was killed (SIGKILL) inside a tool and resumed in a new process:
its log holds the cut-off attempt's calls and the calls asked again, and the pair counts the
calls as the engine sees the run. A candidate that makes the same calls reads the same tools;
one that really calls differently still reads different."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

from agentor.engine.events import GENERATION, TOOL_CALL
from agentor.engine.statuses import COMPLETED
from agentor.engine.store.file import FileStore
from agentor.experiments.measures import DIFFERENT, SAME, calls_of, trajectory
from tests import crashkit
from tests.openai_server import FakeOpenAI


def script(request: dict[str, Any]) -> dict[str, Any]:
    """The parallel scenario (London and Paris at once), except `london-only`, which asks for
    London alone."""
    asked_tools = request["messages"][-1].get("role") == "tool"
    if request.get("model") == "london-only" and not asked_tools:
        return {"calls": [["get_weather", {"city": "London"}]]}
    return crashkit.script(request)


def killed_in_a_tool_then_resumed(tmp_path: Path, url: str) -> str:
    """A baseline killed while its Paris call ran (London's result saved), then resumed to its
    end in a new process: its id."""
    cfg = {
        "dir": str(tmp_path / "runs"),
        "url": url,
        "scenario": "parallel",
        "action": "start",
        "tool_log": str(tmp_path / "tools.log"),
        "hang_on": "Paris",
        "tool_started": str(tmp_path / "started.log"),
    }
    store = FileStore(cfg["dir"])
    child = crashkit.spawn(cfg)
    try:
        crashkit.wait_for(lambda: Path(cfg["tool_started"]).exists(), what="Paris's tool")
        run_id = crashkit.only_run(cfg["dir"])
        crashkit.wait_for(
            lambda: "get_weather London" in crashkit.recorded_results(store.load(run_id)),
            what="London's result",
        )
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
    out = tmp_path / "resumed.json"
    resumed = {**cfg, "action": "resume", "run_id": run_id, "out": str(out)}
    del resumed["hang_on"]
    assert crashkit.spawn(resumed).wait(60) == 0
    assert json.loads(out.read_text())["status"] == COMPLETED
    return run_id


def test_a_baseline_resumed_after_a_crash_in_its_tool_turn_keeps_the_same_tools(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    fake_openai.script = script
    baseline = killed_in_a_tool_then_resumed(tmp_path, fake_openai.url)
    store = FileStore(tmp_path / "runs")
    events = store.load(baseline)
    # The log holds turn 1 twice: the attempt the kill cut off, and the one asked again.
    assert [e.turn for e in events if e.type == GENERATION] == [1, 1, 2]
    cities = [e.args["city"] for e in events if e.type == TOOL_CALL and e.args]
    assert cities == ["London", "Paris", "London", "Paris"]
    london_paris = [
        ("get_weather", '{"city": "London"}'),
        ("get_weather", '{"city": "Paris"}'),
    ]
    assert calls_of(events) == london_paris

    agent = crashkit.build_agent("parallel", store, fake_openai.url, str(tmp_path / "tools.log"))
    same = agent.experiment([baseline], model="same-model", scorers=["same_tools"])
    (pair,) = same.pairs
    assert pair.status == (COMPLETED, COMPLETED)
    assert pair.measures is not None and pair.measures.tools == SAME
    assert pair.tools_changed is False
    assert pair.scores == {"same_tools": True}
    assert trajectory(events, store.load(pair.candidate)) == SAME

    other = agent.experiment([baseline], model="london-only", scorers=["same_tools"])
    (pair,) = other.pairs
    assert pair.measures is not None and pair.measures.tools == DIFFERENT
    assert pair.tools_changed is True
    assert pair.scores == {"same_tools": False}
