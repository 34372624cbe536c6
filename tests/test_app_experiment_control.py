"""Stopping and resuming experiments in the TUI: `x` stops the one running here (its candidates
in flight cancelled, each left an interrupted run, no pair recorded for it), `r` resumes one
with pairs pending (its pairs come in live, each pair done once); the list says each one's
state; `r` is refused in one line when no agent can serve the experiment. An experiment
started with the app's `--agent SPEC` records the spec: `agentor experiment resume` goes on
with it from a shell without `--agent`. Runs and candidates on the tests' fake OpenAI server,
whose `wait` replies hold a candidate's request until the test lets it go."""

from __future__ import annotations

import json
import textwrap
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentor import Experiment
from agentor.agents import AgentSet
from agentor.engine.store.file import FileStore
from agentor.experiments.record import Definition, experiment_id
from agentor.sources.directory.source import DirectorySource
from tests.app_support import SIZE, app_for, screen_text, wait_until
from tests.conftest import WeatherAgents
from tests.experimentkit import CITIES, prompt_of, prompts, requests_of, script
from tests.openai_server import FakeOpenAI, Reply
from tests.test_agentor_command import agentor
from tests.test_app_experiments import fill_form, read, select
from tui.app import RunsApp
from tui.widgets.experiments_screen import ExperimentsScreen
from tui.widgets.pairs_screen import PairsScreen


class Held:
    """The server's script: `slow-model` answers as `same-model`, but a request for a city in
    `held` waits until `let_go()` (each held request counted in `waiting`)."""

    def __init__(self, *cities: str) -> None:
        self.held = set(cities)
        self.gate = threading.Event()

    def __call__(self, request: dict[str, Any]) -> Reply:
        if request.get("model") != "slow-model":
            return script(request)
        reply = script(dict(request, model="same-model"))
        if _city(request) in self.held:
            return {**reply, "wait": self.gate}
        return reply

    def let_go(self) -> None:
        """No request is held from now on; those held are answered (to no one, once their
        candidates were stopped)."""
        self.held.clear()
        self.gate.set()


def _city(request: dict[str, Any]) -> str | None:
    return next((c for c in CITIES if c in prompt_of(request)), None)


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Any:
    with FakeOpenAI(script) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server
        getattr(server.script, "let_go", lambda: None)()  # no request left waiting


async def record(srv: FakeOpenAI, directory: Path, cities: tuple[str, ...]) -> dict[str, str]:
    agent = WeatherAgents(srv)(store=FileStore(directory))
    return {c: (await agent.arun(p)).run_id for c, p in zip(cities, prompts(cities), strict=True)}


def asked(srv: FakeOpenAI) -> Counter[str | None]:
    """The candidates' model requests, by the city they were asked for."""
    return Counter(_city(r) for r in requests_of(srv, "slow-model"))


def pair_records(directory: Path, exp_id: str) -> Counter[str]:
    """How many times each baseline's pair was recorded."""
    lines = (directory / ".experiments" / f"{exp_id}.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return Counter(r["baseline"] for r in records if r.get("kind") == "pair")


def footer(app: RunsApp) -> str:
    return screen_text(app).splitlines()[-1]


async def test_x_stops_the_experiment_running_here_and_r_resumes_it_each_pair_done_once(
    srv: FakeOpenAI, tmp_path: Path
) -> None:
    directory = tmp_path / "runs"
    cities = ("Oslo", "Rome", "Lisbon", "Tokyo")
    runs = await record(srv, directory, cities)
    held = Held("Rome", "Lisbon")
    srv.script = held
    app = app_for(directory)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, [runs[c] for c in cities])
        await fill_form(pilot, model="slow-model", concurrency="2")
        await pilot.press("ctrl+s")
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, PairsScreen) and app.screen, what="pairs"
        )
        # Oslo's candidate ends; Rome's and Lisbon's wait for their first answer; Tokyo's
        # has not begun (two at a time).
        await wait_until(pilot, lambda: asked(srv) == {"Oslo": 2, "Rome": 1, "Lisbon": 1})
        await wait_until(pilot, lambda: "1 of 4 measured · running" in screen_text(app))
        assert "x Stop" in footer(app) and "r Resume" not in footer(app)
        exp_id = screen.experiment_id
        definition = Experiment.load(FileStore(directory), exp_id).definition
        candidates = {c: definition.candidate(runs[c]) for c in cities}

        await pilot.press("x")
        await wait_until(pilot, lambda: not app.experimenter.running, what="the stop")
        await read(pilot)
        assert "1 of 4 measured · stopped · r: resume" in screen_text(app)
        assert "r Resume" in footer(app) and "x Stop" not in footer(app)
        assert any("stopped: the pairs measured are kept" in n.message for n in app._notifications)
        # The store: Oslo's pair only; Rome's and Lisbon's candidates interrupted (resumable),
        # Tokyo's never made.
        assert pair_records(directory, exp_id) == {runs["Oslo"]: 1}
        source = DirectorySource(directory)
        source.refresh()
        statuses = {c: getattr(source.get(candidates[c]), "status", None) for c in cities}
        assert statuses == {
            "Oslo": "completed",
            "Rome": "interrupted",
            "Lisbon": "interrupted",
            "Tokyo": None,
        }
        await pilot.press("escape")
        await pilot.press("E")
        await read(pilot)
        line = next(x for x in screen_text(app).splitlines() if exp_id in x)
        assert "1/4" in line and "stopped" in line

        held.let_go()
        await pilot.press("r")  # in the list, on the highlighted one
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, PairsScreen) and app.screen, what="pairs"
        )
        await wait_until(pilot, lambda: "Pairs · 4 pairs" in screen_text(app), what="all")
        await wait_until(pilot, lambda: not app.experimenter.running, what="the end")
        await read(pilot)
        assert "pairs 4 of 4; completed 4" in screen_text(app)
        assert "r Resume" not in footer(app) and "x Stop" not in footer(app)
        assert app.screen_stack[-2] is not None and isinstance(
            app.screen_stack[-2], ExperimentsScreen
        )

    # Each pair recorded once; each candidate asked each turn once, but for the first turn of
    # the two stopped mid-way (asked again: its answer never came).
    assert pair_records(directory, exp_id) == {runs[c]: 1 for c in cities}
    assert asked(srv) == {"Oslo": 2, "Rome": 3, "Lisbon": 3, "Tokyo": 2}
    e = Experiment.load(FileStore(directory), exp_id)
    assert [p.status for p in e.pairs] == [("completed", "completed")] * 4
    assert not e.pending


async def test_r_is_refused_in_one_line_when_no_agent_can_serve_the_experiment(
    srv: FakeOpenAI, tmp_path: Path
) -> None:
    directory = tmp_path / "runs"
    runs = await record(srv, directory, ("Oslo",))
    store = FileStore(directory)
    # Recorded by a process whose agent this app does not have, its spec not recorded.
    identity = Definition.identity(
        name=None,
        baselines=[runs["Oslo"]],
        model=None,
        agent="Careful Agent",
        instructions=None,
        model_settings={},
        match="strict",
        novel="error",
    )
    definition = Definition(
        id=experiment_id(identity), name="careful", baselines=(runs["Oslo"],), agent="Careful Agent"
    )
    store.append_experiment(definition.id, definition.to_record())
    before = sorted(p.name for p in directory.glob("*.jsonl"))
    app = app_for(directory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("E")
        await read(pilot)
        line = next(x for x in screen_text(app).splitlines() if definition.id in x)
        assert "0/1" in line and "1 pending" in line
        assert "r Resume" in footer(app)
        await pilot.press("r")
        await pilot.pause()
        told = [n.message for n in app._notifications]
        assert any(
            "Experiment not resumed" in m and "'Careful Agent'" in m and "--agent SPEC" in m
            for m in told
        ), told
        assert not app.experimenter.running
    assert sorted(p.name for p in directory.glob("*.jsonl")) == before, "nothing written"


AGENT_FILE = textwrap.dedent(
    '''
    from agentor import Agentor, function_tool

    @function_tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city.

        Args:
            city: The city to look up.
        """
        return f"The weather in {city} is sunny and 22C."

    weather = Agentor(
        "Weather Agent", model="gpt-4o-mini", instructions="You are a helpful weather assistant.",
        tools=[get_weather], max_retries=0,
    )
    '''
)


async def test_the_apps_agent_spec_is_recorded_and_a_shell_resumes_without_agent(
    srv: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "runs"
    cities = ("Oslo", "Rome")
    runs = await record(srv, directory, cities)
    (tmp_path / "agents.py").write_text(AGENT_FILE)
    monkeypatch.chdir(tmp_path)
    agents = AgentSet.load(["agents.py:weather"])  # relative, as typed in this directory
    held = Held("Rome")
    srv.script = held
    app = RunsApp(directory, agents=agents, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, [runs[c] for c in cities])
        form = await fill_form(pilot, model="slow-model", concurrency="1")
        assert form.values().agent == "Weather Agent"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: asked(srv) == {"Oslo": 2, "Rome": 1}, what="Rome held")
        screen = app.screen
        assert isinstance(screen, PairsScreen)
        await pilot.press("x")
        await wait_until(pilot, lambda: not app.experimenter.running, what="the stop")
    held.let_go()
    d = Experiment.load(FileStore(directory), screen.experiment_id).definition
    assert d.agent == "Weather Agent"
    assert d.agent_spec == f"{tmp_path / 'agents.py'}:weather", "made absolute"

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test"}
    done = agentor(
        "experiment", "resume", d.id, "--store", str(directory), "--json", env=env, cwd=elsewhere
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [p["status"] for p in out["pairs"]] == [["completed", "completed"]] * 2
    assert out["pending"] == []
    assert asked(srv) == {"Oslo": 2, "Rome": 3}
