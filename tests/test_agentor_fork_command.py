"""`agentor fork`, `agentor replay` and `agentor diff`, run as the installed console script:
the fork's events as lines, refusals in one line with the project's exit statuses, the
comparison as text and as JSON, text from logs printed literally."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from agentor.engine.store.file import FileStore
from tests.conftest import ROOT, WeatherAgents
from tests.openai_server import FakeOpenAI, weather_script
from tests.test_agentor_command import ENV, SCRIPT, agentor, refused

AGENTS = textwrap.dedent(
    """
    import os
    from agentor import Agentor, function_tool

    @function_tool
    def get_weather(city: str) -> str:
        \"\"\"Get the current weather for a city.

        Args:
            city: The city to look up.
        \"\"\"
        with open(os.environ["TOOL_LOG"], "a") as f:
            f.write(city + "\\n")
        return f"The weather in {city} is sunny and 22C."

    INSTRUCTIONS = "You are a helpful weather assistant."

    def make(name):
        return Agentor(
            name, model="gpt-4o-mini", instructions=INSTRUCTIONS, tools=[get_weather],
            max_retries=0,
        )

    weather = make("Weather Agent")
    other = make("Other Agent")
    """
)


class Shell:
    """The parent run (made in process) and `agentor` in a child process on the fake server."""

    def __init__(self, srv: FakeOpenAI, tmp_path: Path) -> None:
        self.srv = srv
        self.runs = tmp_path / "runs"
        self.tool_log = tmp_path / "tools.log"
        self.spec = tmp_path / "agents.py"
        self.spec.write_text(AGENTS)
        agent = WeatherAgents(srv)(store=FileStore(self.runs))
        self.parent = agent.run("What is the weather in Lisbon?").run_id
        self.env = {
            "OPENAI_BASE_URL": srv.url,
            "OPENAI_API_KEY": "sk-test",
            "TOOL_LOG": str(self.tool_log),
        }

    def __call__(self, *args: str, agent: str | None = "weather") -> CompletedProcess[str]:
        spec = ("--agent", f"{self.spec}:{agent}") if agent else ()
        return agentor(*args, "--store", str(self.runs), *spec, env=self.env)

    def files(self) -> dict[str, bytes]:
        return {p.name: p.read_bytes() for p in sorted(self.runs.iterdir())}

    def ran(self) -> list[str]:
        return self.tool_log.read_text().splitlines() if self.tool_log.exists() else []


@pytest.fixture
def shell(fake_openai: FakeOpenAI, tmp_path: Path) -> Shell:
    return Shell(fake_openai, tmp_path)


# The parent: 1 run_start, 2 generation, 3 tool_call, 4 tool_result, 5 generation, 6 message,
# 7 run_end.


def test_a_fork_from_the_shell_prints_its_events_and_answer_and_leaves_the_parent(
    shell: Shell,
) -> None:
    before = shell.files()
    proc = shell(
        "fork", shell.parent[:8], "--at", "4", "--result", "Snow in Lisbon.", "--fork-id", "f1"
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"fork f1 of run {shell.parent} at line 4"
    assert [line.split()[1] for line in lines[1:6]] == [
        "run_start", "tool_result", "generation", "message", "run_end",
    ]  # fmt: skip
    assert lines[2].split(None, 2)[2] == "get_weather → Snow in Lisbon."
    assert lines[6:] == ["run f1 is completed:", "Snow in Lisbon."]
    assert shell.srv.requests[-1]["messages"][-1]["content"] == "Snow in Lisbon."
    assert shell.ran() == []
    after = shell.files()
    assert {k: v for k, v in after.items() if k != "f1.jsonl"} == before


def test_fork_with_input_and_model_continues_the_run_and_a_copy_says_so(shell: Shell) -> None:
    proc = shell("fork", shell.parent, "--input", "And in Porto?", "--model", "gpt-4o")
    assert proc.returncode == 0, proc.stderr
    assert (
        proc.stdout.splitlines()[-1]
        == "The weather in Lisbon is sunny and 22C. The weather in Porto is sunny and 22C."
    )
    assert shell.srv.requests[-1]["model"] == "gpt-4o"
    assert shell.ran() == ["Porto"]

    copy = shell("fork", shell.parent, "--fork-id", "copy")
    assert copy.returncode == 0, copy.stderr
    assert copy.stdout.splitlines()[:3] == [
        f"fork copy of run {shell.parent}",
        f"run {shell.parent} needs nothing more: fork copy is a copy of it",
        "run copy is already completed:",
    ]


def test_what_cannot_be_forked_is_refused_in_one_line_and_nothing_is_written(
    shell: Shell,
) -> None:
    shell("fork", shell.parent, "--at", "4", "--result", "x", "--fork-id", "taken")
    before = shell.files()
    p = shell.parent
    cases = [
        (("fork", p, "--at", "3"), 1, f"agentor fork: line 3 of run {p} is a tool_call; a fork "
         "starts at a run_start, a generation or a tool_result line"),
        (("fork", p, "--at", "9"), 1, f"agentor fork: run {p} has 7 lines: there is no line 9"),
        (("fork", p, "--at", "4"), 1, f"agentor fork: line 4 of run {p} is a tool_result: give "
         "result=, the value to use instead"),
        (("fork", p, "--result", "x"), 2, "agentor fork: error: --result replaces a tool "
         "result: give --at, the line of a tool_result"),
        (("fork", p, "--at", "0"), 2, "agentor fork: error: argument --at: must be at least 1: 0"),
        (("fork", p, "--at", "4", "--result", "x", "--input", "y"), 2, "agentor fork: error: "
         "argument --input: not allowed with argument --result"),
        (("fork", p, "--at", "4", "--result", "x", "--fork-id", "taken"), 1, "agentor fork: run "
         "taken already exists: choose an unused fork_id"),
        (("fork", p, "--fork-id", "a b"), 2, "agentor fork: error: --fork-id 'a b' is not a run "
         "id"),
        (("fork", "nosuch", "--at", "1"), 1, "agentor fork: no run nosuch in"),
        (("replay", p, "--model", "m", "--novel", "maybe"), 2, "agentor replay: error: argument "
         "--novel: invalid choice"),
    ]  # fmt: skip
    for args, status, start in cases:
        assert refused(shell(*args), status).startswith(start), args
    mismatch = refused(shell("fork", p, "--at", "1", agent="other"))
    assert mismatch == (
        "agentor fork: this run was written by Weather Agent; --agent gives Other Agent (add "
        "--any-agent to fork it with that agent anyway)"
    )
    assert shell.files() == before and shell.ran() == []


def test_a_replay_from_the_shell_serves_the_recording_and_refuses_novel_calls(
    shell: Shell,
) -> None:
    def other_cities(request: dict[str, Any]) -> dict[str, Any]:
        messages = request["messages"]
        if messages[-1]["role"] == "tool":
            return weather_script(request)
        return {"calls": [["get_weather", {"city": "Lisbon"}], ["get_weather", {"city": "Oslo"}]]}

    shell.srv.script = other_cities
    proc = shell("replay", shell.parent, "--model", "gpt-4o", "--fork-id", "r1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"replay r1 of run {shell.parent} with gpt-4o"
    results = [line.split(None, 2)[2] for line in lines if " tool_result " in line]
    assert results == [
        "get_weather · served → The weather in Lisbon is sunny and 22C.",
        f"get_weather · refused ✗ not in the recording: run {shell.parent} made no get_weather "
        "call with these arguments",
    ]
    assert shell.ran() == []
    ran = shell("replay", shell.parent, "--model", "gpt-4o", "--novel", "run")
    assert ran.returncode == 0, ran.stderr
    assert shell.ran() == ["Oslo"]
    results = [
        line.split(None, 2)[2] for line in ran.stdout.splitlines() if " tool_result " in line
    ]
    assert sorted(results) == [
        "get_weather · executed → The weather in Oslo is sunny and 22C.",
        "get_weather · served → The weather in Lisbon is sunny and 22C.",
    ]


def test_a_replay_from_the_shell_with_its_options_stops_where_the_recording_ends(
    shell: Shell, tmp_path: Path
) -> None:
    """No --agent, no --model: the run's recorded tools and model; its system message from a
    file, settings set with --set, fifo matching, and a stop at the first call with no
    recorded answer (exit status 1, the call named)."""
    instructions = tmp_path / "prompt.txt"
    instructions.write_text("Answer like a pirate.\n")
    calls = [["get_weather", {"city": "Porto"}], ["get_weather", {"city": "Faro"}]]
    shell.srv.script = lambda request: {"calls": calls}
    asked = len(shell.srv.requests)
    proc = shell(
        "replay", shell.parent, "--match", "fifo", "--novel", "stop", "--fork-id", "r1",
        "--instructions", str(instructions), "--set", "temperature=0", "--set", "max_tokens=50",
        "--set", 'stop=["END"]', agent=None,
    )  # fmt: skip
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == f"replay r1 of run {shell.parent} with gpt-4o-mini"
    assert [line.split()[1] for line in lines[1:]] == [
        "run_start", "generation", "tool_call", "tool_call", "run_end",
    ]  # fmt: skip
    said = (
        f'get_weather {{"city": "Faro"}} has no recorded answer (run {shell.parent} made 1 '
        "get_weather call, all served already)"
    )
    assert lines[-1].split(None, 2)[2] == f"diverged · {said}"
    assert proc.stderr == f"agentor replay: run r1 ended diverged: {said}\n"
    (body,) = shell.srv.requests[asked:]
    assert body["model"] == "gpt-4o-mini"
    assert body["messages"][0] == {"role": "system", "content": "Answer like a pirate.\n"}
    assert (body["temperature"], body["max_tokens"], body["stop"]) == (0, 50, ["END"])
    doc = json.loads(shell("show", "r1", "--json", agent=None).stdout)
    assert doc["run"]["status"] == "diverged"
    assert doc["fork"]["replay"] == {
        "model": "gpt-4o-mini", "match": "fifo", "novel": "stop", "experiment": None,
    }  # fmt: skip
    assert shell.ran() == []


def test_bad_replay_options_are_refused_in_one_line_and_nothing_is_written(
    shell: Shell, tmp_path: Path
) -> None:
    before = shell.files()
    asked = len(shell.srv.requests)
    p = shell.parent
    empty = tmp_path / "empty.txt"
    empty.write_text(" \n")
    cases = [
        (("--set", "temp=1"), "--set: 'temp' is not a model setting (they are temperature, "),
        (("--set", "temperature"), "--set 'temperature' is not KEY=VALUE"),
        (("--set", "max_tokens=lots"), "--set: the model setting max_tokens cannot be 'lots': "),
        (("--instructions", str(tmp_path / "nope.txt")), "cannot read --instructions "),
        (("--instructions", str(empty)), f"--instructions {empty} is empty"),
        (("--match", "loose"), "argument --match: invalid choice: 'loose'"),
        (("--novel", "maybe"), "argument --novel: invalid choice: 'maybe'"),
    ]
    for args, start in cases:
        line = refused(shell("replay", p, *args, agent=None), 2)
        assert line.startswith(f"agentor replay: error: {start}"), line
    assert shell.files() == before and len(shell.srv.requests) == asked


def test_diff_says_where_two_runs_part_as_text_and_as_json(shell: Shell) -> None:
    hostile = "Snow\x1b[2J\x1b]52;c;aGk=\x07 in Lisbon."
    forked = shell("fork", shell.parent, "--at", "4", "--result", hostile, "--fork-id", "f1")
    assert forked.returncode == 0, forked.stderr
    text = shell("diff", shell.parent, "f1", agent=None)
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert "\x1b" not in out and "\x07" not in out
    lines = out.splitlines()
    assert lines[0].startswith(f"a  {shell.parent}  completed · 2 turns · 1 tool call · ")
    assert lines[1].endswith(f" · fork of {shell.parent} at line 4")
    assert lines[2] == "first divergence: turn 1, call 1 get_weather: another result"
    assert lines[3:8] == [
        "3 differences:",
        "  turn 1, call 1 get_weather: another result",
        "    a: The weather in Lisbon is sunny and 22C.  (line 4)",
        "    b: Snow␛[2J␛]52;c;aGk=␇ in Lisbon.  (line 6)",
        "  turn 2: the model said something else",
    ]
    assert lines[-2].startswith("tokens: a ") and " (from turn 1 on: a " in lines[-2]
    assert lines[-1].startswith("took: a ")

    same = shell("diff", shell.parent, shell.parent, agent=None)
    assert "no difference: the runs did the same (2 turns)" in same.stdout

    data = json.loads(shell("diff", shell.parent, "f1", "--json", agent=None).stdout)
    assert list(data) == ["a", "b", "same", "first_divergence", "differences"]
    assert list(data["b"]) == [
        "run_id", "status", "final_output", "error", "turns", "tool_calls", "usage",
        "usage_since_divergence", "duration", "forked_from", "fork_at", "replay",
    ]  # fmt: skip
    assert (data["b"]["forked_from"], data["b"]["fork_at"], data["same"]) == (
        shell.parent,
        4,
        False,
    )
    first = data["first_divergence"]
    assert first == {
        "kind": "result",
        "turn": 1,
        "call": 0,
        "name": "get_weather",
        "a": "The weather in Lisbon is sunny and 22C.",
        "b": hostile,
        "a_line": 4,
        "b_line": 6,
        "description": "turn 1, call 1 get_weather: another result",
    }
    assert [d["kind"] for d in data["differences"]] == ["result", "text", "final_output"]
    assert refused(shell("diff", shell.parent, "nosuch", agent=None)).startswith(
        "agentor diff: no run nosuch in"
    )


def test_a_result_or_an_input_of_dash_is_read_from_stdin(shell: Shell) -> None:
    def fork(*args: str, stdin: str) -> CompletedProcess[str]:
        argv = [str(SCRIPT), "fork", shell.parent, "--store", str(shell.runs), *args]
        argv += ["--agent", f"{shell.spec}:weather"]
        return subprocess.run(
            argv,
            cwd=ROOT,
            env={**ENV, **shell.env},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )

    edited = fork("--at", "4", "--result", "-", stdin="Fog\nover Lisbon.\n")
    assert edited.returncode == 0, edited.stderr
    assert shell.srv.requests[-1]["messages"][-1]["content"] == "Fog\nover Lisbon.\n"
    added = fork("--input", "-", stdin="And in Faro?")
    assert added.returncode == 0, added.stderr
    assert shell.srv.requests[-2]["messages"][-1] == {"role": "user", "content": "And in Faro?"}
    empty = fork("--input", "-", stdin="  \n")
    assert refused(empty, 2) == "agentor fork: error: --input - read nothing from stdin"
