"""A generation records the whole request the model was sent: its messages, and the tools
offered and the model's settings, written once per segment on the run_start (`tools`,
`settings`) and named from each generation by their digest (`config`)."""

from __future__ import annotations

from pathlib import Path

from agentor import Agentor
from agentor.engine.events import GENERATION, RUN_START
from agentor.engine.request import config_digest
from agentor.engine.store.file import FileStore
from agentor.testing import ScriptedModel
from tests.conftest import WeatherAgents, crash_after_tool_result, log_lines
from tests.openai_server import FakeOpenAI

SECRET = "hdr-secret-7f3a9c"


def test_a_segment_records_the_tools_and_settings_sent_once_and_each_generation_names_them(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    agent = weather_agent(
        store=store, temperature=0.2, seed=7, extra_headers={"X-Team-Key": SECRET}
    )
    result = agent.run("What is the weather in Oslo?")
    lines = log_lines(store.path(result.run_id))
    start, gens = lines[0], [d for d in lines if d["type"] == GENERATION]

    sent = fake_openai.requests
    assert len(sent) == len(gens) == 2
    # What was sent is what the log says was sent.
    assert start["tools"] == sent[0]["tools"] == sent[1]["tools"]
    assert [t["function"]["name"] for t in start["tools"]] == ["get_weather"]
    assert (sent[0]["temperature"], sent[0]["seed"]) == (0.2, 7)
    assert start["settings"] == {
        "temperature": 0.2,
        "seed": 7,
        "extra_headers": {"X-Team-Key": "***"},  # header values may be credentials
    }
    assert start["config"] == config_digest(start["tools"], start["settings"])
    assert [g["config"] for g in gens] == [start["config"]] * 2
    # Written once: no other line repeats the schemas or the settings.
    assert [d["type"] for d in lines if "tools" in d or "settings" in d] == [RUN_START]
    assert SECRET not in store.path(result.run_id).read_text()
    # Loading keeps them, and writes them back unchanged.
    loaded = store.load(result.run_id)
    assert loaded[0].tools == start["tools"] and loaded[0].settings == start["settings"]
    assert [e.to_dict() for e in loaded if e.type != GENERATION] == [
        d for d in lines if d["type"] != GENERATION
    ]


def test_a_resume_records_the_config_of_its_own_segment(
    tmp_path: Path, fake_openai: FakeOpenAI, weather_agent: WeatherAgents
) -> None:
    store = FileStore(tmp_path)
    first = weather_agent(store=store, temperature=0.2).run("What is the weather in Oslo?")
    crash_after_tool_result(store.path(first.run_id))
    resumed = weather_agent(store=store, temperature=0.9, tools=[]).resume(first.run_id)
    assert resumed.status == "completed"
    lines = log_lines(store.path(first.run_id))
    starts = [d for d in lines if d["type"] == RUN_START]
    assert [s["settings"] for s in starts] == [{"temperature": 0.2}, {"temperature": 0.9}]
    assert starts[0]["config"] != starts[1]["config"]
    segment_of = []
    segment = -1
    for d in lines:
        segment += d["type"] == RUN_START
        if d["type"] == GENERATION:
            segment_of.append((segment, d["config"]))
    assert segment_of == [(0, starts[0]["config"]), (1, starts[1]["config"])]
    assert fake_openai.requests[-1]["temperature"] == 0.9


def test_a_model_without_settings_records_the_tools_and_no_settings(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    model = ScriptedModel([ScriptedModel.text("Hi.")])
    result = Agentor("Plain", model=model, store=store).run("Hello?")
    start, gen = log_lines(store.path(result.run_id))[:2]
    assert start["tools"] == [] and "settings" not in start
    assert gen["config"] == start["config"] == config_digest([], None)


def test_settings_that_are_not_json_are_recorded_as_text_and_the_run_is_saved(
    tmp_path: Path,
) -> None:
    class Odd:
        def __repr__(self) -> str:
            return "Odd()"

        __str__ = __repr__

    model = ScriptedModel([ScriptedModel.text("Hi.")])
    model.settings = {"temperature": 0.5, "sampler": Odd(), "stop": ("\n",)}
    result = Agentor("Plain", model=model, store=FileStore(tmp_path)).run("Hello?")
    assert result.save_failures == 0 and result.status == "completed"
    start = log_lines(FileStore(tmp_path).path(result.run_id))[0]
    assert start["settings"] == {"temperature": 0.5, "sampler": "Odd()", "stop": ["\n"]}
