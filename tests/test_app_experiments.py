"""Experiments in the TUI: `E` lists the store's experiments, enter shows one's pairs
(regressions first, `s` sorts by each delta and scorer), enter on a pair compares its baseline
and candidate with served and executed results marked; `space` selects runs and `X` starts an
experiment from a form, run here in a worker, its candidates in the list and its pairs coming
in live; one run by another process shows live too; the form says what is wrong in one line
and nothing is written; the same on a PostgreSQL store. Runs are recorded on the tests' fake
OpenAI server with the real openai client; the candidates ask it too."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Select

from agentor import Experiment
from agentor.engine.store.file import FileStore
from agentor.sources.postgres.source import PostgresSource
from tests.app_support import SIZE, OneAgent, app_for, fixed_clock, screen_text, wait_until
from tests.conftest import ROOT, WeatherAgents, weather_text
from tests.experimentkit import prompt_of, prompts, requests_of, script
from tests.openai_server import FakeOpenAI, Reply
from tests.pg_support import PgStores
from tests.playkit import press
from tui.app import RunsApp
from tui.controllers import experiment_reader
from tui.controllers.experiment_reader import ExperimentReader
from tui.text.experiment_rows import REGRESSED_MARK
from tui.widgets.compare_screen import CompareScreen
from tui.widgets.experiment_form import ExperimentForm
from tui.widgets.experiments_screen import ExperimentsScreen
from tui.widgets.pairs_screen import PairsScreen
from tui.widgets.run_list import SELECTED_MARK

CITIES = ("Oslo", "Rome", "Lisbon", "Tokyo", "Lima")


def mixed(request: dict[str, Any]) -> Reply:
    """`mixed-model`: what the baseline did, but for Lisbon, where it cannot tell (a regression);
    `slow-model` answers like `same-model` (its requests are held by the tests' gates)."""
    model = request.get("model")
    if model == "mixed-model":
        if "Lisbon" in prompt_of(request):
            return {"text": "I cannot tell."}
        return script(dict(request, model="same-model"))
    if model == "slow-model":
        return script(dict(request, model="same-model"))
    return script(request)


class GatedOpenAI(FakeOpenAI):
    """The fake server, holding each request of `held_model` until its prompt's city is let
    through (`let(city)`), outside the server's lock: the others are answered meanwhile."""

    held_model = "slow-model"

    def __init__(self) -> None:
        super().__init__(mixed)
        self.gates = {city: threading.Event() for city in CITIES}

    def next_reply(self, request: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
        reply = super().next_reply(request, headers)
        if request.get("model") == self.held_model:
            city = next((c for c in CITIES if c in prompt_of(request)), None)
            if city is not None:
                self.gates[city].wait(30)
        return reply

    def let(self, *cities: str) -> None:
        for city in cities:
            self.gates[city].set()


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The gated server, and the openai client's environment pointing at it (each run's
    recorded agent asks its model through it)."""
    with GatedOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


class Recorded:
    """Five baselines recorded by the weather agent on the fake server (newest first in the
    list: Lima's), in a runs directory."""

    def __init__(self, srv: GatedOpenAI, directory: Path) -> None:
        self.agents = WeatherAgents(srv)
        self.directory = directory
        self.store = FileStore(directory)
        self.agent = self.agents(store=self.store)
        self.runs = {p.split(" ")[-1].rstrip("?"): self.agent.run(p).run_id for p in prompts()}

    def ids(self, *cities: str) -> list[str]:
        return [self.runs[c] for c in cities]


@pytest.fixture
def recorded(srv: GatedOpenAI, tmp_path: Path) -> Recorded:
    return Recorded(srv, tmp_path / "runs")


def logs(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("*.jsonl"))


def experiments_dir(directory: Path) -> Path:
    return directory / ".experiments"


def pairs_screen(app: RunsApp) -> PairsScreen:
    screen = app.screen
    assert isinstance(screen, PairsScreen), f"not the pairs screen: {screen!r}"
    return screen


def rows_text(screen: PairsScreen) -> list[str]:
    pairs = screen.pair_list
    width = pairs.size.width
    return [pairs.render_row(i, width).plain for i in range(pairs.row_count())]


async def read(pilot: Any) -> None:
    """Until the readers' workers are done and what they found is on screen."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


async def open_pairs(pilot: Any, index: int = 0) -> PairsScreen:
    """E, then enter on the `index`-th experiment (newest first)."""
    await pilot.press("E")
    await read(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExperimentsScreen)
    screen.experiment_list.move_cursor(index)
    await pilot.press("enter")
    await read(pilot)
    return pairs_screen(pilot.app)


# -- E: the list, the pairs, sorting, compare --------------------------------------------------


async def test_e_lists_the_experiments_newest_first_and_enter_shows_the_pairs_regressions_first(
    recorded: Recorded,
) -> None:
    runs = list(recorded.runs.values())
    same = await recorded.agent.aexperiment(runs, model="same-model", name="same again")
    mixed_exp = await recorded.agent.aexperiment(
        runs, model="mixed-model", scorers=["same_output", "output_contains:sunny"]
    )
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("E")
        await read(pilot)
        assert isinstance(app.screen, ExperimentsScreen)
        text = screen_text(app)
        assert "Experiments · 2" in text
        lines = [line for line in text.splitlines() if "exp-" in line]
        assert mixed_exp.id in lines[0] and same.id in lines[1], "newest first"
        assert "5/5" in lines[0] and f"1 {REGRESSED_MARK}" in lines[0]
        assert "model mixed-model" in lines[0] and "instructions" not in lines[0]
        assert "same again · model same-model" in lines[1]

        await pilot.press("enter")
        await read(pilot)
        screen = pairs_screen(app)
        assert screen.experiment_id == mixed_exp.id
        text = screen_text(app)
        # The summary, in `agentor experiment show`'s words.
        assert "pairs 5 of 5; completed 5, diverged 0, failed 0 · regressions 1" in text
        assert "scorer same_output: 1 regressed, 0 improved; McNemar b=1 c=0 p=1" in text
        assert "turns    -0.2 a pair (95% CI -0.6 .. +0, 5 pairs)" in text
        assert "sorted: regressions first" in text
        # The pairs: Lisbon's regressed, first; the others as recorded (served, the same).
        rows = rows_text(screen)
        lisbon = recorded.runs["Lisbon"]
        assert rows[0].startswith(REGRESSED_MARK) and lisbon[:8] in rows[0]
        assert "FAIL" in rows[0] and "1→0" in rows[0] and "different" in rows[0]
        assert all(r.startswith(" ") and "pass" in r and "1/0" in r for r in rows[1:])
        # The highlighted pair, whole, below.
        assert f"baseline {lisbon}" in text
        assert "first divergence: turn 1: the model said something else" in text
        await pilot.press("escape")
        assert isinstance(app.screen, ExperimentsScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, ExperimentsScreen)


async def test_s_sorts_the_pairs_by_each_delta_then_each_scorer(recorded: Recorded) -> None:
    runs = list(recorded.runs.values())
    await recorded.agent.aexperiment(
        runs, model="mixed-model", scorers=["same_output", "output_contains:sunny"]
    )
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_pairs(pilot)
        e = screen.experiment
        assert e is not None
        lisbon = recorded.runs["Lisbon"]
        labels = []
        for _ in range(len(screen.sorts)):
            labels.append(str(screen.pair_list.border_subtitle).split(" · ")[0])
            order = [r.baseline for r in screen.pair_list.rows]
            label = labels[-1]
            if label.startswith("sorted: Δtokens"):
                deltas = [screen_pair(e, b).measures.delta("tokens") for b in order]
                assert deltas == sorted(deltas, reverse=True), "largest first"
                assert order[-1] == lisbon, "it spent the fewest tokens"
            if label.startswith("sorted: same_output"):
                assert order[0] == lisbon, "its FAIL first"
            assert screen.pair_list.cursor == 0, "each sort opens at its top"
            await pilot.press("s")
        assert labels == [
            "sorted: regressions first",
            "sorted: Δturns, largest first",
            "sorted: Δtokens, largest first",
            "sorted: Δcost, largest first",
            "sorted: Δlatency, largest first",
            "sorted: same_output, worst first",
            "sorted: output_contains:sunny, worst first",
        ]
        assert str(screen.pair_list.border_subtitle).startswith("sorted: regressions first")


def screen_pair(e: Experiment, baseline: str) -> Any:
    return next(p for p in e.pairs if p.baseline == baseline)


async def test_enter_on_a_pair_compares_baseline_and_candidate_served_and_executed_marked(
    recorded: Recorded,
) -> None:
    # paris-model asks for Paris too: no baseline did; with novel="run" the agent runs it.
    oslo = recorded.runs["Oslo"]
    exp = await recorded.agent.aexperiment([oslo], model="paris-model", novel="run")
    assert recorded.agents.executed[-1] == "Paris"
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_pairs(pilot)
        assert "1/1" in rows_text(screen)[0], "one result served, one executed"
        await press(pilot, "enter")
        compared = app.screen
        assert isinstance(compared, CompareScreen)
        assert [r.run_id for r in compared.runs] == [oslo, exp.pairs[0].candidate]
        text = screen_text(app)
        assert f"served → {weather_text('Oslo')}" in text
        assert f"executed → {weather_text('Paris')}" in text
        await pilot.press("escape")
        assert app.screen is screen


async def test_a_novel_call_refused_is_neither_served_nor_executed(recorded: Recorded) -> None:
    rome = recorded.runs["Rome"]
    executed = len(recorded.agents.executed)
    await recorded.agent.aexperiment([rome], model="paris-model")  # novel calls: error
    assert len(recorded.agents.executed) == executed
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_pairs(pilot)
        assert "1/0" in rows_text(screen)[0]
        assert "served 1, executed 0" in screen_text(app)
        await press(pilot, "enter")
        assert isinstance(app.screen, CompareScreen)
        text = screen_text(app)
        assert f"served → {weather_text('Rome')}" in text
        assert "refused ✗ not in the recording" in text


async def test_experiments_that_cannot_be_read_say_why_in_the_list(recorded: Recorded) -> None:
    experiments_dir(recorded.directory).write_text("not a directory")
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("E")
        await read(pilot)
        text = screen_text(app)
        assert "refusing to use .experiments: it is not a directory" in text
        assert any("Cannot read the experiments" in n.message for n in app._notifications)


# -- space and X: an experiment started here ---------------------------------------------------


async def select(pilot: Any, app: RunsApp, run_ids: list[str]) -> None:
    run_list = app.runs_screen.run_list
    for run_id in run_ids:
        assert run_list.select(run_id)
        await pilot.press("space")
    await pilot.pause()


async def fill_form(pilot: Any, **fields: str) -> ExperimentForm:
    await pilot.press("X")
    await pilot.pause()
    form = pilot.app.screen
    assert isinstance(form, ExperimentForm)
    for name, value in fields.items():
        widget = form.query_one(f"#experiment-{name}")
        if isinstance(widget, Select):
            widget.value = value
        else:
            assert isinstance(widget, Input)
            widget.value = value
    await pilot.pause()
    return form


async def test_space_selects_runs_and_x_starts_an_experiment_whose_pairs_come_in_live(
    recorded: Recorded, srv: GatedOpenAI
) -> None:
    chosen = recorded.ids("Oslo", "Rome", "Lisbon")
    executed = len(recorded.agents.executed)
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        assert "X Experiment" not in screen_text(app)
        await select(pilot, app, chosen)
        run_list = app.runs_screen.run_list
        assert list(run_list.selected) == chosen
        marked = {r.run_id for r in run_list.rows if SELECTED_MARK in row_text(app, r.run_id)}
        assert marked == set(chosen)
        text = screen_text(app)
        assert "3 selected (X: experiment)" in text and "X Experiment" in text
        await select(pilot, app, [recorded.runs["Tokyo"]] * 2)  # selected, then let go
        assert list(run_list.selected) == chosen

        await fill_form(pilot, model="slow-model", scorers="same_output", concurrency="3")
        await pilot.press("ctrl+s")
        screen = await wait_until(
            pilot, lambda: isinstance(app.screen, PairsScreen) and app.screen, what="pairs"
        )
        await wait_until(pilot, lambda: screen.experiment is not None, what="the experiment")
        assert "0 of 3 measured" in screen_text(app)
        assert [r.pair for r in screen.pair_list.rows] == [None] * 3  # pending, all
        # The candidates come in one at a time: the list shows each as it is measured.
        srv.let("Oslo")
        await wait_until(pilot, lambda: "1 of 3 measured" in screen_text(app), what="one pair")
        assert sum(r.pair is not None for r in screen.pair_list.rows) == 1
        srv.let("Rome", "Lisbon")
        await wait_until(pilot, lambda: "Pairs · 3 pairs" in screen_text(app), what="all pairs")
        await wait_until(pilot, lambda: not app.experimenter.running, what="the worker's end")
        await read(pilot)
        text = screen_text(app)
        assert "pairs 3 of 3; completed 3" in text and "regressions 0" in text
        assert any("done: 3 pairs, 0 regressed" in n.message for n in app._notifications)
        assert run_list.selected == {}, "the selection is done with"

    e = Experiment.load(recorded.store, screen.experiment_id)
    assert [p.baseline for p in e.pairs] == chosen
    assert e.definition.model == "slow-model" and e.definition.agent is None
    assert len(recorded.agents.executed) == executed, "no tool ran: every call was served"
    assert len(requests_of(srv, "slow-model")) == 6, "two turns a candidate, asked once"
    # Each candidate is a run of the store, in the list too.
    assert {p.candidate for p in e.pairs} <= {r.run_id for r in app.source.rows()}


def row_text(app: RunsApp, run_id: str) -> str:
    run_list = app.runs_screen.run_list
    index = run_list.index_of(run_id)
    assert index is not None
    return run_list.render_row(index, run_list.size.width).plain


async def test_with_the_apps_agent_novel_calls_run_and_the_pair_says_so(
    recorded: Recorded,
) -> None:
    chosen = recorded.ids("Rome")
    app = app_for(recorded.directory, agents=OneAgent(recorded.agents(store=recorded.store)))
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, chosen)
        form = await fill_form(pilot, model="paris-model", novel="run")
        assert form.values().agent == "Weather Agent", "the app's agent, when it serves the runs"
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not app.experimenter.running, what="the experiment")
        screen = pairs_screen(app)
        await read(pilot)
        assert "1/1" in rows_text(screen)[0]
    assert recorded.agents.executed[-1] == "Paris"
    e = Experiment.load(recorded.store, screen.experiment_id)
    assert e.definition.agent == "Weather Agent" and e.definition.novel == "run"
    assert e.pairs[0].measures is not None and e.pairs[0].measures.executed == 1


async def test_x_with_no_run_selected_says_how_to_select_some(recorded: Recorded) -> None:
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("X")
        await pilot.pause()
        assert not isinstance(app.screen, ExperimentForm)
        assert any("space selects runs" in n.message for n in app._notifications)


async def test_the_form_says_what_is_wrong_in_one_line_and_nothing_is_written(
    recorded: Recorded, tmp_path: Path
) -> None:
    before = logs(recorded.directory)
    # A run that never ended (its process died before its first step): not replayable.
    recorded.store.append("cut-short", recorded.store.load(recorded.runs["Oslo"])[0])
    chosen = [*recorded.ids("Oslo", "Rome"), "cut-short"]
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        app.runs_screen.watcher.reload()
        await pilot.pause()
        await select(pilot, app, chosen)
        form = await fill_form(pilot)

        async def said(**fields: str) -> str:
            for name, value in fields.items():
                widget = form.query_one(f"#experiment-{name}")
                assert isinstance(widget, Input | Select)
                widget.value = value
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert app.screen is form, "the form stays"
            return str(form.query_one("#experiment-status").render())

        assert "give a model" in await said()
        assert "novel calls run only with the app's agent" in await said(
            model="same-model", novel="run"
        )
        assert "concurrency is a whole number, 1 or more" in await said(
            novel="error", concurrency="0"
        )
        assert "run cut-short is interrupted: an experiment replays runs that ended" in (
            await said(concurrency="2")
        )
        form.runs = tuple(chosen[:2])
        assert "no_such_module does not import" in await said(scorers="no_such_module:f")
        missing = tmp_path / "nope.txt"
        assert f"{missing}: No such file or directory" in await said(
            scorers="same_output", instructions=str(missing)
        )
        await pilot.press("escape")
        assert not isinstance(app.screen, ExperimentForm)
        assert list(app.runs_screen.run_list.selected) == chosen, "still selected"
    assert not experiments_dir(recorded.directory).exists()
    assert logs(recorded.directory) == sorted([*before, "cut-short.jsonl"])


async def test_a_model_that_cannot_be_asked_is_said_and_nothing_is_written(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
    before = logs(recorded.directory)
    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, recorded.ids("Oslo"))
        await fill_form(pilot, model="same-model")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not app.experimenter.running, what="the refusal")
        await pilot.pause()
        told = " ".join(n.message for n in app._notifications)
        assert "Experiment not started: model same-model cannot be used" in told
        assert not isinstance(app.screen, PairsScreen)
    assert not experiments_dir(recorded.directory).exists()
    assert logs(recorded.directory) == before


# -- live: another process ---------------------------------------------------------------------


async def test_an_experiment_another_process_runs_shows_its_pairs_as_they_come(
    recorded: Recorded, srv: GatedOpenAI
) -> None:
    chosen = recorded.ids("Oslo", "Rome", "Lisbon")
    app = RunsApp(recorded.directory, watch=True, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:  # watched: workers that never end
        await pilot.press("E")
        await wait_until(pilot, lambda: "No experiments in this store yet" in screen_text(app))
        command = [
            *(str(Path(sys.executable).parent / "agentor"), "experiment", "run", *chosen),
            *("--store", str(recorded.directory), "--model", "slow-model"),
            *("--concurrency", "1", "--json"),
        ]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        shell = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
        try:
            # The command starts (imports, asks the model) before it writes anything.
            await wait_until(
                pilot, lambda: "0/3" in screen_text(app), timeout=60, what="the experiment"
            )
            await pilot.press("enter")
            screen = await wait_until(
                pilot, lambda: isinstance(app.screen, PairsScreen) and app.screen, what="pairs"
            )
            await wait_until(pilot, lambda: "0 of 3 measured" in screen_text(app), what="none")
            srv.let("Oslo")
            await wait_until(pilot, lambda: "1 of 3 measured" in screen_text(app), what="one")
            srv.let("Rome", "Lisbon")
            await wait_until(pilot, lambda: "Pairs · 3 pairs" in screen_text(app), what="all")
            assert "pairs 3 of 3; completed 3" in screen_text(app)
            assert isinstance(screen.query_one(ExperimentReader), ExperimentReader)
        finally:
            srv.let(*CITIES)
            out, _ = shell.communicate(timeout=60)
    assert shell.returncode == 0 and '"experiment_id"' in out


# -- PostgreSQL --------------------------------------------------------------------------------


async def test_on_postgresql_an_experiment_started_here_is_written_there_and_shown(
    pg_stores: PgStores, srv: GatedOpenAI
) -> None:
    store = pg_stores()
    agents = WeatherAgents(srv)
    agent = agents(store=store)
    runs = [(await agent.arun(p)).run_id for p in prompts()[:2]]
    source = PostgresSource(pg_stores.dsn, schema=pg_stores.schema, clock=fixed_clock)
    app = RunsApp(source, watch=False, clock=fixed_clock)
    async with app.run_test(size=SIZE) as pilot:
        await select(pilot, app, runs)
        await fill_form(pilot, model="mixed-model", scorers="same_output")
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not app.experimenter.running, what="the experiment")
        screen = pairs_screen(app)
        await read(pilot)
        assert "Pairs · 2 pairs" in screen_text(app)
        experiment_id = screen.experiment_id
        await pilot.press("escape")
        await pilot.press("E")
        await read(pilot)
        assert experiment_id in screen_text(app) and "2/2" in screen_text(app)
    e = Experiment.load(store, experiment_id)
    assert sorted(p.baseline for p in e.pairs) == sorted(runs)
    assert all(store.load(p.candidate) for p in e.pairs), "the candidates are runs there"


# -- re-reads: the intervals at most every INTERVALS_EVERY_S while pairs are pending ------------


class SteppedMonotonic:
    """The reader's clock: still until the test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_rereads_work_out_the_intervals_at_most_every_few_seconds_never_stale_at_the_end(
    recorded: Recorded, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = SteppedMonotonic()
    monkeypatch.setattr(experiment_reader, "time", clock)
    monkeypatch.setattr(experiment_reader, "INTERVALS_EVERY_S", 0.05)  # the trailing read's wait
    runs = recorded.ids("Oslo", "Rome", "Lisbon", "Tokyo")
    done = await recorded.agent.aexperiment(
        runs, model="mixed-model", scorers=["same_output"], concurrency=1
    )
    path = experiments_dir(recorded.directory) / f"{done.id}.jsonl"
    definition, *pairs = path.read_text().splitlines(keepends=True)
    path.write_text(definition + "".join(pairs[:2]))  # two pairs measured, two pending

    def add_pair(i: int) -> None:
        with path.open("a") as f:
            f.write(pairs[i])

    app = app_for(recorded.directory)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_pairs(pilot)
        assert "pairs 2 of 4 (2 pending)" in screen_text(app)
        assert "regressions 0" in screen_text(app) and "2 pairs)" in screen_text(app)

        add_pair(2)  # within the interval's time: the counts now, the intervals later
        screen.experiment_changed()
        await wait_until(pilot, lambda: "pairs 3 of 4 (1 pending)" in screen_text(app))
        text = screen_text(app)
        assert "regressions 1" in text, "Lisbon's, counted at once"
        assert "intervals of 2 pairs, updating" in text and "2 pairs)" in text
        assert screen.experiment is not None and "summary" not in vars(screen.experiment)

        clock.now += 10  # due: the pairs stopped coming, a read follows that works them out
        await wait_until(pilot, lambda: "updating" not in screen_text(app), what="the trail")
        assert "3 pairs)" in screen_text(app)

        add_pair(3)  # the last: worked out at once, however soon
        screen.experiment_changed()
        await wait_until(pilot, lambda: "Pairs · 4 pairs" in screen_text(app))
        text = screen_text(app)
        assert "4 pairs)" in text and "updating" not in text
        assert screen.experiment.summary == Experiment.load(recorded.store, done.id).summary


def test_a_delta_too_small_to_show_reads_as_none_not_minus_zero() -> None:
    """A latency 0.4 ms shorter shows `0` (dim), as no change does, not `-0ms`; 12 ms shows."""
    from agentor.experiments.experiment import Pair
    from agentor.experiments.measures import PairMeasures
    from tui.text.experiment_rows import PairRow, pair_columns, pair_line

    def line(latency: tuple[float, float]) -> str:
        m = PairMeasures(
            status=("completed", "completed"), output_changed=False, output_json_equal=None,
            tools="same", first_divergence=None, turns=(2, 2), tokens=(10, 10),
            cost=(None, None), latency=latency, served=1, executed=0,
        )  # fmt: skip
        pair = Pair("a" * 32, "b" * 32, m.status, m, (), None, False, False)
        return pair_line(PairRow(pair.baseline, pair.candidate, pair), pair_columns(160, [])).plain

    assert "-0ms" not in line((1.0, 0.9996)) and " 0 " in line((1.0, 0.9996))
    assert "-12ms" in line((1.0, 0.988))
