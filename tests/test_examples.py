"""What a newcomer gets: the offline demo model, the weather example and the sample runs."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agentor import Tool, approve
from agentor.engine.approval.pending import pending_calls
from agentor.engine.events import GENERATION, RUN_END, TEXT_DELTA, TOOL_CALL, TOOL_RESULT
from agentor.engine.history import segments, status, summarize
from agentor.engine.models import OpenAIModel
from agentor.engine.statuses import INCOMPLETE
from agentor.engine.store.file import FileStore
from agentor.ops import run_cost
from examples.demo_model import DemoModel, find_cities
from examples.weather import build_agent, get_weather
from tests.conftest import FULL_RUN

ROOT = Path(__file__).resolve().parent.parent
LONDON = "The weather in London is sunny with a temperature of 22°C."
RESUMABLE = ["crashed_after_tool_result", "crashed_inside_tool", "failed", "max_turns"]


def offline_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return {**env, **extra}


def types_in_file(path: Path) -> list[str]:
    return [json.loads(line)["type"] for line in path.read_text().splitlines()]


def offline_agent(runs: Path, **options):
    return build_agent(FileStore(runs), model=DemoModel(word_delay=0), **options)


# -- the demo model ---------------------------------------------------------------------------


async def test_the_demo_model_drives_a_real_run_to_completion(tmp_path: Path) -> None:
    result = await offline_agent(tmp_path).arun("What is the weather in London?")

    assert result.status == "completed"
    assert result.final_output == LONDON  # the guide's worked example, word for word
    assert types_in_file(tmp_path / f"{result.run_id}.jsonl") == FULL_RUN
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0
    assert result.usage.total_tokens == result.usage.input_tokens + result.usage.output_tokens


async def test_several_cities_are_looked_up_in_one_generation(tmp_path: Path) -> None:
    result = await offline_agent(tmp_path).arun("What is the weather in London, Paris and Tokyo?")

    first = next(e for e in result.events if e.type == GENERATION)
    assert [c["function"]["arguments"] for c in first.calls] == [
        '{"city": "London"}',
        '{"city": "Paris"}',
        '{"city": "Tokyo"}',
    ]
    assert len({c["id"] for c in first.calls}) == 3
    assert summarize(result.run_id, result.events).turns == 2
    assert "Tokyo is sunny" in result.final_output


async def test_one_at_a_time_makes_one_call_per_turn_with_every_city_tool(tmp_path: Path) -> None:
    def get_time(city: str) -> str:
        """The local time in a city.

        Args:
            city: The city.
        """
        return f"It is noon in {city}."

    agent = offline_agent(tmp_path, tools=[get_weather, Tool(get_time)], max_turns=10)
    result = await agent.arun("Check Rome, Oslo and Lima one at a time.")

    calls = [(e.name, e.args["city"]) for e in result.events if e.type == TOOL_CALL]
    assert calls == [
        ("get_weather", "Rome"),
        ("get_time", "Rome"),
        ("get_weather", "Oslo"),
        ("get_time", "Oslo"),
        ("get_weather", "Lima"),
        ("get_time", "Lima"),
    ]
    assert summarize(result.run_id, result.events).turns == 7
    assert "It is noon in Lima." in result.final_output


async def test_a_tool_that_acts_is_called_only_when_asked_to_with_the_nights_asked_for(
    tmp_path: Path,
) -> None:
    agent = offline_agent(tmp_path)  # get_weather, and book_hotel (which waits for a person)
    looked_up = await agent.arun("What is the weather in London?")
    assert looked_up.status == "completed" and looked_up.final_output == LONDON

    booking = await agent.arun("Book a hotel in Rome for two nights and check the weather.")
    calls = [(e.name, e.args) for e in booking.events if e.type == TOOL_CALL]
    assert calls == [
        ("get_weather", {"city": "Rome"}),
        ("book_hotel", {"city": "Rome", "nights": 2}),
    ]
    assert booking.status == "awaiting_approval"
    assert [p.name for p in booking.pending] == ["book_hotel"]


async def test_without_a_city_it_asks_for_one(tmp_path: Path) -> None:
    result = await offline_agent(tmp_path).arun("hello there")
    assert result.final_output.startswith("Which city")
    assert not any(e.type == TOOL_CALL for e in result.events)


def test_city_names_are_found_among_sentence_words() -> None:
    assert find_cities("What's the weather in New York and São Paulo? Is London's rainy?") == [
        "New York",
        "São Paulo",
        "London",
    ]
    assert find_cities("Please check the weather today") == []


async def test_the_answer_streams_word_by_word(tmp_path: Path) -> None:
    agent = build_agent(FileStore(tmp_path), model=DemoModel(word_delay=0.001))
    events = [e async for e in agent.stream_chat("What is the weather in London?")]

    deltas = [e.text for e in events if e.type == TEXT_DELTA]
    assert len(deltas) == len(LONDON.split())
    assert "".join(deltas) == LONDON == events[-1].text


# -- examples/weather.py ----------------------------------------------------------------------


def load_weather(monkeypatch: pytest.MonkeyPatch, runs: Path, key: str | None) -> ModuleType:
    """A fresh examples/weather.py, loaded by path as `--agent examples/weather.py:agent` is."""
    monkeypatch.setenv("AGENTOR_RUNS", str(runs))
    if key is None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", key)
    spec = importlib.util.spec_from_file_location("weather_by_path", ROOT / "examples/weather.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_an_openai_key_the_weather_agent_is_offline(monkeypatch, tmp_path: Path) -> None:
    weather = load_weather(monkeypatch, tmp_path / "here", key=None)
    agent = weather.agent
    assert agent.name == "Weather Agent"
    assert isinstance(agent.model, DemoModel)
    assert [t.name for t in agent.tools] == ["get_weather", "book_hotel"]
    assert agent.tools[1].needs_approval is True  # every booking waits for a person
    assert agent.store is None  # agentor-tui gives it the directory it shows
    assert weather.script_agent().store.directory == tmp_path / "here"


def test_loading_the_weather_agent_from_elsewhere_creates_nothing(tmp_path: Path) -> None:
    """`agentor-tui DIR --agent path/to/examples/weather.py:agent`, run from another directory,
    imports the file there (a fresh interpreter: nothing cached)."""
    code = (
        "import sys\n"
        "from agentor.agents import load_agent\n"
        "agent = load_agent(sys.argv[1])\n"
        "assert agent.name == 'Weather Agent', agent.name\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", code, f"{ROOT / 'examples' / 'weather.py'}:agent"],
        cwd=elsewhere,
        env=offline_env(PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert list(elsewhere.iterdir()) == []


def test_with_an_openai_key_the_weather_agent_uses_gpt_4o_mini(monkeypatch, tmp_path) -> None:
    agent = load_weather(monkeypatch, tmp_path, key="sk-test").agent
    assert isinstance(agent.model, OpenAIModel)
    assert agent.model.name == "gpt-4o-mini"


def test_the_weather_script_runs_and_resumes_from_the_command_line(tmp_path: Path) -> None:
    def script(*args: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "examples/weather.py", *args],
            cwd=ROOT,
            env=offline_env(AGENTOR_RUNS=str(tmp_path)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    out = script("What is the weather in London?")
    run_id = out[0].removeprefix("RUN_ID ")
    assert (tmp_path / f"{run_id}.jsonl").exists()
    assert out[1:] == [
        "event: run_start",
        "event: generation",
        "event: tool_call get_weather",
        "event: tool_result get_weather",
        "event: generation",
        "event: message",
        "event: run_end",
        "status: completed",
        f"final_output: {LONDON}",
    ]
    # Resuming a finished run only reads it back: no new events, nothing appended.
    size = (tmp_path / f"{run_id}.jsonl").stat().st_size
    assert script("--resume", run_id) == ["status: completed", f"final_output: {LONDON}"]
    assert (tmp_path / f"{run_id}.jsonl").stat().st_size == size


# -- the sample runs --------------------------------------------------------------------------


def shown_status(store: FileStore, run_id: str) -> str:
    """The status a reader shows: the engine's, with incomplete told apart by the lock."""
    s = status(store.load(run_id))
    if s == INCOMPLETE:
        return "running" if store.is_locked(run_id) else "interrupted"
    return s


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("samples") / "runs"
    subprocess.run(
        [sys.executable, "scripts/make_samples.py", "--out", str(out)],
        cwd=ROOT,
        env=offline_env(),
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out


def manifest(runs: Path) -> dict[str, str]:
    data = json.loads((runs / "manifest.json").read_text())
    return {name: entry["run_id"] for name, entry in data.items()}


def check_samples(runs: Path) -> None:
    store = FileStore(runs)
    entries = json.loads((runs / "manifest.json").read_text())
    assert set(store.list_runs()) == {e["run_id"] for e in entries.values()}
    for name, entry in entries.items():
        assert shown_status(store, entry["run_id"]) == entry["expect"], name
    ids = manifest(runs)
    expect = {name: entry["expect"] for name, entry in entries.items()}
    assert expect == {
        "completed": "completed",
        "parallel_tools": "completed",
        "long_run": "completed",
        "max_turns": "max_turns",
        "failed": "failed",
        "resumed": "completed",
        "crashed_inside_tool": "interrupted",
        "crashed_after_tool_result": "interrupted",
        "awaiting_approval": "awaiting_approval",
    }

    for name, entry in entries.items():  # a model the price table knows: money in every row
        cost = run_cost(store.load(entry["run_id"]))
        assert cost.unpriced == 0 and cost.total is not None and cost.total > 0, name

    waiting = types_in_file(runs / f"{ids['awaiting_approval']}.jsonl")
    assert waiting == [
        *("run_start", "generation", "tool_call", "tool_result"),
        *("generation", "tool_call", "approval_request", "run_end"),
    ]
    (call,) = pending_calls(store.load(ids["awaiting_approval"]))
    assert (call.name, call.args) == ("book_hotel", {"city": "Rome", "nights": 2})

    after_result = types_in_file(runs / f"{ids['crashed_after_tool_result']}.jsonl")
    assert after_result == ["run_start", "generation", "tool_call", "tool_result"]
    inside_tool = types_in_file(runs / f"{ids['crashed_inside_tool']}.jsonl")
    assert inside_tool == ["run_start", "generation", "tool_call"]

    resumed = store.load(ids["resumed"])
    first, second = segments(resumed)
    assert sum(e.type == TOOL_RESULT for e in first) == 1
    assert [e.replayed_from is not None for e in second if e.type == TOOL_RESULT] == [True, False]

    long_run = summarize(ids["long_run"], store.load(ids["long_run"]))
    assert long_run.turns >= 30 and long_run.segments == 1
    assert len({e.name for e in store.load(ids["long_run"]) if e.type == TOOL_CALL}) == 3

    parallel = store.load(ids["parallel_tools"])
    assert [len(e.calls or []) for e in parallel if e.type == GENERATION] == [3, 0]

    failed_end = store.load(ids["failed"])[-1]
    assert failed_end.type == RUN_END and "Connection error" in failed_end.error

    assert sum(p.stat().st_size for p in runs.glob("*.jsonl")) < 100_000  # tens of KB


@pytest.mark.slow
def test_make_samples_writes_every_promised_run(samples: Path) -> None:
    check_samples(samples)
    readme = (samples / "README.md").read_text()
    assert all(run_id in readme for run_id in manifest(samples).values())


@pytest.mark.slow
def test_make_samples_gives_the_same_runs_the_same_ids(samples: Path) -> None:
    from scripts.make_samples import sample_run_id

    assert manifest(samples) == {name: sample_run_id(name) for name in manifest(samples)}


def test_the_committed_samples_are_what_the_manifest_says() -> None:
    check_samples(ROOT / "runs")


def copy_sample(runs: Path, name: str, to: Path) -> str:
    run_id = manifest(runs)[name]
    to.mkdir(exist_ok=True)
    shutil.copyfile(runs / f"{run_id}.jsonl", to / f"{run_id}.jsonl")
    return run_id


@pytest.mark.slow
async def test_the_crashed_sample_resumes_offline_without_rerunning_the_tool(
    samples: Path, tmp_path: Path
) -> None:
    run_id = copy_sample(samples, "crashed_after_tool_result", tmp_path)
    ran: list[str] = []

    def counted(city: str) -> str:
        ran.append(city)
        return get_weather(city)

    agent = offline_agent(tmp_path, tools=[Tool(counted, name="get_weather")])
    result = await agent.aresume(run_id)

    assert result.status == "completed"
    assert result.final_output == LONDON
    assert ran == []
    new_segment = segments(FileStore(tmp_path).load(run_id))[-1]
    assert [e.type for e in new_segment] == ["run_start", "generation", "message", "run_end"]


@pytest.mark.slow
@pytest.mark.parametrize("name", RESUMABLE)
async def test_every_resumable_sample_completes_with_the_offline_weather_agent(
    samples: Path, tmp_path: Path, name: str
) -> None:
    run_id = copy_sample(samples, name, tmp_path)
    result = await offline_agent(tmp_path).aresume(run_id)
    assert result.status == "completed", result.error
    assert status(FileStore(tmp_path).load(run_id)) == "completed"


@pytest.mark.slow
async def test_the_sample_awaiting_approval_goes_on_once_approved_and_never_before(
    samples: Path, tmp_path: Path
) -> None:
    run_id = copy_sample(samples, "awaiting_approval", tmp_path)
    ran: list[tuple[str, int]] = []

    def book_hotel(city: str, nights: int) -> str:
        ran.append((city, nights))
        return f"Booked a room in {city} for {nights} nights."

    gated = Tool(book_hotel, needs_approval=True)
    agent = offline_agent(tmp_path, tools=[get_weather, gated])
    still = await agent.aresume(run_id)  # undecided: it waits, nothing runs
    assert still.status == "awaiting_approval" and ran == []
    approve(FileStore(tmp_path), run_id, args={"city": "Rome", "nights": 3}, by="alice")
    result = await agent.aresume(run_id)
    assert result.status == "completed", result.error
    assert ran == [("Rome", 3)]
    assert "Booked a room in Rome for 3 nights." in result.final_output


@pytest.mark.slow
def test_the_screenshot_script_draws_every_picture_of_the_readme(tmp_path: Path) -> None:
    # `make screenshots` is not run by CI: this keeps it from rotting (it did once).
    out = tmp_path / "shots"
    done = subprocess.run(
        [sys.executable, "scripts/screenshots.py", "runs", "--out", str(out)],
        cwd=ROOT,
        env=offline_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    shots = {p.name: p.read_text() for p in out.glob("*.svg")}
    assert sorted(shots) == [
        "approval.svg", "compare.svg", "detail.svg", "experiment.svg", "help.svg", "resume.svg",
        "runs.svg",
    ]  # fmt: skip
    readme = (ROOT / "README.md").read_text()
    assert "screenshots/detail.svg" in readme and "screenshots/approval.svg" in readme
    assert "screenshots/experiment.svg" in readme and "Pairs" in shots["experiment.svg"]
    assert "screenshots/compare.svg" in readme and "first&#160;divergence" in shots["compare.svg"]
    assert "book_hotel" in shots["approval.svg"] and "a&#160;approve" in shots["approval.svg"]
    assert "resuming" in shots["resume.svg"] and "~/runs" in shots["runs.svg"]
