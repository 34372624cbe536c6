"""`agentor experiment run|ls|show|resume|export`, run as the installed console script against
the tests' server: the JSON users' scripts read, `--fail-on regression` as a CI gate, the
selection options, `--agent` with `--novel run`, and every refusal in one line, nothing
written."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from agentor.engine.store.file import FileStore
from agentor.experiments.experiment import Experiment
from tests.conftest import WeatherAgents
from tests.experimentkit import prompts, requests_of, script
from tests.openai_server import FakeOpenAI
from tests.test_agentor_command import agentor, refused

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

    careful = Agentor(
        "Careful Agent", model="paris-model", instructions="Be careful.",
        tools=[get_weather], max_retries=0,
    )
    """
)

PAIR_FIELDS = [
    "baseline",
    "candidate",
    "status",
    "output_changed",
    "tools_changed",
    "scores",
    "regressed",
    "improved",
    "error",
    "measures",
]


class Shell:
    def __init__(self, srv: FakeOpenAI, tmp_path: Path) -> None:
        srv.script = script
        self.srv = srv
        self.runs = tmp_path / "runs"
        self.tool_log = tmp_path / "tools.log"
        self.spec = tmp_path / "agents.py"
        self.spec.write_text(AGENTS)
        agent = WeatherAgents(srv)(store=FileStore(self.runs))
        self.baselines = [agent.run(p).run_id for p in prompts()[:3]]
        self.env = {
            "OPENAI_BASE_URL": srv.url,
            "OPENAI_API_KEY": "sk-test",
            "TOOL_LOG": str(self.tool_log),
        }

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return agentor("experiment", *args, "--store", str(self.runs), env=self.env)

    def files(self) -> list[str]:
        return sorted(p.name for p in self.runs.iterdir())

    def ran(self) -> list[str]:
        return self.tool_log.read_text().splitlines() if self.tool_log.exists() else []


@pytest.fixture
def shell(fake_openai: FakeOpenAI, tmp_path: Path) -> Shell:
    return Shell(fake_openai, tmp_path)


def test_run_prints_the_documented_json_and_gates_ci_on_regressions(shell: Shell) -> None:
    ok = shell(
        "run",
        "--status",
        "completed",
        "--model",
        "same-model",
        "--json",
        "--scorer",
        "same_output",
        "--fail-on",
        "regression",
    )
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert list(data)[:1] == ["experiment_id"]
    assert {"experiment_id", "pairs", "summary"} <= set(data)
    assert sorted(p["baseline"] for p in data["pairs"]) == sorted(shell.baselines)
    for pair in data["pairs"]:
        assert list(pair) == PAIR_FIELDS
        assert pair["status"] == ["completed", "completed"]
        assert pair["scores"] == {"same_output": True}
        assert pair["measures"]["served"] == 1 and pair["measures"]["executed"] == 0
    summary = data["summary"]
    assert {"pairs", "completed", "diverged", "regressions", "improvements", "deltas"} <= set(
        summary
    )
    assert (summary["pairs"], summary["completed"], summary["regressions"]) == (3, 3, 0)
    # Without --agent each baseline is replayed by an agent of its record; the three share one
    # model: asked once whether it answers, not once a candidate.
    assert [p for p in shell.srv.gets if p.endswith("/models")] == ["/v1/models"]
    assert set(summary["deltas"]) == {"turns", "tokens", "cost", "latency"}
    assert summary["deltas"]["turns"] == {
        "mean": 0.0,
        "low": 0.0,
        "high": 0.0,
        "pairs": 3,
        "confidence": 0.95,
    }

    bad = shell(
        "run",
        *shell.baselines,
        "--model",
        "vague-model",
        "--json",
        "--scorer",
        "same_output",
        "--fail-on",
        "regression",
    )
    assert bad.returncode == 1, bad.stderr
    assert json.loads(bad.stdout)["summary"]["regressions"] == 3
    without_gate = shell(
        "run", *shell.baselines, "--model", "vague-model", "--scorer", "same_output"
    )
    assert without_gate.returncode == 0, "the same experiment, no gate: exit 0"
    assert "regressions 3, improvements 0" in without_gate.stdout
    assert shell.ran() == [], "no tool ran"

    listed = json.loads(shell("ls", "--json").stdout)
    assert sorted(e["experiment_id"] for e in listed) == sorted(
        {data["experiment_id"], json.loads(bad.stdout)["experiment_id"]}
    )
    shown = shell("show", data["experiment_id"], "--json")
    assert json.loads(shown.stdout) == data
    text = shell("show", data["experiment_id"]).stdout
    assert text.startswith(f"experiment {data['experiment_id']}")
    assert "completed -> completed" in text


def test_an_agent_with_novel_run_runs_only_the_calls_no_baseline_made(shell: Shell) -> None:
    out = shell(
        "run", *shell.baselines, "--agent", f"{shell.spec}:careful", "--novel", "run", "--json"
    )
    assert out.returncode == 0, out.stderr
    assert shell.ran() == ["Paris"] * 3, "only the novel call ran, once a candidate"
    data = json.loads(out.stdout)
    assert [p["measures"]["executed"] for p in data["pairs"]] == [1, 1, 1]
    assert [p["tools_changed"] for p in data["pairs"]] == [True] * 3
    asked = requests_of(shell.srv, "paris-model")
    assert asked[0]["messages"][0] == {"role": "system", "content": "Be careful."}, (
        "the agent's instructions replace the recorded system message"
    )
    assert "instructions changed" in data["change"], "other instructions are the change"


def test_export_renders_hostile_text_literally(shell: Shell, tmp_path: Path) -> None:
    name = "<script>alert(1)</script> \x1b[31mred"
    out = shell("run", *shell.baselines, "--model", "same-model", "--name", name, "--json")
    exp = json.loads(out.stdout)["experiment_id"]
    page = shell("export", exp, "--format", "html").stdout
    assert "<script>alert" not in page and "&lt;script&gt;" in page and "\x1b" not in page
    md = shell("export", exp, "--format", "md").stdout
    assert "\x1b" not in md and md.startswith(f"# Experiment {exp}")
    target = tmp_path / "exp.json"
    assert shell("export", exp, "--format", "json", "-o", str(target)).returncode == 0
    assert json.loads(target.read_text())["experiment_id"] == exp
    assert "\x1b" not in shell("show", exp).stdout


def test_bad_input_is_one_line_and_writes_nothing(shell: Shell) -> None:
    before = shell.files()
    assert "which runs?" in refused(shell("run", "--model", "same-model"), 2)
    assert "--novel run needs --agent" in refused(
        shell("run", *shell.baselines, "--model", "m", "--novel", "run"), 2
    )
    assert "give --model M" in refused(shell("run", *shell.baselines), 2)
    assert "no run 0000" in refused(shell("run", "0000", "--model", "same-model"))
    assert "does not import" in refused(
        shell("run", *shell.baselines, "--model", "same-model", "--scorer", "nope_mod:f")
    )
    assert "--set takes KEY=VALUE" in refused(
        shell("run", *shell.baselines, "--model", "same-model", "--set", "oops"), 2
    )
    assert "No such file" in refused(
        shell("run", *shell.baselines, "--model", "m", "--instructions", "/nonexistent"), 2
    )
    down = agentor(
        "experiment",
        "run",
        *shell.baselines,
        "--model",
        "same-model",
        "--store",
        str(shell.runs),
        env={**shell.env, "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"},
    )
    assert "cannot be used" in refused(down)
    assert "no experiment exp-0" in refused(shell("show", "exp-0"))
    assert "no experiment exp-0" in refused(shell("resume", "exp-0"))
    assert shell.files() == before, "nothing written"
    assert "no experiments" in shell("ls").stdout


def test_an_agent_given_by_a_relative_path_is_recorded_whole_and_resumes_from_elsewhere(
    shell: Shell, tmp_path: Path
) -> None:
    """`--agent agents.py:careful` given in the agent file's directory: the experiment records
    the file's absolute path, so `resume` without `--agent`, from another directory, loads it."""
    out = agentor(
        "experiment",
        "run",
        *shell.baselines[:1],
        "--agent",
        "agents.py:careful",
        "--json",
        "--store",
        str(shell.runs),
        env=shell.env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    exp = json.loads(out.stdout)["experiment_id"]
    definition = Experiment.load(FileStore(shell.runs), exp).definition
    assert definition.agent_spec == f"{tmp_path / 'agents.py'}:careful"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = agentor(
        "experiment", "resume", exp, "--store", str(shell.runs), env=shell.env, cwd=elsewhere
    )
    assert again.returncode == 0, again.stderr
