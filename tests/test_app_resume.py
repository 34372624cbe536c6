"""`r` resumes a run in this process; `x` and `q` stop it; every refusal is a notification."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

from agentor.agents import AgentSet
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from examples.demo_model import DemoModel
from examples.weather import build_agent
from tests.app_support import (
    IDS,
    SAMPLE_MANIFEST,
    SIZE,
    FailingModel,
    GatedModel,
    OneAgent,
    app_for,
    copy_fixtures,
    copy_samples,
    notifications,
    row_statuses,
    screen_text,
    text_reply,
    told,
    wait_until,
    weather_agent,
    write_log,
)
from tests.conftest import ROOT, log_types

VIENNA = IDS["crash_after_tool_result"]
PRAGUE = IDS["half_finished_crash"]


def last_segment(path: Path) -> list[str]:
    types = log_types(path)
    start = len(types) - 1 - types[::-1].index("run_start")
    return types[start:]


async def resume_completed(pilot, app, run_id: str) -> None:
    """Until the run shows completed and the resume worker has ended (and so has told of it:
    the file can show the end before the worker's notification)."""
    await wait_until(
        pilot,
        lambda: row_statuses(app)[run_id] == "completed" and not app.resumer.running,
        what="the resume to complete",
    )


async def start_resume(pilot, app, run_id: str) -> None:
    assert app.runs_screen.run_list.select(run_id)
    await pilot.pause()
    await pilot.press("r")


async def test_resume_streams_its_events_into_the_timeline_and_completes(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = GatedModel([text_reply("Vienna is sunny, 22C.")], partial="Vienna is").hold(0)
    executed: list[str] = []
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model, executed)))
    before = (runs / f"{VIENNA}.jsonl").read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await wait_until(pilot, lambda: model.waiting.is_set(), what="the model request")
        await pilot.pause()
        # While the model streams, the streamed text shows. The new segment's run_start is
        # saved with its first step (the generation): nothing is in the file yet.
        assert app.resumer.run_id == VIENNA
        assert FileStore(runs).is_locked(VIENNA)
        assert "▍ resuming 2dfade51 Vienna is" in screen_text(app)
        assert (runs / f"{VIENNA}.jsonl").read_bytes() == before
        model.gate.set()
        await resume_completed(pilot, app, VIENNA)
        await pilot.pause()
        assert len(app.runs_screen.timeline.run_log) == 8
        assert app.runs_screen.timeline.cursor == 7
        screen = screen_text(app)
        assert "▶ resumed · segment 2" in screen  # the new run_start is in the timeline
        assert "completed · Vienna is sunny, 22C." in screen
        assert "Run 2dfade51 completed: Vienna is sunny, 22C." in notifications(app)
        assert not app.runs_screen.stream_line.display
    # The tool's saved result was enough: it did not run again; one model request was made.
    assert executed == [] and len(model.requests) == 1
    assert last_segment(runs / f"{VIENNA}.jsonl") == [
        "run_start",
        "generation",
        "message",
        "run_end",
    ]


async def test_resume_rewinds_a_half_finished_run(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = ScriptedModel([])
    model.replies = [model.calls(("get_weather", {"city": "Prague"})), text_reply("Sunny.")]
    executed: list[str] = []
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model, executed)))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, PRAGUE)
        await resume_completed(pilot, app, PRAGUE)
        await pilot.pause()
        assert "get_weather → The weather in Prague is sunny and 22C." in screen_text(app)
    assert executed == ["Prague"]


async def test_a_sample_crash_inside_a_tool_is_finished_by_the_offline_demo_model(
    tmp_path: Path,
) -> None:
    runs = copy_samples(tmp_path / "runs")
    run_id = SAMPLE_MANIFEST["crashed_inside_tool"]["run_id"]
    agent = build_agent(store=FileStore(runs), model=DemoModel(word_delay=0))
    app = app_for(runs, agents=AgentSet([agent]))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, run_id)
        await resume_completed(pilot, app, run_id)
        await pilot.pause()
        assert "▶ resumed · segment 2" in screen_text(app)
        assert any(n.startswith("Run 999cfea9 completed: ") for n in notifications(app))


async def test_a_completed_run_is_refused_as_already_completed(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = ScriptedModel([])
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, IDS["completed"])
        await pilot.pause()
        assert "Run 32e80341 is already completed." in notifications(app)
        assert app.resumer.worker is None and model.requests == []


async def test_without_an_agent_the_refusal_says_how_to_pass_one(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    app = app_for(runs, agents=None)
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await pilot.pause()
        assert any("--agent path/to/file.py:name" in n for n in notifications(app))
    app = app_for(runs, agents=OneAgent(None))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await pilot.pause()
        assert "No agent for 'Travel Agent': pass --agent path/to/file.py:name" in (
            notifications(app)
        )
        assert row_statuses(app)[VIENNA] == "interrupted"


async def test_a_run_locked_by_another_process_is_refused_naming_the_pid(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from agentor.engine.store.file import FileStore\n"
            "held = FileStore(sys.argv[1]).lock(sys.argv[2])\n"
            "held.__enter__()\n"
            "print('locked', flush=True)\n"
            "time.sleep(60)\n",
            str(runs),
            VIENNA,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "locked\n"
        model = ScriptedModel([])
        app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            assert row_statuses(app)[VIENNA] == "running"
            await start_resume(pilot, app, VIENNA)
            expected = f"Run 2dfade51 is locked by process {holder.pid}: it is being run or "
            await wait_until(
                pilot,
                lambda: any(n.startswith(expected) for n in notifications(app)),
                what="the refusal",
            )
            assert model.requests == []
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


async def test_a_failing_model_endpoint_is_reported_and_the_run_stays_resumable(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    failing = FailingModel("APIConnectionError: Connection error.")
    app = app_for(runs, agents=OneAgent(weather_agent(runs, failing)))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await wait_until(pilot, lambda: row_statuses(app)[VIENNA] == "failed", what="failed")
        await pilot.pause()
        assert any(
            n.startswith("Run 2dfade51 ended failed: APIConnectionError: Connection error.")
            and "r tries again" in n
            for n in notifications(app)
        )
        # The endpoint is back: the same key finishes the run.
        app.resumer.agents = OneAgent(weather_agent(runs, ScriptedModel([text_reply("Fine now.")])))
        await pilot.press("r")
        await wait_until(pilot, lambda: row_statuses(app)[VIENNA] == "completed", what="done")


async def test_x_stops_the_resume_and_leaves_the_run_interrupted(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = GatedModel([text_reply("Too late.")], partial="Thinking").hold(0)
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    before = (runs / f"{VIENNA}.jsonl").read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await wait_until(pilot, lambda: model.waiting.is_set(), what="the model request")
        await pilot.press("r")  # a second resume while one runs is refused
        assert "Already resuming 2dfade51: x stops it." in notifications(app)
        await pilot.press("x")
        await wait_until(pilot, lambda: row_statuses(app)[VIENNA] == "interrupted", what="stop")
        assert any(n.startswith("Stopped resuming 2dfade51") for n in notifications(app))
        assert not FileStore(runs).is_locked(VIENNA)
        # Stopped before it had a step to record: no empty segment, the log is as it was.
        assert (runs / f"{VIENNA}.jsonl").read_bytes() == before
        # x again: nothing is running now, and it says so.
        await pilot.press("x")
        assert notifications(app)[-1] == (
            "No resume is running: x stops a resume started here with r."
        )


async def test_quitting_during_a_resume_leaves_the_run_interrupted(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = GatedModel([text_reply("Too late.")]).hold(0)
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    before = (runs / f"{VIENNA}.jsonl").read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await wait_until(pilot, lambda: model.waiting.is_set(), what="the model request")
        assert FileStore(runs).is_locked(VIENNA)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0
    assert not FileStore(runs).is_locked(VIENNA)
    assert (runs / f"{VIENNA}.jsonl").read_bytes() == before  # nothing to record, none written


def test_the_app_does_not_import_openai() -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tui.app import RunsApp\n"
        "RunsApp(Path('.'), watch=False)\n"
        "assert 'openai' not in sys.modules, 'openai was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


async def test_resume_writes_into_the_directory_on_screen_whatever_the_agents_store(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    elsewhere = tmp_path / "elsewhere"
    model = ScriptedModel([text_reply("Vienna is sunny.")])
    agent = weather_agent(elsewhere, model)
    app = app_for(runs, agents=AgentSet([agent]))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await resume_completed(pilot, app, VIENNA)
    assert last_segment(runs / f"{VIENNA}.jsonl")[-1] == "run_end"
    assert agent.store.list_runs() == []  # the module's own store was not touched


class DiskFullStore(FileStore):
    """The directory's store with a disk that fills up: its `fail_on`-th write (1-based) of
    events raises ENOSPC, as `os.write` does on a full disk; the other writes go through."""

    def __init__(self, directory: Path, fail_on: int) -> None:
        super().__init__(directory)
        self.fail_on = fail_on
        self.calls = 0

    def append_many(self, run_id, events):
        self.calls += 1
        if self.calls == self.fail_on:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().append_many(run_id, events)


async def test_a_resume_whose_events_could_not_all_be_saved_says_so_and_marks_the_run(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = ScriptedModel([text_reply("Vienna is sunny, 22C.")])
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    # The resume's writes: run_start with the generation, then the message (lost), then
    # run_end.
    app.resumer.store = DiskFullStore(runs, fail_on=2)
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await wait_until(pilot, lambda: not app.resumer.running, what="the resume to end")
        await pilot.pause()
        assert app.resumer.store.calls >= 3  # the engine carried on after the failed write
        expected = (
            "Run 2dfade51 ended completed, but 1 write of its events to the log failed (see "
            "the agentor log): those events could not be saved, and the run may not be "
            "resumable from its file."
        )
        assert expected in notifications(app)
        assert not any(n.startswith("Run 2dfade51 completed:") for n in notifications(app))
        # The row says so, and keeps saying so for the session: through a refresh of the
        # list, a filter that hides it and the filter cleared again.
        line = next(x for x in screen_text(app).splitlines() if "2dfade51" in x)
        assert "⚠ unsaved" in line
        app.runs_screen.show_rows()
        await pilot.press("slash", *"prague", "enter")
        await pilot.pause()
        assert "2dfade51" not in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        line = next(x for x in screen_text(app).splitlines() if "2dfade51" in x)
        assert "⚠ unsaved" in line
        # Other runs carry no mark.
        assert sum("⚠ unsaved" in x for x in screen_text(app).splitlines()) == 1
    # What the file holds lacks the lost message: the mark is the only one who knows.
    assert last_segment(runs / f"{VIENNA}.jsonl") == ["run_start", "generation", "run_end"]


async def test_a_resume_that_saved_everything_is_not_marked(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = ScriptedModel([text_reply("Vienna is sunny, 22C.")])
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await resume_completed(pilot, app, VIENNA)
        await pilot.pause()
        assert "⚠ unsaved" not in screen_text(app)
        assert app.runs_screen.run_list.marks == {}


async def test_two_apps_pressing_r_on_the_same_run_resume_it_once(tmp_path: Path) -> None:
    """Two TUIs on one directory (two apps, each with its own FileStore, so their locks are
    separate open files as between processes): the first resumes, the second is refused
    naming the holder; one new segment, the tool runs once."""
    runs = copy_fixtures(tmp_path / "runs")
    executed: list[str] = []
    first = GatedModel([]).hold(0)
    first.replies = [first.calls(("get_weather", {"city": "Prague"})), text_reply("Sunny.")]
    second = ScriptedModel([])
    second.replies = [second.calls(("get_weather", {"city": "Prague"})), text_reply("Sunny.")]
    app_a = app_for(runs, agents=OneAgent(weather_agent(runs, first, executed)))
    app_b = app_for(runs, agents=OneAgent(weather_agent(runs, second, executed)))
    starts_before = log_types(runs / f"{PRAGUE}.jsonl").count("run_start")
    async with app_a.run_test(size=SIZE) as pilot_a, app_b.run_test(size=SIZE) as pilot_b:
        await start_resume(pilot_a, app_a, PRAGUE)
        await wait_until(pilot_a, lambda: first.waiting.is_set(), what="A's model request")
        assert FileStore(runs).lock_holder(PRAGUE) == os.getpid()

        await start_resume(pilot_b, app_b, PRAGUE)
        expected = f"Run b9ba499c is locked by process {os.getpid()}: it is being run or "
        await wait_until(
            pilot_b,
            lambda: any(n.startswith(expected) for n in notifications(app_b)),
            what="B's refusal",
        )
        await wait_until(pilot_b, lambda: not app_b.resumer.running, what="B's worker to end")
        assert second.requests == []  # B never reached the model (nor, so, the tool)
        assert app_b.is_running and app_b.return_code is None  # no crash

        first.gate.set()
        await wait_until(
            pilot_a, lambda: row_statuses(app_a)[PRAGUE] == "completed", what="A's end"
        )
        # The file can show the end before A's worker has told of it.
        await wait_until(
            pilot_a,
            lambda: any(
                n.startswith("Run b9ba499c completed: Sunny.") for n in notifications(app_a)
            ),
            what="A's notification",
        )
        # B sees the run completed once it looks again, and `r` now says so.
        app_b.watcher.refresh_run(PRAGUE, liveness=True)
        await wait_until(
            pilot_b, lambda: row_statuses(app_b)[PRAGUE] == "completed", what="B's view"
        )
        await pilot_b.press("r")
        await wait_until(
            pilot_b,
            lambda: "Run b9ba499c is already completed." in notifications(app_b),
            what="B's refusal of a completed run",
        )
    assert executed == ["Prague"]
    types = log_types(runs / f"{PRAGUE}.jsonl")
    assert types.count("run_start") == starts_before + 1
    assert last_segment(runs / f"{PRAGUE}.jsonl")[-1] == "run_end"


async def test_r_pressed_twice_at_once_resumes_once_and_says_so(tmp_path: Path) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    model = ScriptedModel([text_reply("Vienna is sunny.")])
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    said = told(app)
    async with app.run_test(size=SIZE) as pilot:
        assert app.runs_screen.run_list.select(VIENNA)
        await pilot.pause()
        row = app.runs_screen.run_list.current
        # Two presses handled back to back: the first worker has not begun when the second
        # one is handled.
        app.resumer.start(row)
        app.resumer.start(row)
        await resume_completed(pilot, app, VIENNA)
        # Said (the end's note took its place since: a newer note about the resume).
        assert "Already resuming 2dfade51: x stops it." in said
    assert len(model.requests) == 1
    assert log_types(runs / f"{VIENNA}.jsonl").count("run_start") == 2


async def test_an_agent_of_another_name_is_refused_unless_any_agent_is_given(
    tmp_path: Path,
) -> None:
    runs = copy_fixtures(tmp_path / "runs")
    before = (runs / f"{VIENNA}.jsonl").read_bytes()
    model = ScriptedModel([text_reply("Vienna is sunny.")])
    agent = weather_agent(runs, model)
    agent.name = "UX Agent"
    app = app_for(runs, agents=AgentSet([agent]))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await pilot.pause()
        assert notifications(app)[-1] == (
            "this run was written by Travel Agent; --agent gives UX Agent (start agentor-tui "
            "with --any-agent to resume it with that agent anyway)"
        )
        assert app.resumer.worker is None
    assert model.requests == [] and (runs / f"{VIENNA}.jsonl").read_bytes() == before

    app = app_for(runs, agents=AgentSet([agent], any_agent=True))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, VIENNA)
        await resume_completed(pilot, app, VIENNA)
    starts = [e for e in FileStore(runs).load(VIENNA) if e.type == "run_start"]
    assert [s.agent for s in starts] == ["Travel Agent", "UX Agent"]


async def test_resuming_a_log_without_a_prompt_says_there_is_nothing_to_resume(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    path = write_log(
        runs,
        "no-prompt",
        [{"type": "run_start", "agent": "Travel Agent", "model": "scripted", "ts": 1.0}],
    )
    before = path.read_bytes()
    model = ScriptedModel([])
    app = app_for(runs, agents=OneAgent(weather_agent(runs, model)))
    async with app.run_test(size=SIZE) as pilot:
        await start_resume(pilot, app, "no-prompt")
        await wait_until(pilot, lambda: not app.resumer.running, what="the resume to end")
        assert notifications(app) == [
            "Nothing to resume in no-prompt: no prompt recorded (its run_start holds no messages)."
        ]
    assert model.requests == [] and path.read_bytes() == before
