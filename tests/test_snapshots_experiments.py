"""How the experiments look: the list `E` opens, an experiment's pairs (regressions first, an
improvement, the summary above), and the form `X` opens over runs selected in the list. SVG
snapshots at 160x45 of experiments run by the real engine (scripted models, one pair at a time)
on a clock that steps the same in every test run.

Regenerate after a deliberate change with `--snapshot-update`, and look at the SVGs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import agentor.engine.loop
import agentor.experiments.experiment
import agentor.experiments.record
import agentor.experiments.runner
import agentor.forking
import agentor.session.run
from agentor.engine.models import ModelResponse
from agentor.engine.store.file import FileStore
from agentor.errors import ModelError
from agentor.testing import ScriptedModel
from tests.app_support import SIZE, app_for
from tests.forkkit import Weather, cities, weather_model
from tests.playkit import press
from tests.test_snapshots import SteppingClock

PROMPTS = {
    "oslo": "What is the weather in Oslo?",
    "rome": "What is the weather in Rome?",
    "lisbon": "What is the weather in Lisbon?",
    "tokyo": "What is the weather in Tokyo?",
}


def failing_after_tools() -> ScriptedModel:
    """The weather model, whose endpoint goes away once the tools have answered."""
    weather = weather_model()

    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        if messages[-1]["role"] == "tool":
            raise ModelError("APIConnectionError: Connection refused")
        return weather._next(messages)

    return ScriptedModel(reply, name="weather-model")


def candidate_model() -> ScriptedModel:
    """The weather model, but for Lisbon, where it answers at once that it cannot tell (a
    regression), and for Tokyo, where it says a little more (its answer changed)."""
    weather = weather_model("weather-v2")

    def reply(messages: list[dict[str, Any]]) -> ModelResponse:
        asked = cities(str(messages[-1]["content"])) if messages[-1]["role"] == "user" else []
        if asked == ["Lisbon"]:
            return ScriptedModel.text("I cannot tell.")
        answer = weather._next(messages)
        if answer.text and "Tokyo" in answer.text:
            return ScriptedModel.text(answer.text + " Take an umbrella all the same.")
        return answer

    return ScriptedModel(reply, name="weather-v2")


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Four weather runs and one whose model failed once its tool answered (Lima's); two
    experiments over them: the same agent again, and a new prompt on weather-v2 (Lisbon
    regressed, Tokyo's answer changed, Lima's completed: improved)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    clock = SteppingClock(1796039000.0)
    modules = (agentor.engine.loop, agentor.session.run, agentor.forking)
    experiments = (agentor.experiments.experiment, agentor.experiments.runner)
    for module in (*modules, *experiments, agentor.experiments.record):
        monkeypatch.setattr(module, "time", clock)
    directory = tmp_path / "runs"
    store = FileStore(directory)
    baseline = Weather(store)
    for name, prompt in PROMPTS.items():
        baseline.agent.run(prompt, run_id=f"{name}-run")
    down = Weather(store, failing_after_tools())
    down.agent.run("What is the weather in Lima?", run_id="lima-run")
    chosen = [*(f"{name}-run" for name in PROMPTS), "lima-run"]
    baseline.agent.experiment(chosen, name="the same again", concurrency=1)
    v2 = Weather(store, candidate_model(), instructions="You are a brief weather assistant.")
    v2.agent.experiment(
        chosen,
        name="prompt v2",
        scorers=["same_tools", "output_contains:Sunny"],
        concurrency=1,
    )
    return directory


def test_the_experiments_of_a_store(snap_compare, runs: Path) -> None:
    async def run_before(pilot) -> None:
        await press(pilot, "E")

    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=run_before)


def test_an_experiments_pairs_regressions_first(snap_compare, runs: Path) -> None:
    async def run_before(pilot) -> None:
        await press(pilot, "E")
        await press(pilot, "enter")  # the newest: prompt v2

    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=run_before)


def test_the_experiment_form_over_selected_runs(snap_compare, runs: Path) -> None:
    async def run_before(pilot) -> None:
        run_list = pilot.app.runs_screen.run_list
        for run_id in ("oslo-run", "rome-run"):
            run_list.select(run_id)
            await pilot.press("space")
        await press(pilot, "X")

    assert snap_compare(app_for(runs), terminal_size=SIZE, run_before=run_before)
